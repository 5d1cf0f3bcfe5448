"""PAGER without initialization (Table 2's "w/o outline" ablation): no page; summarize the
retrieved documents into notes, ask what is still missing, retrieve again, until the notes
suffice or ``max_iters`` rounds have run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from quaderno.errors import StepError
from quaderno.methods.answer import Answer
from quaderno.methods.details import NotesDetails
from quaderno.methods.episode import Episode, format_docs
from quaderno.methods.pager import steps

if TYPE_CHECKING:
    from quaderno.methods.pager.method import Pager


async def summarize(episode: Episode, notes: str, docs: str, query: str) -> str:
    trace = episode.trace
    with trace.span("notes.summarize", query=query) as span:
        try:
            notes = (await steps.SUMMARIZE.run(episode.lm, question=episode.question, notes=notes,
                                               docs=docs, trace=trace)).value
        except StepError as exc:
            trace.fallback(f"summary unusable ({exc}); appended the documents", span)
            notes = f"{notes}\n{docs}"
        span.outputs = {"notes": notes}
    return notes


async def next_query(episode: Episode, notes: str) -> str:
    """The next query, or ``SUFFICIENT``."""
    trace = episode.trace
    with trace.span("notes.next_query") as span:
        try:
            nxt = (await steps.NEXT_QUERY.run(episode.lm, question=episode.question, notes=notes,
                                              trace=trace)).value
        except StepError:
            nxt = "SUFFICIENT"
            trace.fallback("sufficiency check unusable; stopping", span)
        span.outputs = {"next": nxt}
    return nxt


async def run_notes(pager: Pager, episode: Episode) -> Answer:
    notes, query, history = "(empty)", episode.question, []
    for _ in range(pager.max_iters):
        hits = await episode.retrieve(query, pager.k)
        notes = await summarize(episode, notes, format_docs(hits), query)
        history.append(notes)
        nxt = await next_query(episode, notes)
        if nxt.strip().upper().startswith("SUFFICIENT") or nxt.strip() == query.strip():
            break
        query = nxt
    answer, explanation = await episode.answer_step(steps.ANSWER, page=notes,
                                                    question=episode.question)
    return episode.finish(answer, explanation=explanation, context=notes,
                          details=NotesDetails(notes=history))
