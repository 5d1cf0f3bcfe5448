"""Filling one slot of a page: PAGER's knowledge-completion step, in both fill modes.

``rewrite`` (the paper): the LLM returns the whole page with the slot filled, and the slot's
text is spliced into our page (:mod:`.splice`); for the embedded model a grammar pins every
other section. ``section``: the LLM writes only the slot's text. An unusable fill leaves the
slot open for the official loop to retry (``fallback=False``), or falls back to the
retrieved text itself (quaderno's, recorded). Sections a rewrite appended are returned, for
the caller to keep or drop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from quaderno.errors import StepError
from quaderno.index.hits import Hit
from quaderno.llm.parsing import OutlineSection
from quaderno.llm.trace import Span
from quaderno.methods.episode import Episode, format_docs
from quaderno.methods.page import Page, has_placeholder, strip_placeholder
from quaderno.methods.pager import steps
from quaderno.methods.pager.splice import splice

FillMode = Literal["rewrite", "section"]


@dataclass
class FillOutcome:
    """``filled``: the slot holds text now (the model's, or the retrieved text as fallback);
    ``appended``: sections the rewritten page added after ours."""

    filled: bool
    by_fallback: bool = False
    appended: list[OutlineSection] = field(default_factory=list)
    # the model wrote the slot and left a <TO BE FILLED> after its text: the official loop
    # goes on (its page still has a placeholder), and the next fill writes a new section there
    left_open: bool = False
    title: str | None = None  # the slot's title as the rewritten page gave it


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


async def fill_slot(episode: Episode, page: Page, index: int, sub_query: str,
                    hits: list[Hit], mode: FillMode, *, fallback: bool = True,
                    seed: int | None = None) -> FillOutcome:
    """Fill section ``index`` of ``page`` in place from ``hits``; without a usable fill, the
    retrieved text when ``fallback``, else the slot stays open."""
    trace, lm = episode.trace, episode.lm
    docs = format_docs(hits)
    ids = [h.chunk.id for h in hits]
    section = page.sections[index]
    with trace.span(f"pager.fill_{mode}", section=section.title, sub_query=sub_query) as span:
        content, appended, title = None, [], None
        try:
            if mode == "section":
                content = (await steps.FILL_SECTION.run(
                    lm, question=episode.question, sub_question=sub_query, docs=docs,
                    page=page.render(), section_title=section.title, trace=trace,
                    seed=seed)).value
            else:
                result = await steps.FILL_REWRITE.run(
                    lm, question=episode.question, sub_question=sub_query, docs=docs,
                    page=page.render(), trace=trace, grammar=rewrite_grammar(page, index),
                    seed=seed)
                content, appended, title = _spliced(episode, page, index, result.value, span)
        except StepError as exc:
            trace.fallback(f"fill of {section.title!r} unusable ({exc})", span)
        left_open = bool(content) and has_placeholder(content)
        content = strip_placeholder(content or "")
        left_open = left_open and bool(content)
        by_fallback = False
        if not content and not fallback:
            trace.fallback(f"fill of {section.title!r} failed; the slot stays open", span)
            span.outputs = {"content": "", "chunk_ids": ids, "page": page.render()}
            return FillOutcome(filled=False, appended=appended)
        if not content:
            content = (" ".join(h.chunk.text for h in hits)[:800] if hits
                       else "No information was found for this section.")
            by_fallback = True
            trace.fallback(f"section {section.title!r} filled with the retrieved text "
                           "(no usable fill)", span)
        page.fill(index, content, sub_query=sub_query, chunk_ids=ids)
        span.outputs = {"content": content, "chunk_ids": ids, "page": page.render()}
    return FillOutcome(filled=True, by_fallback=by_fallback, appended=appended,
                       left_open=left_open, title=title)


def _spliced(episode: Episode, page: Page, index: int, returned, span: Span
             ) -> tuple[str | None, list[OutlineSection], str | None]:
    """The slot's text from a rewritten page and the sections it appended; what the rewrite
    did to the rest is recorded."""
    result = splice(page, index, returned)
    trace = episode.trace
    if result.renamed:
        trace.fallback(f"rewritten page renamed section {page.sections[index].title!r}; took "
                       f"section {index + 1} by position", span)
    if result.damaged:
        trace.fallback(f"rewrite changed other sections {result.damaged}; spliced the target "
                       "section into the previous page", span)
    if result.appended:
        trace.fallback(f"rewrite appended {len(result.appended)} section(s): "
                       f"{result.appended}", span)
    return result.content, result.new_sections, result.title
