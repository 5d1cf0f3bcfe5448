"""PAGER (seed paper 000): outline a page, fill its slots with retrieved knowledge, answer.

Variants (Table 2 ablations): ``iterative`` (the full method), ``parallel`` (sub-queries
for all slots at once, one retrieval each, all slots filled), ``no_iter_retrieval`` (one
retrieval with the question, then every slot filled from it), ``no_outline`` (no page:
iteratively summarize retrieved documents into notes until they suffice).

Fill modes: ``rewrite`` (paper-faithful: the LLM returns the whole page with the first
slot filled; sections it damaged are spliced back) and ``section`` (the LLM writes only
the slot's text, spliced in: far fewer generated tokens).

Weak-model fallbacks, each recorded in the trace: an outline that cannot be parsed or has
no sections → a one-section page titled by the question; more than ``max_sections``
sections → the first ``max_sections``; an empty sub-query → the section title plus the
question; a retrieval returning nothing → the slot is filled from the model's own
knowledge; an unusable fill → the retrieved text itself, truncated; an answer without a
tag → the answer step's repair, then the first line of the reply.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Literal

from quaderno.errors import ConfigError, StepError
from quaderno.index.hits import Hit
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.llm.parsing import Outline, OutlineSection
from quaderno.llm.trace import Trace
from quaderno.methods import pager_steps as steps
from quaderno.methods.base import Answer, Evidence, answer_step, format_docs, retrieve
from quaderno.methods.page import Page, has_placeholder, strip_placeholder

log = logging.getLogger(__name__)

Variant = Literal["iterative", "parallel", "no_iter_retrieval", "no_outline"]
FillMode = Literal["rewrite", "section"]
VARIANTS = ("iterative", "parallel", "no_iter_retrieval", "no_outline")


def gbnf_literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def rewrite_grammar(page: Page, index: int) -> str:
    """A grammar that reproduces ``page`` and lets the model write only section ``index``."""
    before = Page(title=page.title, sections=page.sections[:index]).render()
    head = (before + "\n\n" if before else "") + f"## {page.sections[index].title}\n"
    rest = Page(title="", sections=page.sections[index + 1:]).render()
    tail = ("\n\n" + rest) if rest else ""
    return (f"root ::= {gbnf_literal(head)} body {gbnf_literal(tail)}\n"
            "body ::= [^\\n#<]{20,300}\n")


class Pager:
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
        self.lm, self.retriever = lm, retriever
        self.k, self.max_iters, self.max_sections = k, max_iters, max_sections
        self.variant, self.fill_mode = variant, fill_mode
        suffix = {"iterative": "", "parallel": "-parallel", "no_iter_retrieval": "-no-iter",
                  "no_outline": "-no-outline"}[variant]
        self.name = f"pager{suffix}" + ("-section" if fill_mode == "section" else "")

    # -- page initialization ----------------------------------------------------------
    async def init_page(self, question: str, trace: Trace) -> Page:
        with trace.span("pager.outline", question=question) as span:
            try:
                result = await steps.OUTLINE.run(self.lm, question=question, trace=trace)
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
    async def sub_query(self, question: str, page: Page, index: int, trace: Trace) -> str:
        section = page.sections[index]
        try:
            query = (await steps.SUBQUERY.run(self.lm, question=question, page=page.render(),
                                              trace=trace)).value
        except StepError:
            query = ""
        if not query.strip():
            query = f"{section.title} {question}"
            trace.fallback(f"empty sub-query for section {section.title!r}; using the section "
                           "title and the question")
        return query

    async def fill(self, question: str, page: Page, index: int, sub_query: str,
                   hits: list[Hit], trace: Trace, *, mode: FillMode | None = None) -> None:
        """Fill section ``index`` of ``page`` in place (``mode`` overrides the fill mode)."""
        mode = mode or self.fill_mode
        docs = format_docs(hits)
        ids = [h.chunk.id for h in hits]
        section = page.sections[index]
        with trace.span(f"pager.fill_{mode}", section=section.title,
                        sub_query=sub_query) as span:
            content = None
            try:
                if mode == "section":
                    content = (await steps.FILL_SECTION.run(
                        self.lm, question=question, sub_question=sub_query, docs=docs,
                        page=page.render(), section_title=section.title, trace=trace)).value
                else:
                    result = await steps.FILL_REWRITE.run(
                        self.lm, question=question, sub_question=sub_query, docs=docs,
                        page=page.render(), trace=trace, grammar=rewrite_grammar(page, index))
                    content = self._splice(page, index, result.value, trace, span)
            except StepError as exc:
                trace.fallback(f"fill of {section.title!r} unusable ({exc})", span)
            content = strip_placeholder(content or "")
            if not content:
                content = (" ".join(h.chunk.text for h in hits)[:800] if hits
                           else "No information was found for this section.")
                trace.fallback(f"section {section.title!r} filled with the retrieved text "
                               "(no usable fill)", span)
            page.fill(index, content, sub_query=sub_query, chunk_ids=ids)
            span.outputs = {"content": content, "chunk_ids": ids, "page": page.render()}

    @staticmethod
    def _splice(page: Page, index: int, returned: Outline, trace: Trace, span) -> str | None:
        """Take the target section's text from a rewritten page; keep our own copy of the rest.

        Checks that the other sections came back unchanged; damage (a dropped, renamed or
        rewritten section) is recorded, and our copy wins. Appended sections are ignored.
        """
        target = page.sections[index]
        norm = [t.title.strip().lower() for t in page.sections]
        got_titles = [t.title.strip().lower() for t in returned.sections]
        if got_titles[:len(norm)] == norm:
            # same sections in the same order (the usual case, and the only one under the
            # embedded model's grammar): align by position, which survives repeated titles
            aligned: list[OutlineSection | None] = list(returned.sections[:len(norm)])
        else:
            by_title: dict[str, OutlineSection] = {}
            for sec in returned.sections:
                by_title.setdefault(sec.title.strip().lower(), sec)
            aligned = [by_title.get(t) for t in norm]
        match = aligned[index]
        if match is None and index < len(returned.sections):
            match = returned.sections[index]
            trace.fallback(f"rewritten page renamed section {target.title!r}; took section "
                           f"{index + 1} by position", span)
        damaged = []
        for i, section in enumerate(page.sections):
            if i == index:
                continue
            got = aligned[i]
            expected = section.content if section.filled else ""
            seen = strip_placeholder(got.content) if got is not None else None
            if seen is None or (section.filled and seen.strip() != expected.strip()) or (
                    not section.filled and got is not None and not has_placeholder(got.content)):
                damaged.append(section.title)
        if damaged:
            trace.fallback(f"rewrite changed other sections {damaged}; spliced the target "
                           "section into the previous page", span)
        if len(returned.sections) > len(page.sections):
            trace.fallback(f"rewrite appended {len(returned.sections) - len(page.sections)} "
                           "section(s); ignored", span)
        return match.content if match is not None else None

    # -- answer -----------------------------------------------------------------------
    async def final_answer(self, question: str, context: str, trace: Trace) -> tuple[str, str]:
        return await answer_step(steps.ANSWER, self.lm, trace, page=context, question=question)

    # -- the method -------------------------------------------------------------------
    async def answer(self, question: str, *, trace: Trace | None = None) -> Answer:
        trace = trace or Trace(label=question)
        rounds: list[list[str]] = []
        evidence: list[Evidence] = []
        if self.variant == "no_outline":
            return await self._notes(question, trace, rounds, evidence)
        page = await self.init_page(question, trace)
        if self.variant == "iterative":
            for _ in range(self.max_iters):
                index = page.first_unfilled()
                if index is None:
                    break
                query = await self.sub_query(question, page, index, trace)
                hits = retrieve(self.retriever, query, self.k, trace, rounds, evidence)
                await self.fill(question, page, index, query, hits, trace)
            if not page.complete:
                trace.fallback(f"stopped at max_iters={self.max_iters} with "
                               f"{sum(not s.filled for s in page.sections)} slots unfilled")
        elif self.variant == "parallel":
            await self._parallel(question, page, trace, rounds, evidence)
        else:
            hits = retrieve(self.retriever, question, self.k, trace, rounds, evidence)
            for index in range(len(page.sections))[:self.max_iters]:
                await self.fill(question, page, index, question, hits, trace)
        if self.variant != "iterative" and not page.complete:
            trace.fallback(f"stopped at max_iters={self.max_iters} with "
                           f"{sum(not s.filled for s in page.sections)} slots unfilled")
        context = page.render()
        answer, explanation = await self.final_answer(question, context, trace)
        return Answer(question=question, answer=answer, explanation=explanation,
                      method=self.name, page=page, context=context, evidence=evidence,
                      retrieval_rounds=rounds, supporting_sections=_supporting(page, answer),
                      trace=trace)

    async def _parallel(self, question: str, page: Page, trace: Trace,
                        rounds: list[list[str]], evidence: list[Evidence]) -> None:
        """Sub-queries for all slots from the initial page, one retrieval each, then every
        slot filled from the initial page (independently, concurrently), section mode."""
        indexes = [i for i, s in enumerate(page.sections) if not s.filled][:self.max_iters]
        snapshot = page.model_copy(deep=True)

        async def query_for(i: int) -> str:
            # show the model a page where slot i is the first unfilled one
            view = snapshot.model_copy(deep=True)
            for j in indexes:
                if j < i:
                    view.sections[j].filled, view.sections[j].content = True, "(planned)"
            return await self.sub_query(question, view, i, trace)

        queries = await asyncio.gather(*[query_for(i) for i in indexes])
        all_hits = [retrieve(self.retriever, q, self.k, trace, rounds, evidence) for q in queries]

        async def fill_one(i: int, query: str, hits: list[Hit]) -> tuple[int, Page]:
            view = snapshot.model_copy(deep=True)
            # independent fills cannot each rewrite the shared page: write the slot only
            await self.fill(question, view, i, query, hits, trace, mode="section")
            return i, view

        for i, view in await asyncio.gather(*[fill_one(i, q, h)
                                               for i, q, h in zip(indexes, queries, all_hits)]):
            page.sections[i] = view.sections[i]

    async def _notes(self, question: str, trace: Trace, rounds: list[list[str]],
                     evidence: list[Evidence]) -> Answer:
        """Without initialization: summarize retrieved documents into notes until sufficient."""
        notes, query = "(empty)", question
        for _ in range(self.max_iters):
            hits = retrieve(self.retriever, query, self.k, trace, rounds, evidence)
            with trace.span("notes.summarize", query=query) as span:
                try:
                    notes = (await steps.SUMMARIZE.run(self.lm, question=question, notes=notes,
                                                       docs=format_docs(hits), trace=trace)).value
                except StepError as exc:
                    trace.fallback(f"summary unusable ({exc}); appended the documents", span)
                    notes = f"{notes}\n{format_docs(hits)}"
                span.outputs = {"notes": notes}
            try:
                nxt = (await steps.NEXT_QUERY.run(self.lm, question=question, notes=notes,
                                                  trace=trace)).value
            except StepError:
                nxt = "SUFFICIENT"
                trace.fallback("sufficiency check unusable; stopping")
            if nxt.strip().upper().startswith("SUFFICIENT") or nxt.strip() == query.strip():
                break
            query = nxt
        answer, explanation = await self.final_answer(question, notes, trace)
        return Answer(question=question, answer=answer, explanation=explanation,
                      method=self.name, context=notes, evidence=evidence,
                      retrieval_rounds=rounds, trace=trace)


def _supporting(page: Page, answer: str) -> list[str]:
    """Sections whose text mentions the answer (case-insensitive); else the last filled one."""
    needle = answer.strip().lower()
    hits = [s.title for s in page.sections if s.filled and needle and needle in s.content.lower()]
    if hits:
        return hits
    filled = page.filled_sections()
    return [filled[-1].title] if filled else []
