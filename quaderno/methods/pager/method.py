"""PAGER (seed paper 000): outline a page, fill its slots with retrieved knowledge, answer.

Variants (Table 2 ablations): ``iterative`` (the full method), ``parallel``,
``no_iter_retrieval`` and ``no_outline``; each variant's fill order is in :mod:`.order`,
the notes-based ``no_outline`` in :mod:`.notes`. Fill modes (``rewrite``, the paper's, and
``section``) are in :mod:`.fill`.

Weak-model fallbacks, each recorded in the trace: an outline that cannot be parsed or has
no sections → a one-section page titled by the question; more than ``max_sections``
sections → the first ``max_sections``; an empty sub-query → the section title plus the
question; a retrieval returning nothing → the slot is filled from the model's own
knowledge; an unusable fill → the retrieved text itself, truncated; an answer without a
tag → the answer step's repair, then the first line of the reply.
"""

from __future__ import annotations

import logging
from typing import Literal

from quaderno.errors import ConfigError, StepError
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.parsing import Outline, OutlineSection
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod
from quaderno.methods.details import PagerDetails
from quaderno.methods.episode import Episode
from quaderno.methods.page import Page
from quaderno.methods.pager import steps
from quaderno.methods.pager.fill import FillMode
from quaderno.methods.pager.notes import run_notes
from quaderno.methods.pager.order import ORDERS

log = logging.getLogger(__name__)

Variant = Literal["iterative", "parallel", "no_iter_retrieval", "no_outline"]
VARIANTS = ("iterative", "parallel", "no_iter_retrieval", "no_outline")
SUFFIX = {"iterative": "", "parallel": "-parallel", "no_iter_retrieval": "-no-iter",
          "no_outline": "-no-outline"}


class Pager(BaseMethod):
    """PAGER and its ablations over any retriever and LM.

    ``max_iters`` bounds the slot fills of every variant (the paper's page-construction
    iterations; for ``no_outline``, the summarize rounds).
    """

    def __init__(self, lm: LM, retriever: Retriever | None, *, k: int = 5, max_iters: int = 10,
                 variant: Variant = "iterative", fill_mode: FillMode = "rewrite",
                 max_sections: int = 8) -> None:
        if variant not in VARIANTS:
            raise ConfigError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        if fill_mode not in ("rewrite", "section"):
            raise ConfigError(f"fill_mode must be 'rewrite' or 'section', got {fill_mode!r}")
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        if max_iters < 1:
            raise ConfigError(f"max_iters must be at least 1, got {max_iters}")
        if max_sections < 1:
            raise ConfigError(f"max_sections must be at least 1, got {max_sections}")
        super().__init__(lm, retriever)
        self.k, self.max_iters, self.max_sections = k, max_iters, max_sections
        self.variant, self.fill_mode = variant, fill_mode
        self.name = f"pager{SUFFIX[variant]}" + ("-section" if fill_mode == "section" else "")

    # -- page initialization ----------------------------------------------------------
    async def init_page(self, episode: Episode) -> Page:
        question, trace = episode.question, episode.trace
        with trace.span("pager.outline", question=question) as span:
            try:
                result = await steps.OUTLINE.run(episode.lm, question=question, trace=trace)
                outline: Outline = result.value
            except StepError as exc:
                trace.fallback(f"outline unusable ({exc}); using a one-section page", span)
                outline = Outline(title=question, sections=[])
            if not outline.sections:
                trace.fallback("outline has no sections; using one section for the question",
                               span)
                outline = Outline(title=outline.title or question,
                                  sections=[OutlineSection(title=f"Answering: {question}")])
            if len(outline.sections) > self.max_sections:
                trace.fallback(f"outline has {len(outline.sections)} sections; keeping the "
                               f"first {self.max_sections}", span)
                outline = Outline(title=outline.title,
                                  sections=outline.sections[:self.max_sections])
            page = Page.from_outline(outline, fallback_title=question)
            if page.complete:  # the model wrote content everywhere: re-open every slot
                trace.fallback("outline came pre-filled; every section re-opened", span)
                page = Page(title=page.title,
                            sections=[s.model_copy(update={"filled": False, "content": ""})
                                      for s in page.sections])
            span.outputs = {"page": page.render()}
        return page

    # -- knowledge completion ---------------------------------------------------------
    async def sub_query(self, episode: Episode, page: Page, index: int) -> str:
        section, trace = page.sections[index], episode.trace
        with trace.span("pager.subquery", section=section.title) as span:
            try:
                query = (await steps.SUBQUERY.run(episode.lm, question=episode.question,
                                                  page=page.render(), trace=trace)).value
            except StepError:
                query = ""
            if not query.strip():
                query = f"{section.title} {episode.question}"
                trace.fallback(f"empty sub-query for section {section.title!r}; using the "
                               "section title and the question", span)
            span.outputs = {"sub_query": query}
        return query

    # -- the method -------------------------------------------------------------------
    async def run(self, episode: Episode) -> Answer:
        if self.variant == "no_outline":
            return await run_notes(self, episode)
        page = await self.init_page(episode)
        await ORDERS[self.variant](self, episode, page)
        if not page.complete:
            episode.trace.fallback(f"stopped at max_iters={self.max_iters} with "
                                   f"{sum(not s.filled for s in page.sections)} slots unfilled")
        context = page.render()
        answer, explanation = await episode.answer_step(steps.ANSWER, page=context,
                                                        question=episode.question)
        return episode.finish(answer, explanation=explanation, context=context,
                              details=PagerDetails(page=page),
                              supporting_sections=supporting(page, answer))


def supporting(page: Page, answer: str) -> list[str]:
    """Sections whose text mentions the answer (case-insensitive); else the last filled one."""
    needle = answer.strip().lower()
    hits = [s.title for s in page.sections if s.filled and needle and needle in s.content.lower()]
    if hits:
        return hits
    filled = page.filled_sections()
    return [filled[-1].title] if filled else []
