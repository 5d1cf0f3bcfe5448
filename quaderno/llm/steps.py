"""Typed LLM steps: declare once, run anywhere.

A :class:`Step` says *what* an LLM step does — its instruction (a template over named
inputs), and its output: a pydantic model (JSON) or a text parser. The adapter here does
the *how*, in one place for every method: render the prompt, constrain decoding where the
backend can (JSON schema → grammar / ``response_format``), parse tolerantly, validate,
re-ask once with the error when the reply is unusable, and fail with :class:`StepError`.

    class Judgment(BaseModel):
        judge: bool
        query: str = ""

    JUDGE = Step(name="judge", instruction="Question: {question}\\nDraft: {draft}\\n...",
                 inputs=("question", "draft"), output=Judgment)
    result = await JUDGE.run(lm, question=q, draft=d, trace=trace)
    result.value.judge
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from quaderno.errors import ConfigError, ParseError, StepError
from quaderno.llm.lm import LM
from quaderno.llm.parsing import parse_model, strip_thinking
from quaderno.llm.trace import Trace
from quaderno.llm.types import Message, TokenLogprob

T = TypeVar("T")

REPAIR = "Your previous reply could not be used: {error}.\n{ask}"
REPAIR_ASK = "Answer again, following the required format exactly{hint}."


def text_output(text: str) -> str:
    text = strip_thinking(text).strip()
    if not text:
        raise ParseError("the reply is empty")
    return text


@dataclass(frozen=True)
class StepResult(Generic[T]):
    value: T
    raw: str
    attempts: int
    repaired: bool
    # the model's reasoning where the server sent it apart (reasoning_content) or in <think>
    reasoning: str | None = None
    # token log-probabilities of ``raw`` when the request asked for them (``logprobs``) and
    # the backend returned them; None otherwise
    logprobs: list[TokenLogprob] | None = None


@dataclass(frozen=True)
class Step(Generic[T]):
    """A declared LLM step.

    ``output``: a pydantic model the reply must validate against (JSON), or ``None`` for
    text, parsed by ``parse`` (default: non-empty text). ``grammar``: a GBNF grammar used
    when the backend supports grammars (for text formats such as outlines).
    ``format_hint``: how the reply must look, appended to the prompt for text outputs.
    ``describe_output``: append the JSON keys of ``output`` to the prompt (turn it off for a
    verbatim paper prompt that already describes its format).
    ``repair``: what the repair re-ask asks for, when "follow the required format exactly"
    is too vague for small models (an answer step: only the answer inside its tag).
    """

    name: str
    instruction: str
    inputs: tuple[str, ...]
    output: type[BaseModel] | None = None
    parse: Callable[[str], Any] | None = None
    grammar: str | None = None
    system: str | None = None
    format_hint: str = ""
    max_tokens: int = 512
    params: dict[str, Any] = field(default_factory=dict)
    describe_output: bool = True
    repair: str = ""

    def __post_init__(self) -> None:
        used = {f for _, f, _, _ in string.Formatter().parse(self.instruction) if f}
        unknown = used - set(self.inputs)
        if unknown:
            raise ConfigError(f"step {self.name!r}: the instruction uses undeclared inputs "
                              f"{sorted(unknown)}")
        if self.output is not None and self.parse is not None:
            raise ConfigError(f"step {self.name!r}: give output or parse, not both")

    # -- rendering ----------------------------------------------------------------------
    def json_schema(self) -> dict[str, Any] | None:
        return self.output.model_json_schema() if self.output is not None else None

    def output_instructions(self) -> str:
        if self.output is None or not self.describe_output:
            return self.format_hint
        lines = ["Reply with only a JSON object with these keys:"]
        for name, info in self.output.model_fields.items():
            kind = _type_name(info.annotation)
            desc = f": {info.description}" if info.description else ""
            lines.append(f"- \"{name}\" ({kind}){desc}")
        return "\n".join(lines)

    def messages(self, inputs: dict[str, Any]) -> list[Message]:
        missing = [name for name in self.inputs if name not in inputs]
        if missing:
            raise ConfigError(f"step {self.name!r} is missing inputs {missing}")
        extra = set(inputs) - set(self.inputs)
        if extra:
            raise ConfigError(f"step {self.name!r} got unknown inputs {sorted(extra)}")
        values = {k: _render_value(v) for k, v in inputs.items()}
        prompt = self.instruction.format(**values)
        hint = self.output_instructions()
        if hint:
            prompt = f"{prompt}\n\n{hint}"
        msgs = [Message(role="system", content=self.system)] if self.system else []
        msgs.append(Message(role="user", content=prompt))
        return msgs

    def _parse(self, text: str) -> Any:
        if self.output is not None:
            return parse_model(text, self.output)
        return (self.parse or text_output)(text)

    # -- running ------------------------------------------------------------------------
    async def run(self, lm: LM, *, trace: Trace | None = None, use_cache: bool = True,
                  grammar: str | None = None, seed: int | None = None, repairs: int = 1,
                  **inputs: Any) -> StepResult[T]:
        """Render, call, parse and validate; ``repairs`` repair re-asks (default one);
        StepError on failure.

        ``grammar`` overrides the declared grammar for this call (e.g. one built from
        the current state, such as a page whose other sections are fixed); ``seed`` the
        LM's seed (a retry that must not replay the same sample, from a server or the cache);
        ``repairs=0`` for a caller whose call budget has room for this one call only.
        """
        if repairs < 0:
            raise ValueError(f"{self.name}: repairs must be 0 or more, got {repairs}")
        messages = self.messages(inputs)
        constrain: dict[str, Any] = {}
        grammar = grammar or self.grammar
        if self.output is not None:
            constrain = {"json_schema": self.json_schema(), "schema_name": self.name}
        elif grammar is not None and lm.supports_grammar:
            constrain = {"grammar": grammar}
        budget = getattr(lm, "step_max_tokens", {}).get(self.name, self.max_tokens)
        params = {"max_tokens": budget, **self.params}
        if seed is not None:
            params["seed"] = seed
        last_error = ""
        raw = ""
        for attempt in range(1, repairs + 2):
            request = lm.request(messages, **params, **constrain)
            response = await lm.chat(request, trace=trace, step=self.name, use_cache=use_cache)
            raw = response.text
            try:
                value = self._parse(raw)
            except ParseError as exc:
                last_error = str(exc)
                if trace is not None:
                    trace.fallback(f"{self.name}: unusable reply ({last_error}); "
                                   + ("re-asked" if attempt <= repairs else "gave up"))
                if attempt > repairs:
                    break
                hint = "" if self.output is None else " (only the JSON object)"
                ask = self.repair or REPAIR_ASK.format(hint=hint)
                messages = [*messages, Message(role="assistant", content=raw[:4000] or "(empty)"),
                            Message(role="user", content=REPAIR.format(error=last_error,
                                                                       ask=ask))]
                continue
            return StepResult(value=value, raw=raw, attempts=attempt, repaired=attempt > 1,
                              reasoning=response.reasoning, logprobs=response.logprobs)
        after = ("after a repair re-ask" if repairs == 1 else
                 f"after {repairs} repair re-asks" if repairs else "and no repair re-ask allowed")
        raise StepError(self.name, f"no valid output {after}: {last_error}",
                        raw=raw, attempts=repairs + 1)


def _render_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json(indent=2)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return str(value)


def _type_name(annotation: Any) -> str:
    names = {str: "string", int: "integer", float: "number", bool: "true/false"}
    if annotation in names:
        return names[annotation]
    origin = getattr(annotation, "__origin__", None)
    if origin is list:
        inner = getattr(annotation, "__args__", (str,))[0]
        return f"list of {names.get(inner, getattr(inner, '__name__', 'item'))}"
    return getattr(annotation, "__name__", str(annotation))
