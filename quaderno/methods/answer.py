"""What every method returns: the answer span, its explanation, and how it was reached."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from quaderno.gate.decision import GateDecision
from quaderno.index.hits import Hit
from quaderno.llm.trace import Trace
from quaderno.methods.details import MethodDetails, PagerDetails
from quaderno.methods.page import Page


class Evidence(BaseModel):
    """A retrieved chunk as shown to the LLM, with where it came from."""

    chunk_id: str
    kb: str
    title: str
    text: str
    score: float
    query: str

    @classmethod
    def of(cls, hit: Hit, query: str) -> Evidence:
        return cls(chunk_id=hit.chunk.id, kb=hit.chunk.kb, title=hit.chunk.title,
                   text=hit.chunk.text, score=hit.score, query=query)


class Answer(BaseModel):
    """A method's answer: the short span, a longer explanation, and how it was reached."""

    question: str
    answer: str
    explanation: str = ""
    method: str
    details: MethodDetails | None = None
    # the knowledge representation the final answer was generated from, as the LLM saw it:
    # the page, the notes, or the documents (what DIG and the quality judge measure)
    context: str = ""
    supporting_sections: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    retrieval_rounds: list[list[str]] = Field(default_factory=list)
    trace: Trace = Field(default_factory=Trace)
    # a retrieve-or-not gate's decision when one stood in front of the method (CCSK)
    gate: GateDecision | None = None

    @property
    def page(self) -> Page | None:
        """PAGER's page, when the method built one."""
        return self.details.page if isinstance(self.details, PagerDetails) else None

    def summary(self) -> dict[str, Any]:
        return {"answer": self.answer, "method": self.method, **self.trace.summary()}
