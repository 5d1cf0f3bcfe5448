"""The baselines PAGER is compared against, in the same interface.

- :class:`VanillaLLM` — the question alone, no retrieval.
- :class:`VanillaRAG` — top-k documents of the question in context.
- :class:`IRCoT` (Trivedi et al., 2023) as FlashRAG's ``IRCOTPipeline`` runs it: one
  demonstration; one thought per step (generation stops at "." or a newline); every document
  gathered so far in the context, by score (ascending, the best last, as FlashRAG sorts);
  each thought is the next query; stop when a thought contains "So the answer is:"
  (case-sensitive) or after ``max_steps`` (5); the answer is the text after that prefix in
  the joined thoughts, else the whole chain.
- :class:`IterRetGen` (Shao et al., 2023) as FlashRAG's ``IterativePipeline``: retrieve with
  the question followed by the previous round's short answer (at most 32 words), answer
  again; ``iterations`` rounds (3).
"""

from __future__ import annotations

from quaderno.errors import ConfigError, StepError
from quaderno.index.hits import Hit
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.parsing import extract_tag
from quaderno.llm.steps import Step, text_output
from quaderno.methods.answer import Answer
from quaderno.methods.baseline_prompts import IRCOT_SYSTEM
from quaderno.methods.base import BaseMethod
from quaderno.methods.details import ChainDetails
from quaderno.methods.episode import Episode, format_docs
from quaderno.methods.pager.steps import ANSWER_GRAMMAR, SUBQUERY_GRAMMAR
from quaderno.methods.span import SPAN_REPAIR, SPAN_RULES

LLM_ANSWER = Step(
    name="answer", inputs=("question",), parse=lambda t: extract_tag(t, "answer"),
    grammar=ANSWER_GRAMMAR, max_tokens=1024, repair=SPAN_REPAIR,
    instruction="Question: {question}\n\nReason briefly, then give the final answer as a short "
                "span (an entity, a date, a number, or a few words) inside <answer></answer> tags. "
                + SPAN_RULES)
RAG_ANSWER = Step(
    name="answer", inputs=("docs", "question"), parse=lambda t: extract_tag(t, "answer"),
    grammar=ANSWER_GRAMMAR, max_tokens=1024, repair=SPAN_REPAIR,
    instruction="Documents:\n{docs}\n\nQuestion: {question}\n\nUsing the documents (and your "
                "own knowledge where they are silent), reason briefly, then give the final "
                "answer as a short span inside <answer></answer> tags. " + SPAN_RULES)
COT_STEP = Step(
    name="ircot.reason", inputs=("docs", "question", "thoughts"), parse=text_output,
    grammar=SUBQUERY_GRAMMAR, max_tokens=128, params={"stop": (".", "\n")},
    system=IRCOT_SYSTEM, instruction="{docs}Question: {question}\nThought: {thoughts}")
FINAL_PREFIX = "So the answer is:"


def answer_from_chain(chain: str) -> str | None:
    """FlashRAG's rule: the text after the first "So the answer is:" (case-sensitive), or
    None when the chain has none."""
    if FINAL_PREFIX not in chain:
        return None
    return chain.split(FINAL_PREFIX)[1].strip().rstrip(".").strip() or None


def wiki_docs(hits: list[Hit]) -> str:
    """Documents as FlashRAG's IRCoT shows them."""
    return "".join(f"Wikipedia Title: {h.chunk.title}\n{h.chunk.text}\n\n" for h in hits)


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
    """Interleaving retrieval with chain-of-thought, as FlashRAG runs it (``max_steps``
    thoughts; ``max_docs`` bounds the documents shown, the best-scored kept)."""

    name = "ircot"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5,
                 max_steps: int = 5, max_docs: int = 15) -> None:
        if k < 1 or max_steps < 1 or max_docs < 1:
            raise ConfigError(f"k, max_steps and max_docs must be positive, got {k}, "
                              f"{max_steps}, {max_docs}")
        super().__init__(lm, retriever)
        self.k, self.max_steps, self.max_docs = k, max_steps, max_docs

    def shown(self, docs: dict[str, Hit]) -> list[Hit]:
        """Every document so far by its best score, ascending (FlashRAG's order: the best
        last, nearest the question), the ``max_docs`` best of them."""
        best = sorted(docs.values(), key=lambda h: h.score)
        return best[-self.max_docs:]

    async def reason(self, episode: Episode, docs: dict[str, Hit],
                     thoughts: list[str]) -> str | None:
        """The next thought, or None when the step gave nothing usable."""
        with episode.trace.span("ircot.reason", step=len(thoughts) + 1) as span:
            try:
                thought = (await COT_STEP.run(
                    episode.lm, docs=wiki_docs(self.shown(docs)), question=episode.question,
                    thoughts=" ".join(thoughts), trace=episode.trace)).value.strip()
            except StepError:
                episode.trace.fallback("reasoning step unusable; stopping the chain", span)
                return None
            span.outputs = {"thought": thought}
        return thought

    @staticmethod
    def gather(docs: dict[str, Hit], hits: list[Hit]) -> None:
        for hit in hits:  # a document found again keeps its best score
            if hit.chunk.id not in docs or hit.score > docs[hit.chunk.id].score:
                docs[hit.chunk.id] = hit

    async def run(self, episode: Episode) -> Answer:
        question = episode.question
        docs: dict[str, Hit] = {}
        queries = [question]
        self.gather(docs, await episode.retrieve(question, self.k))
        thoughts: list[str] = []
        for _ in range(self.max_steps):
            thought = await self.reason(episode, docs, thoughts)
            if thought is None:
                break
            thoughts.append(thought)
            if FINAL_PREFIX in thought:
                break
            queries.append(thought)
            self.gather(docs, await episode.retrieve(thought, self.k))
        chain = " ".join(thoughts)
        found = answer_from_chain(chain)
        if found is None:
            episode.trace.fallback(f'no "{FINAL_PREFIX}" in the chain: the chain is the answer '
                                   "(FlashRAG's rule)")
        answer = found if found is not None else chain
        return episode.finish(answer, explanation=chain, context=wiki_docs(self.shown(docs)),
                              details=ChainDetails(steps=thoughts, queries=queries))


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
            # FlashRAG: the question, then the previous round's generation (its short answer,
            # at most 32 words: the generator's 32-token budget there)
            query = f"{question} {generation}" if generation else question
            queries.append(query)
            hits = await episode.retrieve(query, self.k)
            docs = format_docs(hits)
            answer, raw = await episode.answer_step(RAG_ANSWER, docs=docs, question=question)
            generation = " ".join(answer.split()[:32])
            drafts.append(raw)
        return episode.finish(answer, explanation=raw, context=docs,
                              details=ChainDetails(steps=drafts, queries=queries))
