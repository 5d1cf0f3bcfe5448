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
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod
from quaderno.methods.details import ChainDetails
from quaderno.methods.episode import Episode, format_docs
from quaderno.methods.pager.steps import ANSWER_GRAMMAR, SUBQUERY_GRAMMAR
from quaderno.methods.span import SPAN_RULES

LLM_ANSWER = Step(
    name="answer", inputs=("question",), parse=lambda t: extract_tag(t, "answer"),
    grammar=ANSWER_GRAMMAR, max_tokens=1024,
    instruction="Question: {question}\n\nReason briefly, then give the final answer as a short "
                "span (an entity, a date, a number, or a few words) inside <answer></answer> tags. "
                + SPAN_RULES)
RAG_ANSWER = Step(
    name="answer", inputs=("docs", "question"), parse=lambda t: extract_tag(t, "answer"),
    grammar=ANSWER_GRAMMAR, max_tokens=1024,
    instruction="Documents:\n{docs}\n\nQuestion: {question}\n\nUsing the documents (and your "
                "own knowledge where they are silent), reason briefly, then give the final "
                "answer as a short span inside <answer></answer> tags. " + SPAN_RULES)
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


class VanillaLLM(BaseMethod):
    name = "vanilla-llm"

    def __init__(self, lm: LM, retriever: Retriever | None = None) -> None:
        super().__init__(lm, None)

    async def run(self, episode: Episode) -> Answer:
        answer, raw = await episode.answer_step(LLM_ANSWER, question=episode.question)
        return episode.finish(answer, explanation=raw)


class VanillaRAG(BaseMethod):
    name = "vanilla-rag"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5) -> None:
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        super().__init__(lm, retriever)
        self.k = k

    async def run(self, episode: Episode) -> Answer:
        hits = await episode.retrieve(episode.question, self.k)
        docs = format_docs(hits)
        answer, raw = await episode.answer_step(RAG_ANSWER, docs=docs, question=episode.question)
        return episode.finish(answer, explanation=raw, context=docs)


class IRCoT(BaseMethod):
    """Interleaving retrieval with chain-of-thought (at most ``max_steps`` sentences)."""

    name = "ircot"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5,
                 max_steps: int = 5, max_docs: int = 15) -> None:
        if k < 1 or max_steps < 1 or max_docs < 1:
            raise ConfigError(f"k, max_steps and max_docs must be positive, got {k}, "
                              f"{max_steps}, {max_docs}")
        super().__init__(lm, retriever)
        self.k, self.max_steps, self.max_docs = k, max_steps, max_docs

    async def reason(self, episode: Episode, docs: dict[str, Hit],
                     sentences: list[str]) -> str | None:
        """The next reasoning sentence, or None when the step gave nothing usable."""
        with episode.trace.span("ircot.reason", step=len(sentences) + 1) as span:
            try:
                sentence = (await COT_STEP.run(
                    episode.lm, docs=format_docs(list(docs.values())[:self.max_docs]),
                    question=episode.question, reasoning=" ".join(sentences) or "(none yet)",
                    trace=episode.trace)).value.strip()
            except StepError:
                episode.trace.fallback("reasoning step unusable; stopping the chain", span)
                return None
            span.outputs = {"sentence": sentence}
        return sentence

    async def run(self, episode: Episode) -> Answer:
        question = episode.question
        docs: dict[str, Hit] = {}
        queries = [question]
        for hit in await episode.retrieve(question, self.k):
            docs.setdefault(hit.chunk.id, hit)
        sentences: list[str] = []
        for _ in range(self.max_steps):
            sentence = await self.reason(episode, docs, sentences)
            if sentence is None:
                break
            sentences.append(sentence)
            if answer_from_chain(sentence):
                break
            queries.append(sentence)
            for hit in await episode.retrieve(sentence, self.k):
                docs.setdefault(hit.chunk.id, hit)
        chain = " ".join(sentences)
        found = answer_from_chain(sentences[-1]) if sentences else None
        shown = format_docs(list(docs.values())[:self.max_docs])
        if found:
            answer, raw = found, chain
        else:
            answer, raw = await episode.answer_step(RAG_ANSWER, docs=shown, question=question)
        return episode.finish(answer, explanation=raw or chain, context=shown,
                              details=ChainDetails(steps=sentences, queries=queries))


class IterRetGen(BaseMethod):
    """Iterative retrieval-generation synergy with ``iterations`` rounds (paper: T=2..3)."""

    name = "iter-retgen"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5,
                 iterations: int = 3) -> None:
        if k < 1 or iterations < 1:
            raise ConfigError(f"k and iterations must be positive, got {k}, {iterations}")
        super().__init__(lm, retriever)
        self.k, self.iterations = k, iterations

    async def run(self, episode: Episode) -> Answer:
        question = episode.question
        generation, answer, raw, docs = "", "", "", ""
        drafts: list[str] = []
        queries: list[str] = []
        for _ in range(self.iterations):
            query = f"{generation} {question}".strip() if generation else question
            queries.append(query)
            hits = await episode.retrieve(query, self.k)
            docs = format_docs(hits)
            answer, raw = await episode.answer_step(RAG_ANSWER, docs=docs, question=question)
            generation = raw
            drafts.append(raw)
        return episode.finish(answer, explanation=raw, context=docs,
                              details=ChainDetails(steps=drafts, queries=queries))
