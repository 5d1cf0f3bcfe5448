"""The order in which each PAGER variant fills its slots (Table 2's ablations).

- ``iterative`` (the full method): the official slot loop, :func:`.loop.official_loop`.
- :func:`parallel` (Parallel Filling, with A.6's latency note): sub-queries for all slots from
  the initial page at once, one retrieval each, then every slot filled in turn with the
  Fig. 12 prompt from one context holding all the slots' documents.
- :func:`single_retrieval` (w/o iterative retrieval): one retrieval with the question,
  then every slot filled from it.

Each fills at most ``max_iters`` slots of ``page`` in place and counts them in the log.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from quaderno.index.hits import Hit
from quaderno.methods.episode import Episode
from quaderno.methods.page import Page
from quaderno.methods.pager.fill import fill_slot
from quaderno.methods.pager.loop import FillLog, official_loop

if TYPE_CHECKING:
    from quaderno.methods.pager.method import Pager


async def parallel(pager: Pager, episode: Episode, page: Page, log: FillLog) -> None:
    indexes = [i for i, s in enumerate(page.sections) if not s.filled][:pager.max_iters]
    snapshot = page.model_copy(deep=True)

    async def query_for(i: int) -> str:
        # show the model a page where slot i is the first unfilled one
        view = snapshot.model_copy(deep=True)
        for j in indexes:
            if j < i:
                view.sections[j].filled, view.sections[j].content = True, "(planned)"
        return await pager.sub_query(episode, view, i)

    queries = await asyncio.gather(*[query_for(i) for i in indexes])
    # one retrieval per slot, in slot order (the evidence and its numbering stay stable)
    all_hits = [await episode.retrieve(q, pager.k) for q in queries]
    merged: dict[str, Hit] = {}
    for hits in all_hits:  # every slot's documents, in slot order, each once
        for h in hits:
            merged.setdefault(h.chunk.id, h)
    context = list(merged.values())
    for i, query in zip(indexes, queries):
        await fill_slot(episode, page, i, query, context, pager.fill_mode)
        log.fills += 1


async def single_retrieval(pager: Pager, episode: Episode, page: Page, log: FillLog) -> None:
    hits = await episode.retrieve(episode.question, pager.k)
    for index in range(len(page.sections))[:pager.max_iters]:
        await fill_slot(episode, page, index, episode.question, hits, pager.fill_mode)
        log.fills += 1


ORDERS = {"iterative": official_loop, "parallel": parallel,
          "no_iter_retrieval": single_retrieval}
