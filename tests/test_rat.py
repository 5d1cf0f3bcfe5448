"""RAT as its official pipeline runs it (CraftJarvis/RAT app/gradio_app.py): draft, split at
"##", then per paragraph: answer so far + paragraph, a query from it, retrieval, one revision
per document (the first two), a final reflection; quaderno reads the span from the result."""

from __future__ import annotations

import asyncio

from fake_retriever import FakeRetriever
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.rat import RAT, paragraphs
from quaderno.methods.registry import make_method


def fake_docs() -> FakeRetriever:
    return FakeRetriever(lambda q, n, k: [(f"{n}-{i}", f"doc {n}.{i}", "") for i in range(k)])


def test_each_paragraph_is_revised_with_its_own_retrieval():
    log = []

    def reply(request):
        text = request.messages[-1].content
        if text.endswith("without an introduction or extra explanation."):
            log.append("draft")
            return "Step one about Fujita.\n\nStep two about Yvel.\n\nStep three."
        if "put ## between paragraphs" in text:
            log.append("split")
            return "Step one about Fujita.##Step two about Yvel.##ok"  # "ok": too short
        if "write a short and specific search query" in text:
            log.append("query")
            return f"query {log.count('query')}"
        if text.startswith("Retrieved text:"):
            doc = text.split("\n", 1)[0].removeprefix("Retrieved text: ")
            log.append(f"revise with {doc}")
            answer = text.split("Answer: ", 1)[1].split("\n\nCheck the answer", 1)[0]
            return answer + f" [{doc}]"
        if "Give the answer a title" in text:
            log.append("reflect")
            return "# Title\n\n" + text.split("Answer:\n", 1)[1].split("\n\nGive", 1)[0]
        log.append("answer")
        return "<answer>mixed martial artist</answer>"

    docs = fake_docs()
    answer = asyncio.run(RAT(LM(FakeLLM(respond=reply)), docs, k=3).answer("What do they do?"))
    assert log == ["draft", "split", "query", "revise with doc 1.0", "revise with doc 1.1",
                   "query", "revise with doc 2.0", "revise with doc 2.1", "reflect", "answer"]
    assert docs.queries == ["query 1", "query 2"]
    # paragraph 2 was appended to the revised paragraph 1, and revised again as a whole
    assert answer.context == ("# Title\n\nStep one about Fujita. [doc 1.0] [doc 1.1]\n\n"
                              "Step two about Yvel. [doc 2.0] [doc 2.1]")
    assert answer.answer == "mixed martial artist"
    assert answer.details.queries == ["query 1", "query 2"]


def test_split_rule_and_registry():
    assert paragraphs("a long one##tiny##another long", "##") == ["a long one", "another long"]
    method = make_method("rat", LM(FakeLLM(respond=lambda r: "x")), fake_docs(), {})
    assert (method.k, method.max_paragraphs, method.revise_docs) == (5, 4, 2)
