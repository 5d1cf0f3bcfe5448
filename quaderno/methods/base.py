"""What every QA method returns, the protocol it implements, and shared helpers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from quaderno.errors import StepError
from quaderno.index.hits import Hit
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.steps import Step
from quaderno.llm.trace import Trace
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
    page: Page | None = None
    # the knowledge representation the final answer was generated from, as the LLM saw it:
    # the page, the notes, or the documents (what DIG and the quality judge measure)
    context: str = ""
    supporting_sections: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    retrieval_rounds: list[list[str]] = Field(default_factory=list)
    trace: Trace = Field(default_factory=Trace)

    def summary(self) -> dict[str, Any]:
        return {"answer": self.answer, "method": self.method, **self.trace.summary()}


@runtime_checkable
class Method(Protocol):
    """A question-answering method."""

    name: str

    async def answer(self, question: str, *, trace: Trace | None = None) -> Answer: ...


async def answer_step(step: Step, lm: LM, trace: Trace, **inputs: Any) -> tuple[str, str]:
    """Run an answer step: (short answer, raw reply). A reply without a usable answer falls
    back to its first line, or 'unknown' when empty; both are recorded in the trace."""
    with trace.span("answer", question=inputs.get("question", "")) as span:
        try:
            result = await step.run(lm, trace=trace, **inputs)
            answer, raw = result.value, result.raw
        except StepError as exc:
            raw = exc.raw or ""
            answer = next((ln.strip() for ln in raw.splitlines() if ln.strip()), "")
            trace.fallback("answer had no <answer> tag; took the first line of the reply", span)
            if not answer:
                answer = "unknown"
                trace.fallback("answer was empty; answered 'unknown'", span)
        span.outputs = {"answer": answer}
    return answer, raw


def format_docs(hits: Sequence[Hit]) -> str:
    """Documents as the prompts show them: numbered, title then text."""
    if not hits:
        return "(no documents were retrieved)"
    return "\n\n".join(f"[{i}] {h.chunk.title}\n{h.chunk.text}" if h.chunk.title
                       else f"[{i}] {h.chunk.text}" for i, h in enumerate(hits, start=1))


def retrieve(retriever: Retriever | None, query: str, k: int, trace: Trace,
             rounds: list[list[str]], evidence: list[Evidence]) -> list[Hit]:
    """One traced retrieval; an empty result is recorded as a fallback, not an error."""
    if retriever is None:
        return []
    with trace.span("retrieve", query=query, k=k) as span:
        hits = retriever.retrieve(query, k) if query.strip() else []
        span.outputs = {"chunk_ids": [h.chunk.id for h in hits],
                        "titles": [h.chunk.title for h in hits]}
        if not hits:
            trace.fallback(f"retrieval for {query!r} returned nothing; continuing without "
                           "documents", span)
    rounds.append([h.chunk.id for h in hits])
    evidence.extend(Evidence.of(h, query) for h in hits)
    return hits
