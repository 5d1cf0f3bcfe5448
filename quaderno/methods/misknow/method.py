"""Missing-knowledge RAG (seed 001) and its matching baseline, STD-RAG.

:class:`MisknowRAG`, one question:

1. round 1 retrieves K/2 chunks from ``kb1`` with the question (S1);
2. the reader answers from them (Y1, Eq. 2; the first-round prompt is Fig. 5 without its
   missing-knowledge section, REC A12);
3. the reasoner (a second LLM, by default the reader's) returns its reasoning and a JSON
   judgment {thought, judge, missing_knowledge, query} in one pass (Fig. 4);
4. if knowledge is missing, round 2 searches ``kb2`` with the generated queries, never the
   question: each query is ranked, picks are merged round-robin, skipping MD5 duplicates of
   round 1 and of earlier picks, until K/2 (REC A6); backfilled from deeper ranks so that
   |C| = K (REC A7);
5. the reader answers from the contexts, the missing-knowledge block and the reasoning
   keywords (Fig. 5, Eq. 3).

When the judgment says nothing is missing, writes no query, or cannot be read, round 2 is
skipped and the reader still answers with the Fig. 5 prompt and empty missing-knowledge
fields (REC A8); which path each question took is recorded in the details and the trace.
``budget_parity`` instead fills round 2 with the question's next hits from ``kb2``.

:class:`StdRAG`: one retrieval of K (from one KB, or K/n from each of n KBs: the paper's
"2-way") answered with the first-round prompt, so the two differ only by the method.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from quaderno.errors import ConfigError, StepError
from quaderno.index.hits import Hit
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod
from quaderno.methods.details import MisknowDetails, MisknowJudgment
from quaderno.methods.episode import Episode
from quaderno.methods.misknow import prompts, steps
from quaderno.methods.misknow.judgment import Judgment, reasoning_of, shorten
from quaderno.methods.misknow.render import render_contexts


async def read(episode: Episode, step, **inputs) -> str:
    """A reader step; an unusable reply is recorded and answered 'unknown'."""
    with episode.trace.span(step.name) as span:
        try:
            answer = (await step.run(episode.lm, trace=episode.trace, **inputs)).value
        except StepError as exc:
            episode.trace.fallback(f"{step.name}: no usable answer ({exc}); answered "
                                   "'unknown'", span)
            answer = "unknown"
        span.outputs = {"answer": answer}
    return answer


def _check_k(k: int) -> None:
    if k < 2 or k % 2:
        raise ConfigError(f"k must be an even number of at least 2 (K/2 per round), got {k}")


class MisknowRAG(BaseMethod):
    """Reasoning-enhanced missing-knowledge RAG over one or two knowledge bases."""

    name = "misknow"

    def __init__(self, lm: LM, retriever: Retriever | None, *, reasoner: LM | None = None,
                 k: int = 4, kb1: str | None = None, kb2: str | None = None,
                 reasoning: bool = True, thought_line: bool = True, backfill: bool = True,
                 budget_parity: bool = False, reasoning_max_words: int = 1536,
                 reader_max_tokens: int = 64, reasoner_max_tokens: int = 1024) -> None:
        _check_k(k)
        if min(reasoning_max_words, reader_max_tokens, reasoner_max_tokens) < 1:
            raise ConfigError("reasoning_max_words, reader_max_tokens and reasoner_max_tokens "
                              f"must be positive, got {reasoning_max_words}, "
                              f"{reader_max_tokens}, {reasoner_max_tokens}")
        super().__init__(lm, retriever)
        self.reasoner = reasoner or lm
        self.k, self.kb1, self.kb2 = k, kb1, kb2
        self.reasoning, self.thought_line = reasoning, thought_line
        self.backfill, self.budget_parity = backfill, budget_parity
        self.reasoning_max_words = reasoning_max_words
        self.first = dataclasses.replace(steps.FIRST_ROUND, max_tokens=reader_max_tokens)
        self.final = dataclasses.replace(steps.FINAL, max_tokens=reader_max_tokens)
        self.reasoner_step = dataclasses.replace(steps.REASONER, max_tokens=reasoner_max_tokens)
        if not reasoning:
            self.name = "misknow-no-reasoning"

    async def judge(self, episode: Episode, contexts: str,
                    first: str) -> tuple[Judgment | None, str, str]:
        """The reasoner's judgment (None when unreadable), its reasoning, and where the
        reasoning came from."""
        trace = episode.trace
        with trace.span("misknow.judge", reasoner=self.reasoner.model_id) as span:
            try:
                result = await self.reasoner_step.run(self.reasoner, trace=trace,
                                                  question=episode.question, contexts=contexts,
                                                  first_answer=first)
            except StepError as exc:
                trace.fallback(f"judgment unreadable ({exc}); round 2 skipped, answering with "
                               "what round 1 found", span)
                return None, "", "none"
            # a schema-constrained reply from a non-reasoning model has no reasoning: the
            # reasoning line stays empty rather than repeat the thought line
            reasoning, source = reasoning_of(result.raw, result.reasoning)
            span.outputs = {"judgment": result.value.model_dump(), "reasoning_source": source}
        return result.value, reasoning, source

    async def second_round(self, episode: Episode, queries: Sequence[str],
                           first: list[Hit]) -> tuple[list[Hit], int]:
        """K/2 new chunks from ``kb2`` for ``queries`` (round-robin, MD5-deduplicated against
        round 1 and each other); and how many duplicates were skipped."""
        budget = self.k // 2
        depth = budget + (len(first) + budget if self.backfill else 0)
        rankings = [await episode.retrieve(q, depth, kb=self.kb2, cite=False) for q in queries]
        seen = {h.chunk.md5 for h in first}
        picked: list[tuple[Hit, str]] = []
        skipped = 0
        for rank in range(depth if self.backfill else budget):
            for query, ranking in zip(queries, rankings):
                if len(picked) == budget or rank >= len(ranking):
                    continue
                hit = ranking[rank]
                if hit.chunk.md5 in seen:
                    skipped += 1
                    continue
                seen.add(hit.chunk.md5)
                picked.append((hit, query))
        for hit, query in picked:
            episode.cite([hit], query)
        return [hit for hit, _ in picked], skipped

    def missing_block(self, judgment: Judgment | None, reasoning: str,
                      found: Sequence[Hit]) -> str:
        missing = ", ".join(judgment.missing_knowledge) if judgment else ""
        lines = [prompts.MISSING_LINE.format(missing=missing)]
        if self.thought_line:
            thought = shorten(judgment.thought if judgment else "", self.reasoning_max_words)
            lines.append(prompts.THOUGHT_LINE.format(thought=thought))
        if self.reasoning:
            lines.append(prompts.REASONING_LINE.format(
                reasoning=shorten(reasoning, self.reasoning_max_words)))
        if found:
            lines.append(render_contexts(found))
        return "\n".join(lines)

    async def run(self, episode: Episode) -> Answer:
        question, trace = episode.question, episode.trace
        c1 = await episode.retrieve(question, self.k // 2, kb=self.kb1)
        contexts = render_contexts(c1)
        first = await read(episode, self.first, contexts=contexts, question=question)
        judgment, reasoning, source = await self.judge(episode, contexts, first)
        c2: list[Hit] = []
        skipped = 0
        if judgment is None:
            path = "unreadable"
        elif not judgment.missing:
            path = "sufficient"
        elif not judgment.query:
            path = "missing-without-queries"
            trace.fallback("knowledge judged missing but no query written; round 2 skipped")
        else:
            path = "second-round"
            c2, skipped = await self.second_round(episode, judgment.query, c1)
            if not c2:
                trace.fallback("round 2 found nothing new (every hit duplicated round 1)")
        if path != "second-round" and self.budget_parity:
            parity = await episode.retrieve(question, self.k, kb=self.kb2, cite=False)
            seen = {h.chunk.md5 for h in c1}
            c2 = [h for h in parity if h.chunk.md5 not in seen][:self.k // 2]
            episode.cite(c2, question)
            path += "+budget-parity"
        block = self.missing_block(judgment, reasoning, c2)
        final = await read(episode, self.final, contexts=contexts, missing_block=block,
                           question=question)
        context = f"{contexts}\n{block}"
        details = MisknowDetails(
            first_answer=first, path=path, reasoning=reasoning, reasoning_source=source,
            judgment=MisknowJudgment(**judgment.model_dump()) if judgment else None,
            round1=[h.chunk.id for h in c1], round2=[h.chunk.id for h in c2],
            duplicates_skipped=skipped)
        return episode.finish(final, explanation=reasoning, context=context, details=details)


class StdRAG(BaseMethod):
    """Standard RAG: top-K once (from every KB given, K/n each), the first-round prompt."""

    name = "std-rag"

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 4,
                 kbs: Sequence[str] = (), reader_max_tokens: int = 64) -> None:
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        if kbs and k % len(kbs):
            raise ConfigError(f"k={k} does not split evenly over the {len(kbs)} knowledge bases "
                              f"{list(kbs)}")
        super().__init__(lm, retriever)
        self.k, self.kbs = k, list(kbs)
        self.first = dataclasses.replace(steps.FIRST_ROUND, max_tokens=reader_max_tokens)

    async def run(self, episode: Episode) -> Answer:
        if self.kbs:
            hits = [h for kb in self.kbs
                    for h in await episode.retrieve(episode.question, self.k // len(self.kbs),
                                                    kb=kb)]
        else:
            hits = await episode.retrieve(episode.question, self.k)
        contexts = render_contexts(hits)
        answer = await read(episode, self.first, contexts=contexts, question=episode.question)
        return episode.finish(answer, context=contexts)
