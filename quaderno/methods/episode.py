"""The state of answering one question, handed to every method.

An :class:`Episode` holds the question, the LM, the retriever and the trace, and collects
what the method found: every retrieval round and the evidence shown to the LLM. Methods
retrieve through :meth:`Episode.retrieve`, which runs the blocking search (embedding,
FAISS, Qdrant, BM25) in a worker thread so that other questions' LLM calls go on, traces
it, and records provenance by itself; :meth:`Episode.finish` builds the :class:`Answer`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from quaderno.errors import StepError
from quaderno.index.hits import Hit
from quaderno.index.retrievers import Retriever, for_kb
from quaderno.llm.lm import LM
from quaderno.llm.steps import Step
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer, Evidence, MethodDetails
from quaderno.methods.span import to_span

_TAGS = re.compile(r"</?answer>", re.I)
NO_DOCS = "(no documents were retrieved)"  # what a prompt shows for no documents


class Episode:
    """One question being answered by one method."""

    def __init__(self, question: str, *, method: str, lm: LM,
                 retriever: Retriever | None = None, trace: Trace | None = None) -> None:
        self.question = question
        self.method = method
        self.lm = lm
        self.retriever = retriever
        self.trace = trace if trace is not None else Trace(label=question)
        self.rounds: list[list[str]] = []
        self.evidence: list[Evidence] = []

    # -- retrieval ------------------------------------------------------------------------
    async def retrieve(self, query: str, k: int, *, kb: str | None = None,
                       cite: bool = True) -> list[Hit]:
        """Top-``k`` hits for ``query`` (from knowledge base ``kb`` only, when given), as one
        traced retrieval round; an empty query or result is a recorded fallback. With
        ``cite=False`` the hits are candidates: only those later passed to :meth:`cite`
        become evidence (what the LLM was shown)."""
        if self.retriever is None:
            return []
        retriever = for_kb(self.retriever, kb) if kb is not None else self.retriever
        inputs: dict[str, Any] = {"query": query, "k": k} | ({"kb": kb} if kb else {})
        with self.trace.span("retrieve", **inputs) as span:
            hits = await asyncio.to_thread(retriever.retrieve, query, k) if query.strip() else []
            span.outputs = {"chunk_ids": [h.chunk.id for h in hits],
                            "titles": [h.chunk.title for h in hits]}
            if not hits:
                self.trace.fallback(f"retrieval for {query!r} returned nothing; continuing "
                                    "without documents", span)
        self.rounds.append([h.chunk.id for h in hits])
        if cite:
            self.cite(hits, query)
        return hits

    def cite(self, hits: Sequence[Hit], query: str) -> None:
        """Record ``hits``, retrieved with ``query``, as evidence shown to the LLM."""
        self.evidence.extend(Evidence.of(h, query) for h in hits)

    # -- the answer step ------------------------------------------------------------------
    async def text_step(self, step: Step, *, default: str = "", **inputs: Any) -> str:
        """Run a text step in a span of its name: its stripped reply, or ``default`` when the
        step gives nothing usable (recorded) — the intermediate steps of a method."""
        with self.trace.span(step.name) as span:
            try:
                out = (await step.run(self.lm, trace=self.trace, **inputs)).value.strip()
            except StepError as exc:
                out = ""
                self.trace.fallback(f"{step.name} unusable ({exc})", span)
            span.outputs = {"text": out or default}
        return out or default

    async def answer_step(self, step: Step, *, span_only: bool = True,
                          **inputs: Any) -> tuple[str, str]:
        """Run an answer step: (short answer, raw reply). A reply without a usable answer
        falls back to its first line, or 'unknown' when empty; both are recorded. With
        ``span_only`` a tagged answer is reduced to the span benchmarks score (:mod:`.span`:
        "Yes, both are plants." → "yes"), the rules used recorded in the span's outputs."""
        with self.trace.span("answer", question=inputs.get("question", "")) as span:
            tagged = False
            try:
                result = await step.run(self.lm, trace=self.trace, **inputs)
                answer, raw, tagged = result.value, result.raw, True
            except StepError as exc:
                raw = exc.raw or ""
                answer = first_line(raw)
                self.trace.fallback("answer had no <answer> tag; took the first line of the "
                                    "reply", span)
                if not answer:
                    answer = "unknown"
                    self.trace.fallback("answer was empty; answered 'unknown'", span)
            outputs: dict[str, Any] = {"answer": answer}
            if span_only and tagged:
                short, rules = to_span(self.question, answer)
                if rules:
                    outputs = {"answer": short, "tagged": answer, "span_rules": rules}
                    answer = short
            span.outputs = outputs
        return answer, raw

    # -- the result -----------------------------------------------------------------------
    def finish(self, answer: str, *, explanation: str = "", context: str = "",
               details: MethodDetails | None = None,
               supporting_sections: Sequence[str] = ()) -> Answer:
        """The method's :class:`Answer`, with this episode's provenance and trace."""
        return Answer(question=self.question, answer=answer, explanation=explanation,
                      method=self.method, details=details, context=context,
                      supporting_sections=list(supporting_sections),
                      evidence=list(self.evidence), retrieval_rounds=list(self.rounds),
                      trace=self.trace)


def first_line(reply: str) -> str:
    """An untagged reply's answer: its first non-empty line without tag markup ("David
    Weissman <answer></answer>", seen from the measuring model, is "David Weissman")."""
    for line in reply.splitlines():
        line = _TAGS.sub("", line).strip()
        if line:
            return line
    return ""


def format_docs(hits: Sequence[Hit]) -> str:
    """Documents as the prompts show them: numbered, title then text."""
    if not hits:
        return NO_DOCS
    return "\n\n".join(f"[{i}] {h.chunk.title}\n{h.chunk.text}" if h.chunk.title
                       else f"[{i}] {h.chunk.text}" for i, h in enumerate(hits, start=1))
