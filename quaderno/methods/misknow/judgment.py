"""The reasoner's missing-knowledge judgment (Fig. 4): a typed record read tolerantly.

Weak or careless models write ``"judge": "yes"``, a string where a list belongs, no
``judge`` at all, or prose around the JSON; each is read as the checklist recommends
(REC A9): ``judge`` accepts booleans and yes/no/true/false/missing/sufficient words, and when
it is absent it is inferred from a non-empty ``query``; a string becomes a one-item list.
What cannot be read at all is a :class:`~quaderno.errors.StepError` from the step, and the
method then skips round 2 (REC A8). Where the reasoning comes from (REC A10) is decided by
:func:`reasoning_of`.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator

from quaderno.llm.parsing import strip_thinking

_TRUE = {"true", "yes", "y", "1", "missing", "insufficient", "needed", "required"}
_FALSE = {"false", "no", "n", "0", "sufficient", "complete", "none", "not missing"}
_THINK = re.compile(r"<think>(.*?)(?:</think>|\Z)", re.S | re.I)


_ITEMS = {"maxItems": 5, "items": {"type": "string", "maxLength": 150}}


class Judgment(BaseModel):
    # the maxLength / maxItems bounds only shape constrained decoding (a grammar keeps a small
    # model from writing until max_tokens); replies are never refused for exceeding them
    thought: str = Field("", description="Analysis of the correctness and relevance of the "
                                         "retrieved context",
                         json_schema_extra={"maxLength": 600})
    judge: bool | None = Field(None, description="Whether the knowledge is missing")
    missing_knowledge: list[str] = Field(default_factory=list,
                                         description="List of the missing knowledge points",
                                         json_schema_extra=_ITEMS)
    query: list[str] = Field(default_factory=list, description="List of queries corresponding "
                                                               "to the missing knowledge",
                             json_schema_extra=_ITEMS)

    @field_validator("judge", mode="before")
    @classmethod
    def _judge(cls, value: Any) -> Any:
        if isinstance(value, str):
            word = value.strip().strip(".").lower()
            if word in _TRUE:
                return True
            if word in _FALSE:
                return False
            raise ValueError(f"judge must say whether knowledge is missing, got {value!r}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return bool(value)
        return value

    @field_validator("thought", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        if isinstance(value, list):
            return " ".join(str(v) for v in value)
        return "" if value is None else value

    @field_validator("missing_knowledge", "query", mode="before")
    @classmethod
    def _items(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return [value] if value.strip() else []
        if isinstance(value, list):
            return [v if isinstance(v, str) else str(v) for v in value if v is not None]
        return value

    @model_validator(mode="after")
    def _clean(self) -> Judgment:
        self.query = [" ".join(q.split()) for q in self.query if q.strip()]
        self.missing_knowledge = [" ".join(k.split()) for k in self.missing_knowledge
                                  if k.strip()]
        if self.judge is None:  # absent: knowledge is missing when queries were written
            self.judge = bool(self.query)
        return self

    @property
    def missing(self) -> bool:
        return bool(self.judge)


def reasoning_of(raw: str, reasoning: str | None) -> tuple[str, str]:
    """The reasoning content and where it came from: the server's ``reasoning_content``
    (DeepSeek-R1, vLLM's reasoning parsers), else a ``<think>`` block, else the text before
    the JSON (a non-reasoning model's analysis), else nothing."""
    if reasoning and reasoning.strip():
        return reasoning.strip(), "reasoning_content"
    think = _THINK.search(raw or "")
    if think and think.group(1).strip():
        return think.group(1).strip(), "think"
    text = strip_thinking(raw or "")
    cut = min((i for i in (text.find("```"), text.find("{")) if i >= 0), default=-1)
    before = text[:cut].strip() if cut > 0 else ""
    return (before, "text before the JSON") if before else ("", "none")


def shorten(text: str, max_words: int) -> str:
    """``text`` on one line, cut from the middle to at most ``max_words`` words (REC A10's
    1,536-token budget, counted in words)."""
    words = text.split()
    if len(words) <= max_words:
        return " ".join(words)
    half = max_words // 2
    return " ".join(words[:half] + ["…"] + words[len(words) - (max_words - half):])
