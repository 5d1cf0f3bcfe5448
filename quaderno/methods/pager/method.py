"""PAGER (seed paper 000): outline a page, fill its slots with retrieved knowledge, answer.

Variants (Table 2 ablations): ``iterative`` (the full method), ``parallel``,
``no_iter_retrieval`` and ``no_outline``; each variant's fill order is in :mod:`.order`,
the notes-based ``no_outline`` in :mod:`.notes`. Fill modes (``rewrite``, the paper's, and
``section``) are in :mod:`.fill`.

The full method's slot loop is the official code's (:mod:`.loop`): a failed fill is retried
with a new sub-query, a section the model appends is kept and filled in turn.

Weak-model fallbacks, each recorded in the trace and in :class:`PagerDetails`: an outline
that cannot be parsed or has no sections → a one-section page titled by the question; more
than ``max_sections`` sections → the first ``max_sections``; an empty sub-query → the
section title plus the question; a sub-query that repeats the question or an earlier one →
re-asked once naming its section (quaderno's, not the paper's); a retrieval returning
nothing → the slot is filled from the model's own knowledge; a fill still unusable after
``fill_retries`` retries → the retrieved text itself, truncated; an answer without a tag →
the answer step's repair, then the first line of the reply.
"""

from __future__ import annotations

import logging
import re
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
from quaderno.methods.pager.loop import FillLog
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
                 max_sections: int = 8, fill_retries: int = 1,
                 answer_step: Literal["quaderno", "official"] = "quaderno") -> None:
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
        if fill_retries < 0:
            raise ConfigError(f"fill_retries must be 0 or more, got {fill_retries}")
        if answer_step not in ("quaderno", "official"):
            raise ConfigError(f"answer_step must be 'quaderno' or 'official', got "
                              f"{answer_step!r}")
        self.answer_step = answer_step
        super().__init__(lm, retriever)
        self.k, self.max_iters, self.max_sections = k, max_iters, max_sections
        self.fill_retries = fill_retries
        self.variant, self.fill_mode = variant, fill_mode
        self.name = f"pager{SUFFIX[variant]}" + ("-section" if fill_mode == "section" else "")

    # -- page initialization ----------------------------------------------------------
    async def init_page(self, episode: Episode, repairs: list[str] | None = None) -> Page:
        """The outline as a page of open slots; each repair a weak model's outline needed is
        recorded in the trace and appended to ``repairs`` (unusable, no_sections,
        truncated, numbered_list, template_echo, placeholders_restored)."""
        question, trace = episode.question, episode.trace
        repairs = repairs if repairs is not None else []

        def repaired(kind: str, note: str, span) -> None:  # noqa: ANN001 - a trace span
            repairs.append(kind)
            trace.fallback(note, span)

        with trace.span("pager.outline", question=question) as span:
            try:
                result = await steps.OUTLINE.run(episode.lm, question=question, trace=trace)
                outline: Outline = result.value
            except StepError as exc:
                repaired("unusable", f"outline unusable ({exc}); using a one-section page",
                         span)
                outline = Outline(title=question, sections=[])
            if outline.form == "list":
                repaired("numbered_list", "outline was a numbered/bulleted list; each item "
                                          "taken as a section", span)
            outline, echoed = _strip_template_echoes(outline)
            if echoed:
                repaired("template_echo", f"outline echoed the prompt's template "
                                          f"({echoed} heading(s)); stripped", span)
            if not outline.sections:
                repaired("no_sections", "outline has no sections; using one section for the "
                                        "question", span)
                outline = Outline(title=outline.title or question,
                                  sections=[OutlineSection(title=f"Answering: {question}")])
            if len(outline.sections) > self.max_sections:
                repaired("truncated", f"outline has {len(outline.sections)} sections; keeping "
                                      f"the first {self.max_sections}", span)
                outline = Outline(title=outline.title,
                                  sections=outline.sections[:self.max_sections])
            page = Page.from_outline(outline, fallback_title=question)
            written = [s.title for s in page.sections if s.filled]
            if written:  # nothing was retrieved yet: text under a heading is a hint, not
                # knowledge (the official loop would never fill such a section)
                repaired("placeholders_restored",
                         f"outline wrote text under {len(written)} of {len(page.sections)} "
                         "section(s) instead of <TO BE FILLED>; re-opened them", span)
                page = Page(title=page.title,
                            sections=[s.model_copy(update={"filled": False, "content": ""})
                                      for s in page.sections])
            span.outputs = {"page": page.render()}
        return page

    # -- knowledge completion ---------------------------------------------------------
    async def sub_query(self, episode: Episode, page: Page, index: int,
                        log: FillLog | None = None, seed: int | None = None) -> str:
        """The retrieval question for section ``index``; with ``log`` (the slot loop), one
        that repeats the question or an earlier sub-query is re-asked once."""
        section, trace = page.sections[index], episode.trace
        with trace.span("pager.subquery", section=section.title) as span:
            try:
                query = (await steps.SUBQUERY.run(episode.lm, question=episode.question,
                                                  page=page.render(), trace=trace,
                                                  seed=seed)).value
            except StepError:
                query = ""
            if not query.strip():
                query = f"{section.title} {episode.question}"
                trace.fallback(f"empty sub-query for section {section.title!r}; using the "
                               "section title and the question", span)
            if log is not None:
                repeats = _repeats(query, episode.question, log.queries)
                if repeats:
                    log.reasks.append(section.title)
                    try:
                        again = (await steps.SUBQUERY_REASK.run(
                            episode.lm, question=episode.question, page=page.render(),
                            previous=query, repeats=repeats, section=section.title,
                            trace=trace, seed=seed)).value.strip()
                    except StepError:
                        again = ""
                    still = _repeats(again, episode.question, log.queries) if again else "it"
                    trace.fallback(f"sub-query for {section.title!r} repeated {repeats}; "
                                   "re-asked" + (f", and it still repeats {still}: kept"
                                                 if still else ""), span)
                    if again:
                        query = again
                log.queries.append(query)
            span.outputs = {"sub_query": query}
        return query

    # -- the method -------------------------------------------------------------------
    async def run(self, episode: Episode) -> Answer:
        if self.variant == "no_outline":
            return await run_notes(self, episode)
        repairs: list[str] = []
        page = await self.init_page(episode, repairs)
        log = FillLog()
        await ORDERS[self.variant](self, episode, page, log)
        if not page.complete:
            episode.trace.fallback(f"stopped at max_iters={self.max_iters} with "
                                   f"{sum(not s.filled for s in page.sections)} slots unfilled")
        context = page.render()
        if self.answer_step == "official":
            answer, explanation = await official_answer(episode, context)
        else:
            answer, explanation = await episode.answer_step(steps.ANSWER, page=context,
                                                            question=episode.question)
        return episode.finish(answer, explanation=explanation, context=context,
                              details=PagerDetails(
                                  page=page, fills=log.fills, retries=log.retries,
                                  appended=log.appended, fallback_fills=log.fallback_fills,
                                  outline_fallbacks=repairs,
                                  subquery_reasks=log.reasks),
                              supporting_sections=supporting(page, answer))


