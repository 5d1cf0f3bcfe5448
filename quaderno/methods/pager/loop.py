"""PAGER's slot loop as the official code runs it (``src/infer_page.py``), for the full method.

While a ``<TO BE FILLED>`` remains (case-insensitive) and fewer than ``max_iters`` fills were
made: the first open slot gets a sub-query from the current page, a retrieval and a fill.

- A fill that gives nothing usable leaves the slot open: the next iteration retries it with a
  new sub-query and retrieval, as the official loop does (its page keeps the placeholder).
  quaderno bounds this (``fill_retries`` retries of one slot, then the retrieved text fills
  it, recorded). A retry asks with another seed (the LM's seed + the attempt), so neither a
  server honouring seeds nor the response cache replays the failed sample; under greedy
  decoding it may still repeat. ``fill_retries >= max_iters`` is the official behaviour.
- A section the model appends in a rewrite fill is kept (the official loop keeps the model's
  whole page) and, when it holds ``<TO BE FILLED>``, filled in turn; sections beyond
  ``max_sections`` are dropped (recorded). A fill that writes its slot but leaves a
  ``<TO BE FILLED>`` after the text keeps the official loop going: an open continuation slot
  is added after it, and the next fill writes it under the title the model gives it.

Every fill, retry and appended section is recorded in :class:`FillLog` (and the trace).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from quaderno.methods.episode import Episode
from quaderno.methods.page import Page, Section, has_placeholder, strip_placeholder
from quaderno.methods.pager.fill import fill_slot

if TYPE_CHECKING:
    from quaderno.methods.pager.method import Pager


class FillLog(BaseModel):
    """What the slot loop did: fills made (each an LLM fill call), slots retried after a failed
    fill, sections the model appended (kept or dropped), slots filled by the fallback."""

    fills: int = 0
    retries: list[str] = Field(default_factory=list)
    appended: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)
    fallback_fills: list[str] = Field(default_factory=list)
    queries: list[str] = Field(default_factory=list)  # every sub-query, in order
    reasks: list[str] = Field(default_factory=list)  # sections whose sub-query was re-asked


CONTINUED = " (continued)"


async def official_loop(pager: Pager, episode: Episode, page: Page, log: FillLog) -> None:
    attempts: Counter[int] = Counter()
    continuations: set[int] = set()  # ids of continuation slots (their title is ours)
    for _ in range(pager.max_iters):
        index = page.first_unfilled()
        if index is None:
            return
        attempts[index] += 1
        title = page.sections[index].title
        if attempts[index] > 1:
            log.retries.append(title)
        last_try = attempts[index] > pager.fill_retries
        # a retry samples anew: another seed, so neither the server nor the cache replays the
        # failed attempt (the official loop samples at temperature 0.7 without a cache)
        seed = None
        if attempts[index] > 1:
            seed = int(episode.lm.defaults.get("seed") or 0) + attempts[index] - 1
        query = await pager.sub_query(episode, page, index, log, seed=seed)
        hits = await episode.retrieve(query, pager.k)
        outcome = await fill_slot(episode, page, index, query, hits, pager.fill_mode,
                                  fallback=last_try, seed=seed)
        log.fills += 1
        if outcome.by_fallback:
            log.fallback_fills.append(title)
        section = page.sections[index]
        if id(section) in continuations and outcome.filled and outcome.title \
                and outcome.title.strip() != title:
            section.title = outcome.title.strip()  # the model named the continued slot
            log.appended.append(section.title)
        if outcome.left_open:
            if len(page.sections) < pager.max_sections:
                slot = Section(title=title.removesuffix(CONTINUED) + CONTINUED)
                page.sections.insert(index + 1, slot)
                continuations.add(id(slot))
                episode.trace.fallback(f"the fill of {title!r} left a <TO BE FILLED> after its "
                                       "text; an open slot follows it (as the official loop "
                                       "goes on)")
            else:
                episode.trace.fallback(f"the fill of {title!r} left a <TO BE FILLED>; no room "
                                       f"for another section (max_sections={pager.max_sections})")
        ids = [h.chunk.id for h in hits]
        for new in outcome.appended:
            if any(s.title.strip().lower() == new.title.strip().lower() for s in page.sections):
                continue  # the same title again: not a new section
            if len(page.sections) >= pager.max_sections:
                log.dropped.append(new.title)
                episode.trace.fallback(f"appended section {new.title!r} dropped: the page has "
                                       f"max_sections={pager.max_sections}")
                continue
            body = strip_placeholder(new.content)
            if has_placeholder(new.content) or not body:
                page.sections.append(Section(title=new.title))
            else:  # written in the same fill: it came from this fill's documents
                page.sections.append(Section(title=new.title, content=body, filled=True,
                                             sub_query=query, chunk_ids=ids))
            log.appended.append(new.title)
            episode.trace.fallback(f"kept the section {new.title!r} the model appended "
                                   "(as the official loop does)")
