"""The unit of retrieval: a chunk with a stable id, text, title and source metadata."""

from __future__ import annotations

import hashlib
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class KBKind(str, Enum):
    """What a knowledge base holds: passages, or historical question-answer pairs."""

    passage = "passage"
    qa_pair = "qa_pair"
    mixed = "mixed"


class Chunk(BaseModel):
    """One retrievable piece of text.

    ``id`` is stable across rebuilds (derived from the source id and chunk position),
    ``text`` is what is indexed and shown to the LLM.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    text: str
    title: str = ""
    source: str = ""
    kb: str = ""
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def md5(self) -> str:
        return text_md5(self.text)

    def render(self) -> str:
        """Text as shown in prompts: the title on its own line, then the text (FlashRAG style)."""
        return f"{self.title}\n{self.text}" if self.title else self.text


def text_md5(text: str) -> str:
    """MD5 of whitespace-normalized text: the dedup key of the missing-knowledge paper."""
    return hashlib.md5(" ".join(text.split()).encode("utf-8")).hexdigest()