async def official_answer(episode: Episode, page: str) -> tuple[str, str]:
    """The `paper` profile's answer: the official instruction, the tag's text as it is (no
    span reduction), and no answer ("") without a tag, recorded; never re-asked."""
    with episode.trace.span("answer", question=episode.question) as span:
        result = await steps.ANSWER_OFFICIAL.run(episode.lm, page=page,
                                                 question=episode.question,
                                                 trace=episode.trace)
        if not result.value:
            episode.trace.fallback("answer had no <answer> tag: no answer (the official "
                                   "step's rule)", span)
        span.outputs = {"answer": result.value}
    return result.value, result.raw


_ECHO = re.compile(r"^\s*\[\s*(?:main\s+title|section\s+title|title)\s*\]\s*[-–—:|]*\s*",
                   re.I)


def _strip_template_echoes(outline: Outline) -> tuple[Outline, int]:
    """Headings that echo the prompt's template (``[Section Title] - Foo`` → ``Foo``;
    ``[Section Title]`` alone is dropped) and how many there were."""
    echoed = 0
    sections = []
    for s in outline.sections:
        # "[Section Title] - Foo" and a heading mark repeated inside the title ("## ## Foo")
        title = _ECHO.sub("", re.sub(r"^#+\s+", "", s.title.strip())).strip()
        if title != s.title.strip():
            echoed += 1
        if title:
            sections.append(s.model_copy(update={"title": title}))
    main = _ECHO.sub("", outline.title).strip()
    echoed += main != outline.title.strip()
    return Outline(title=main, sections=sections, form=outline.form), echoed


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _repeats(query: str, question: str, earlier: list[str]) -> str:
    """What ``query`` repeats once normalized (case, punctuation, spaces): "the question",
    "an earlier sub-query", or "" when it is new."""
    q = _norm(query)
    if q == _norm(question):
        return "the question"
    if any(q == _norm(e) for e in earlier):
        return "an earlier sub-query"
    return ""


def supporting(page: Page, answer: str) -> list[str]:
    """Sections whose text mentions the answer (case-insensitive); else the last filled one."""
    needle = answer.strip().lower()
    hits = [s.title for s in page.sections if s.filled and needle and needle in s.content.lower()]
    if hits:
        return hits
    filled = page.filled_sections()
    return [filled[-1].title] if filled else []
