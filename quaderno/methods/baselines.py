"""The baselines PAGER is compared against, in the same interface.

- :class:`VanillaLLM` — the question alone, no retrieval.
- :class:`VanillaRAG` — top-k documents of the question in context.
- :class:`IRCoT` (Trivedi et al., 2023) — interleave chain-of-thought and retrieval: each new
  reasoning sentence is the next query; documents accumulate; stop at "the answer is".
- :class:`IterRetGen` (Shao et al., 2023) — iterate retrieval-generation: retrieve with the
  question plus the previous generation, generate again; T iterations.
"""

from __future__ import annotations

import re

from quaderno.errors import ConfigError, StepError
from quaderno.index.hits import Hit
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.parsing import extract_tag
from quaderno.llm.steps import Step, text_output
from quaderno.llm.trace import Trace
from quaderno.methods.base import Answer, Evidence, answer_step, format_docs, retrieve
from quaderno.methods.pager_steps import ANSWER_GRAMMAR, SUBQUERY_GRAMMAR

LLM_ANSWER = Step(
    name="answer", inputs=("question",), parse=lambda t: extract_tag(t, "answer"),
    grammar=ANSWER_GRAMMAR, max_tokens=1024,
    instruction="Question: {question}\n\nReason briefly, then give the final answer as a short "
                "span (an entity, a date, a number, or a few words) inside <answer></answer> tags.")
RAG_ANSWER = Step(
    name="answer", inputs=("docs", "question"), parse=lambda t: extract_tag(t, "answer"),
    grammar=ANSWER_GRAMMAR, max_tokens=1024,
    instruction="Documents:\n{docs}\n\nQuestion: {question}\n\nUsing the documents (and your "
                "own knowledge where they are silent), reason briefly, then give the final "
                "answer as a short span inside <answer></answer> tags.")
COT_STEP = Step(
    name="ircot.reason", inputs=("docs", "question", "reasoning"), parse=text_output,
    grammar=SUBQUERY_GRAMMAR, max_tokens=128, params={"stop": ("\n",)},
    instruction="Documents:\n{docs}\n\nQuestion: {question}\nReasoning so far: {reasoning}\n\n"
                "Write the next single sentence of step-by-step reasoning. When you can answer, "
                "write the sentence \"So the answer is: <short answer>.\"")
_ANSWER_IS = re.compile(r"answer is:?\s*", re.I)


def answer_from_chain(sentence: str) -> str | None:
    """The text after the last "answer is" of a reasoning sentence, or None."""
    parts = _ANSWER_IS.split(sentence)
    if len(parts) < 2:
        return None
    return parts[-1].strip().rstrip(".").strip() or None


class VanillaLLM:
    name = "vanilla-llm"

    def __init__(self, lm: LM) -> None:
        self.lm = lm

    async def answer(self, question: str, *, trace: Trace | None = None) -> Answer:
        trace = trace or Trace(label=question)
        answer, raw = await answer_step(LLM_ANSWER, self.lm, trace, question=question)
        return Answer(question=question, answer=answer, explanation=raw, method=self.name,
                      trace=trace)


class VanillaRAG:
    name = "vanilla-rag"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5) -> None:
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        self.lm, self.retriever, self.k = lm, retriever, k

    async def answer(self, question: str, *, trace: Trace | None = None) -> Answer:
        trace = trace or Trace(label=question)
        rounds: list[list[str]] = []
        evidence: list[Evidence] = []
        hits = retrieve(self.retriever, question, self.k, trace, rounds, evidence)
        docs = format_docs(hits)
        answer, raw = await answer_step(RAG_ANSWER, self.lm, trace, docs=docs, question=question)
        return Answer(question=question, answer=answer, explanation=raw, method=self.name,
                      context=docs, evidence=evidence, retrieval_rounds=rounds, trace=trace)


class IRCoT:
    """Interleaving retrieval with chain-of-thought (at most ``max_steps`` sentences)."""

    name = "ircot"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5,
                 max_steps: int = 5, max_docs: int = 15) -> None:
        if k < 1 or max_steps < 1 or max_docs < 1:
            raise ConfigError(f"k, max_steps and max_docs must be positive, got {k}, "
                              f"{max_steps}, {max_docs}")
        self.lm, self.retriever = lm, retriever
        self.k, self.max_steps, self.max_docs = k, max_steps, max_docs

    async def answer(self, question: str, *, trace: Trace | None = None) -> Answer:
        trace = trace or Trace(label=question)
        rounds: list[list[str]] = []
        evidence: list[Evidence] = []
        docs: dict[str, Hit] = {}
        for hit in retrieve(self.retriever, question, self.k, trace, rounds, evidence):
            docs.setdefault(hit.chunk.id, hit)
        sentences: list[str] = []
        for _ in range(self.max_steps):
            try:
                sentence = (await COT_STEP.run(
                    self.lm, docs=format_docs(list(docs.values())[:self.max_docs]),
                    question=question, reasoning=" ".join(sentences) or "(none yet)",
                    trace=trace)).value.strip()
            except StepError:
                trace.fallback("reasoning step unusable; stopping the chain")
                break
            sentences.append(sentence)
            if answer_from_chain(sentence):
                break
            for hit in retrieve(self.retriever, sentence, self.k, trace, rounds, evidence):
                docs.setdefault(hit.chunk.id, hit)
        chain = " ".join(sentences)
        found = answer_from_chain(sentences[-1]) if sentences else None
        shown = format_docs(list(docs.values())[:self.max_docs])
        if found:
            answer, raw = found, chain
        else:
            answer, raw = await answer_step(RAG_ANSWER, self.lm, trace, docs=shown,
                                            question=question)
        return Answer(question=question, answer=answer, explanation=raw or chain,
                      method=self.name, context=shown, evidence=evidence,
                      retrieval_rounds=rounds, trace=trace)


class IterRetGen:
    """Iterative retrieval-generation synergy with ``iterations`` rounds (paper: T=2..3)."""

    name = "iter-retgen"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5,
                 iterations: int = 3) -> None:
        if k < 1 or iterations < 1:
            raise ConfigError(f"k and iterations must be positive, got {k}, {iterations}")
        self.lm, self.retriever, self.k, self.iterations = lm, retriever, k, iterations

    async def answer(self, question: str, *, trace: Trace | None = None) -> Answer:
        trace = trace or Trace(label=question)
        rounds: list[list[str]] = []
        evidence: list[Evidence] = []
        generation, answer, raw, docs = "", "", "", ""
        for _ in range(self.iterations):
            query = f"{generation} {question}".strip() if generation else question
            hits = retrieve(self.retriever, query, self.k, trace, rounds, evidence)
            docs = format_docs(hits)
            answer, raw = await answer_step(RAG_ANSWER, self.lm, trace, docs=docs,
                                            question=question)
            generation = raw
        return Answer(question=question, answer=answer, explanation=raw, method=self.name,
                      context=docs, evidence=evidence, retrieval_rounds=rounds, trace=trace)
