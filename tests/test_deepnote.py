"""DeepNote as its official loop runs it (thunlp/DeepNote src/main.py): an initial note from
the question's documents; new queries from the best note retrieve with the question appended
(cut to 500 characters); a refined note replaces the best only when judged better; two
"not better" verdicts stop; distinct documents capped; the answer from the best note."""

from __future__ import annotations

import asyncio

from fake_retriever import FakeRetriever
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.deepnote import DeepNote, better
from quaderno.methods.registry import make_method


def fake_docs() -> FakeRetriever:
    """Each call: two documents seen before (d0, d1) and k-2 new ones."""
    return FakeRetriever(lambda q, n, k: [(i, f"text {i}", i) for i in
                                          ["d0", "d1", *[f"r{n}-{j}" for j in range(k - 2)]]])


def model(verdicts):
    verdicts = iter(verdicts)
    log = []

    def reply(request):
        text = request.messages[-1].content
        if text.startswith("Write a note"):
            log.append("init")
            return "note 0"
        if "propose two new short search questions" in text:
            log.append("query")
            return f"new question {log.count('query')}"
        if text.startswith("Add to the note"):
            log.append("refine")
            return f"note {log.count('refine')}\nmore"
        if text.startswith("Which note is better"):
            log.append("compare")
            return next(verdicts)
        log.append("answer")
        assert "Note:\n" in text
        return "<answer>" + text.split("Note:\n", 1)[1].split("\n", 1)[0] + "</answer>"

    return reply, log


def test_the_official_loop_keeps_only_better_notes_and_stops_after_two_failures():
    reply, log = model(['{"status": "True"}', '```json {"status":"False"}```',
                        '{"status": "False"}'])
    docs = fake_docs()
    question = "Who founded the Ostrel College?"
    answer = asyncio.run(DeepNote(LM(FakeLLM(respond=reply)), docs, k=5, max_steps=3,
                                  max_docs=40).answer(question))
    assert log == ["init", "query", "refine", "compare", "query", "refine", "compare",
                   "query", "refine", "compare", "answer"]
    # note 1 was better; notes 2 and 3 were not: the answer reads note 1 (newlines dropped)
    assert answer.details.notes == ["note 0", "note 1 more"]
    assert answer.answer == "note 1 more"
    # retrieval: the question, then each new question followed by the question
    assert docs.queries[0] == question
    assert docs.queries[1] == "new question 1\n" + question


def test_document_cap_keeps_only_unseen_documents_then_stops():
    refined_docs = []
    reply, _ = model(['{"status": "True"}'] * 5)

    def counting(request):
        text = request.messages[-1].content
        if text.startswith("Add to the note"):
            refined_docs.append(text.count("text "))
        return reply(request)

    docs = fake_docs()
    asyncio.run(DeepNote(LM(FakeLLM(respond=counting)), docs, k=5, max_steps=5,
                         max_docs=8).answer("q"))
    # 5 read first; the next 5 would pass 8: only the 3 unseen ones are kept (d0, d1 dropped);
    # at exactly 8 the official rule keeps a whole round (its room is 0), then 13 > 8 stops
    assert refined_docs == [3, 5]
    assert len(docs.queries) == 3


def test_verdicts_and_registry():
    assert better('{"status": "True"}') and not better('{"status": "False"}')
    assert better("True, note 2 is better") and not better("no")
    method = make_method("deepnote", LM(FakeLLM(respond=lambda r: "x")), fake_docs(), {})
    assert (method.k, method.max_steps, method.max_fail_steps, method.max_docs) == (5, 3, 2, 15)
