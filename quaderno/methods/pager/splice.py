"""Splicing a rewritten page (PAGER's ``rewrite`` fill): a pure function, tested directly.

In a rewrite fill the LLM returns the whole page with one slot filled. We take the target
section's text from it and keep our own copy of every other section; what the model did to
the rest is reported, never applied: sections kept as they were, damaged (dropped, renamed,
rewritten, or an open slot filled), appended (new sections after ours), and whether the
target itself came back renamed (then it is taken by position).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from quaderno.llm.parsing import Outline, OutlineSection
from quaderno.methods.page import Page, has_placeholder, strip_placeholder


@dataclass(frozen=True)
class Splice:
    """What a rewritten page gave for section ``index`` and what it did to the others."""

    content: str | None  # the target section's new text (None: nothing usable)
    kept: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)
    appended: list[str] = field(default_factory=list)
    renamed: bool = False  # the target came back under another title; taken by position
    # the appended sections themselves (title and content, placeholder or text), in order
    new_sections: list[OutlineSection] = field(default_factory=list)
    title: str | None = None  # the target's title as the model returned it


def _align(page: Page, returned: Outline) -> list[OutlineSection | None]:
    """The returned section matching each of ours: by position when the titles came back
    in order (the usual case, and the only one under the embedded model's grammar; it
    survives repeated titles), else by title."""
    ours = [s.title.strip().lower() for s in page.sections]
    theirs = [s.title.strip().lower() for s in returned.sections]
    if theirs[:len(ours)] == ours:
        return list(returned.sections[:len(ours)])
    by_title: dict[str, OutlineSection] = {}
    for sec in returned.sections:
        by_title.setdefault(sec.title.strip().lower(), sec)
    return [by_title.get(t) for t in ours]


def _intact(ours, got: OutlineSection | None) -> bool:
    if got is None:
        return False
    if ours.filled:
        return strip_placeholder(got.content).strip() == ours.content.strip()
    return has_placeholder(got.content)


def splice(page: Page, index: int, returned: Outline) -> Splice:
    """Compare ``returned`` (the model's rewrite of ``page`` filling slot ``index``) with
    ``page``; ``page`` is not changed."""
    aligned = _align(page, returned)
    match, renamed = aligned[index], False
    if match is None and index < len(returned.sections):
        match, renamed = returned.sections[index], True
    kept, damaged = [], []
    for i, section in enumerate(page.sections):
        if i != index:
            (kept if _intact(section, aligned[i]) else damaged).append(section.title)
    new = list(returned.sections[len(page.sections):])
    return Splice(content=match.content if match is not None else None, kept=kept,
                  damaged=damaged, appended=[s.title for s in new], renamed=renamed,
                  new_sections=new, title=match.title if match is not None else None)
