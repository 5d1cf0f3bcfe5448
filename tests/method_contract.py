"""The contract every method must meet, written once (like Haystack's document-store mixins).

Subclass :class:`MethodContract` and provide a ``build`` fixture returning
``build(lm, retriever) -> method``; ``tests/test_method_contract.py`` runs it over every
registered method, so a new method is checked as soon as it registers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.errors import LLMError, LLMServerError
from quaderno.index.hits import Hit
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.methods.answer import Answer

QUESTION = "What profession do Kazuyuki Fujita and Gilbert Yvel have in common?"
CHUNKS = [
    Chunk(id="f1", kb="kb", title="Kazuyuki Fujita", text="Kazuyuki Fujita is a Japanese mixed "
          "martial artist and professional wrestler."),
    Chunk(id="y1", kb="kb", title="Gilbert Yvel", text="Gilbert Yvel is a Dutch mixed martial "
          "artist."),
    Chunk(id="p1", kb="kb", title="Pride FC", text="Pride Fighting Championships was a mixed "
          "martial arts organization in Japan."),
]

# replies a weak or broken model gives: empty, noise, a prompt echo, broken markup, junk JSON
GARBAGE = ["", "   \n ", "\x00\x01\ufffd garbage \u202e", "<answer></answer>", "## \n## \n#",
           '{"broken": [1, 2', "<TO BE FILLED>" * 50, "SUFFICIENT", "lorem " * 2000,
           "<think>still thinking"]


class ListRetriever:
    """A retriever over a fixed list (empty: every query finds nothing)."""

    name = "list"

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = list(chunks)
        self.queries: list[str] = []

    @property
    def fingerprint(self) -> str:
        return f"list:{len(self.chunks)}"

    def retrieve(self, query: str, k: int = 5) -> list[Hit]:
        self.queries.append(query)
        return [Hit(chunk=c, score=1.0 / i, rank=i, retriever=self.name)
                for i, c in enumerate(self.chunks[:k], start=1)]

    def retrieve_batch(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        return [self.retrieve(q, k) for q in queries]


def plausible(request: ChatRequest) -> str:
    """A reply with the shape most steps ask for: a short line with an answer tag."""
    return "They are both mixed martial artists. <answer>mixed martial artist</answer>"


def cycling(replies: Sequence[str]):
    state = {"i": 0}

    def respond(request: ChatRequest) -> str:
        state["i"] += 1
        return replies[state["i"] % len(replies)]
    return respond


def run(method, question: str = QUESTION) -> Answer:
    return asyncio.run(method.answer(question))


class MethodContract:
    """Behaviour every method guarantees, whatever the model replies."""

    needs_retrieval = True

    @pytest.fixture
    def build(self):  # pragma: no cover - provided by subclasses
        raise NotImplementedError

    # -- the shape of an answer ---------------------------------------------------------
    def check_answer(self, answer: Answer, retriever: ListRetriever | None) -> None:
        assert isinstance(answer, Answer) and answer.question == QUESTION
        assert answer.answer.strip() or answer.trace.fallbacks, "empty answer, no fallback"
        trace = answer.trace
        ids = [s.id for s in trace.spans]
        assert len(ids) == len(set(ids)) and all(ids), "span ids must be unique"
        assert all(s.end is not None for s in trace.spans), "a span was left open"
        assert all(s.parent is None or s.parent in ids for s in trace.spans)
        # every LLM call was made inside a named step
        assert trace.calls, "no LLM call recorded"
        assert all(c.span_id in ids for c in trace.calls), \
            [c.step for c in trace.calls if c.span_id not in ids]
        # provenance: one retrieval round per retrieve span, every piece of evidence from one
        rounds = [s for s in trace.spans if s.name == "retrieve"]
        assert len(rounds) == len(answer.retrieval_rounds)
        assert [r.outputs["chunk_ids"] for r in rounds] == answer.retrieval_rounds
        retrieved = {cid for rnd in answer.retrieval_rounds for cid in rnd}
        assert {e.chunk_id for e in answer.evidence} <= retrieved
        if retrieved:
            assert answer.evidence, "retrieved chunks but cited none as shown"
        # each piece of evidence was retrieved by the query it names
        by_query: dict[str, set[str]] = {}
        for r in rounds:
            by_query.setdefault(r.inputs["query"], set()).update(r.outputs["chunk_ids"])
        assert all(e.chunk_id in by_query.get(e.query, ()) for e in answer.evidence)
        if retriever is not None and retriever.chunks:
            assert retrieved <= {c.id for c in retriever.chunks}
        # serialized and read back by the same models
        again = Answer.model_validate_json(answer.model_dump_json())
        assert again.details == answer.details and again.answer == answer.answer
        assert again.trace.spans == answer.trace.spans

    def test_answers_with_provenance(self, build):
        retriever = ListRetriever(CHUNKS)
        answer = run(build(LM(FakeLLM(respond=plausible)), retriever))
        self.check_answer(answer, retriever)
        if self.needs_retrieval:
            assert answer.retrieval_rounds and answer.evidence, "retrieved nothing"
            assert retriever.queries, "the retriever was never asked"

    def test_survives_an_empty_retrieval(self, build):
        answer = run(build(LM(FakeLLM(respond=plausible)), ListRetriever([])))
        self.check_answer(answer, None)
        if self.needs_retrieval:
            assert answer.evidence == []
            assert any("returned nothing" in f for f in answer.trace.fallbacks)

    @pytest.mark.parametrize("garbage", range(len(GARBAGE)))
    def test_survives_garbage_replies(self, build, garbage):
        replies = GARBAGE[garbage:] + GARBAGE[:garbage]
        retriever = ListRetriever(CHUNKS)
        answer = run(build(LM(FakeLLM(respond=cycling(replies))), retriever))
        self.check_answer(answer, retriever)

    def test_a_failing_llm_call_is_a_typed_error(self, build):
        def down(request: ChatRequest) -> str:
            raise LLMServerError("server down (test)")
        method = build(LM(FakeLLM(respond=down)), ListRetriever(CHUNKS))
        from quaderno.llm.trace import Trace
        trace = Trace(label="failing")
        with pytest.raises(LLMError, match="server down"):
            asyncio.run(method.answer(QUESTION, trace=trace))
        failed = [c for c in trace.calls if c.error]
        assert failed and "server down" in failed[0].error
        span = trace.get_span(failed[0].span_id)
        assert span is not None and span.error and "server down" in span.error
