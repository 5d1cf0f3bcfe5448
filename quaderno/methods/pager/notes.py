"""PAGER without initialization (Table 2's "w/o Initialization" ablation), as the paper
describes it: no page; each round's retrieved documents are refined into a concise summary,
the summaries are concatenated, and the model says whether they suffice or what to retrieve
next, for at most ``max_iters`` rounds. (A single running note rewritten each round, which
this variant was before, is DeepNote's idea: that baseline is :mod:`quaderno.methods.deepnote`.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from quaderno.errors import StepError
from quaderno.methods.answer import Answer
from quaderno.methods.details import NotesDetails
from quaderno.methods.episode import Episode, format_docs
from quaderno.methods.pager import steps

if TYPE_CHECKING:
    from quaderno.methods.pager.method import Pager


async def summarize(episode: Episode, docs: str, query: str) -> str:
    """The round's documents as a concise summary (the documents themselves when unusable)."""
    trace = episode.trace
    with trace.span("notes.summarize", query=query) as span:
        try:
            summary = (await steps.SUMMARIZE.run(episode.lm, question=episode.question,
                                                 docs=docs, trace=trace)).value.strip()
        except StepError as exc:
            summary = ""
            trace.fallback(f"summary unusable ({exc}); kept the documents", span)
        summary = summary or docs
        span.outputs = {"summary": summary}
    return summary


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
    query, summaries = episode.question, []
    notes = ""
    for _ in range(pager.max_iters):
        hits = await episode.retrieve(query, pager.k)
        summaries.append(await summarize(episode, format_docs(hits), query))
        notes = "\n\n".join(summaries)
        nxt = await next_query(episode, notes)
        if nxt.strip().upper().startswith("SUFFICIENT") or nxt.strip() == query.strip():
            break
        query = nxt
    if pager.answer_step == "official":
        from quaderno.methods.pager.method import official_answer

        answer, explanation = await official_answer(episode, notes)
    else:
        answer, explanation = await episode.answer_step(steps.ANSWER, page=notes,
                                                        question=episode.question)
    return episode.finish(answer, explanation=explanation, context=notes,
                          details=NotesDetails(notes=summaries))
