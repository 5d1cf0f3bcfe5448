"""Search-o1 as its official loop runs it (sunnynexus/Search-o1 scripts/run_search_o1.py):
generation stops at the end-of-query tag; a new query is searched and its documents
distilled by Reason-in-Documents into the reasoning; a repeated query and one past the limit
get notices; a turn without a query ends; the answer is the last \\boxed{}."""

from __future__ import annotations

import asyncio

from fake_retriever import FakeRetriever
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.registry import make_method
from quaderno.methods.searcho1 import (BEGIN_Q, BEGIN_R, END_Q, END_R, LIMIT_NOTICE,
                                       REPEAT_NOTICE, SearchO1, boxed, final_information,
                                       previous_steps)


def fake_docs() -> FakeRetriever:
    return FakeRetriever(lambda q, n, k: [(f"{q}-{i}", f"{q} fact {i}", "") for i in range(k)])


def script(turns):
    turns = iter(turns)
    seen = []

    def reply(request):
        text = request.messages[-1].content
        if text.startswith("Read the searched documents"):
            query = text.split("Current search query:\n", 1)[1].split("\n", 1)[0]
            seen.append(("read", query))
            return f"Some thoughts.\n**Final Information**\n{query} is known."
        seen.append(("turn", text.split("continue from its end):\n", 1)[-1][-60:]))
        assert request.stop == (END_Q,)
        return next(turns)

    return reply, seen


def test_searches_are_distilled_into_the_reasoning_and_the_boxed_answer_read():
    reply, seen = script([
        f"I need Fujita's job. {BEGIN_Q}Kazuyuki Fujita profession",  # stop string cut off
        f"Now Yvel. {BEGIN_Q}Kazuyuki Fujita profession",  # repeated: a notice
        f"Then {BEGIN_Q}Gilbert Yvel profession",
        "Both fight. The answer is \\boxed{\\text{mixed martial artist}}."])
    docs = fake_docs()
    answer = asyncio.run(SearchO1(LM(FakeLLM(respond=reply)), docs, k=3).answer("What job?"))
    assert docs.queries == ["Kazuyuki Fujita profession", "Gilbert Yvel profession"]
    assert answer.answer == "mixed martial artist"
    out = answer.explanation
    assert f"{BEGIN_R}Kazuyuki Fujita profession is known.{END_R}" in out
    assert f"{BEGIN_R}\n{REPEAT_NOTICE}\n{END_R}" in out
    assert out.count(END_Q) == 3  # each stop put back after its query
    assert [k for k, _ in seen] == ["turn", "read", "turn", "turn", "read", "turn"]
    assert answer.details.queries == docs.queries


def test_limit_notice_and_no_boxed_answer():
    reply, _ = script([f"{BEGIN_Q}one", f"{BEGIN_Q}two", "I do not know."])
    docs = fake_docs()
    answer = asyncio.run(SearchO1(LM(FakeLLM(respond=reply)), docs, k=1,
                                  max_searches=1).answer("q"))
    assert docs.queries == ["one"] and LIMIT_NOTICE in answer.explanation
    assert answer.answer == ""
    assert any("no \\boxed{} answer" in f for f in answer.trace.fallbacks)


def test_the_official_helpers():
    assert final_information("x\n**Final Information**\nA\nB") == "AB"
    assert final_information("nothing") == "No helpful information found."
    assert boxed("a \\boxed{(2)}") == "2" and boxed("none") == ""
    # the official pattern is greedy: two boxes on one line give their span, as there
    assert boxed("\\boxed{1} b \\boxed{2}") == "1} b \\boxed{2"
    steps = previous_steps("\n".join(f"line {i}" for i in range(8)) + f"\n{BEGIN_Q}q{END_Q}")
    assert steps.startswith("Step 1: line 0\n\n...") and "Step 9:" in steps
    assert previous_steps("a\nb") == "Step 1: a\n\nStep 2: b"
    method = make_method("search-o1", LM(FakeLLM(respond=lambda r: "x")), fake_docs(), {})
    assert (method.k, method.max_searches, method.max_turns) == (10, 10, 15)
