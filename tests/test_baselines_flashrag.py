"""IRCoT and Iter-RetGen as FlashRAG runs them (flashrag/pipeline/active_pipeline.py), the
behaviour written down here:

IRCoT (``IRCOTPipeline``): a system prompt with the instruction and ONE demonstration; the
user prompt is the documents as "Wikipedia Title: {title}\\n{text}\\n\\n", then
"Question: {question}\\nThought:" followed by the thoughts so far; generation stops at "." and
"\\n" (one thought per step); a document retrieved again keeps its best score and ALL
documents so far are shown, sorted by score ascending; the chain stops when a thought contains
"So the answer is:" (case-sensitive: "so the answer is" does not stop it); the prediction is
the joined thoughts, and the answer the text after the prefix, else the whole chain.

Iter-RetGen (``IterativePipeline``): round 1 retrieves with the question, each later round
with "{question} {previous generation}"; the generation is a short answer (FlashRAG's
generator budget there is 32 tokens).
"""

from __future__ import annotations

import asyncio

from quaderno.corpus.chunk import Chunk
from quaderno.index.hits import Hit
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.baselines import IRCoT, IterRetGen, answer_from_chain

Q = "Which is older, the Varn bridge or the Ostrel tower?"


class Scored:
    """Per query a fixed list of (id, score)."""

    def __init__(self, table):
        self.table, self.queries = table, []

    def fingerprint(self) -> str:
        return "scored"

    def retrieve(self, query: str, k: int = 5) -> list[Hit]:
        self.queries.append(query)
        rows = self.table.get(len(self.queries), [])
        return [Hit(chunk=Chunk(id=i, title=f"T{i}", text=f"text of {i}"), score=s, rank=r,
                    retriever="scored") for r, (i, s) in enumerate(rows[:k], start=1)]

    def retrieve_batch(self, queries, k=5):
        return [self.retrieve(q, k) for q in queries]


def test_ircot_prompt_order_stop_rule_and_answer():
    thoughts = iter(["The Varn bridge was built in 1820",
                     "so the answer is: not yet",  # lower case: not the stop rule
                     "The Ostrel tower is from 1901",
                     "So the answer is: the Varn bridge"])
    requests = []

    def reply(request):
        requests.append(request)
        return next(thoughts)

    docs = Scored({1: [("a", 0.9), ("b", 0.2)], 2: [("c", 0.5), ("b", 0.7)],
                   3: [("d", 0.1)], 4: [("e", 0.3)]})
    answer = asyncio.run(IRCoT(LM(FakeLLM(respond=reply)), docs, k=2).answer(Q))
    assert answer.answer == "the Varn bridge"
    assert answer.details.steps[1] == "so the answer is: not yet"  # did not stop there
    assert len(requests) == 4 and len(docs.queries) == 4  # question + 3 non-final thoughts
    first = requests[0]
    assert first.messages[0].role == "system" and first.messages[0].content.count(
        "Question:") == 1  # one demonstration
    assert "So the answer is:" in first.messages[0].content
    assert first.stop == (".", "\n")
    assert first.messages[-1].content == ("Wikipedia Title: Tb\ntext of b\n\n"
                                          "Wikipedia Title: Ta\ntext of a\n\n"
                                          f"Question: {Q}\nThought: ")
    def titles(request):
        return [ln.split(": ")[1] for ln in request.messages[-1].content.splitlines()
                if ln.startswith("Wikipedia Title")]

    # after round 2: b kept its best score (0.7), all documents ascending by score
    assert titles(requests[1]) == ["Tc", "Tb", "Ta"]
    assert titles(requests[2]) == ["Td", "Tc", "Tb", "Ta"]
    assert titles(requests[3]) == ["Td", "Te", "Tc", "Tb", "Ta"]
    assert requests[2].messages[-1].content.endswith(
        "Thought: The Varn bridge was built in 1820 so the answer is: not yet")


def test_ircot_without_the_prefix_answers_with_the_chain():
    answer = asyncio.run(IRCoT(LM(FakeLLM(respond=lambda r: "It is hard to say")),
                               Scored({}), k=2, max_steps=5).answer(Q))
    assert answer.answer == " ".join(["It is hard to say"] * 5)
    assert any("the chain is the answer" in f for f in answer.trace.fallbacks)
    assert answer_from_chain("x. So the answer is: yes. And") == "yes. And"
    assert answer_from_chain("the answer is: yes") is None


def test_iter_retgen_expands_the_question_with_the_previous_short_answer():
    replies = iter(["I think <answer>Varn bridge</answer>",
                    "<answer>" + " ".join(f"w{i}" for i in range(40)) + "</answer>",
                    "<answer>the Varn bridge</answer>"])
    docs = Scored({1: [("a", 1.0)], 2: [("b", 1.0)], 3: [("c", 1.0)]})
    answer = asyncio.run(IterRetGen(LM(FakeLLM(respond=lambda r: next(replies))), docs,
                                    k=1, iterations=3).answer(Q))
    assert docs.queries[0] == Q
    assert docs.queries[1] == f"{Q} Varn bridge"  # the short answer, not the reasoning
    assert docs.queries[2] == Q + " " + " ".join(f"w{i}" for i in range(32))  # ≤ 32 words
    assert answer.answer == "Varn bridge"  # quaderno's span step drops the article
