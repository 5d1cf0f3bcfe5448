"""CLEAR's committee: re-extraction by several voters, and the vote per cell (spec §3.4).

"For simple omissions or low confidence, a committee of more powerful LLMs is used for
re-extraction."

* :func:`committee_ballots` re-extracts one table from one chunk with a committee: n samples at
  temperature 0.7 of the extraction LM, n samples of a given stronger LM, or one greedy call
  of each of several given LMs; :func:`tally`: per cell the strict majority wins, else NULL.

A complex conflict between values is settled by backtracking retrieval instead
(:mod:`.correct`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel

from quaderno.corpus.chunk import Chunk
from quaderno.errors import StepError
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.docsage.aliases import name_columns_of
from quaderno.methods.docsage.chunk_extract import extract_chunk, failed_calls
from quaderno.methods.docsage.extract import ExtractionSettings, extraction_model
from quaderno.methods.docsage.group_keyed import named_for_subject
from quaderno.methods.docsage.normalize import (cell_form, entity_key, is_null, key_columns,
                                                key_name, multi_valued, normalize_entity)
from quaderno.methods.docsage.schema import Table
from quaderno.methods.docsage.spans import mentions


class CellVote(BaseModel):
    value: Any = None
    share: float = 0.0
    majority: bool = False


async def committee_ballots(lm: LM, chunk: Chunk, table: Table, settings: ExtractionSettings,
                            *, committee: LM | Sequence[LM] | None = None, n: int = 3,
                            trace: Trace | None = None) -> tuple[list[list[dict[str, Any]]], int]:
    """Re-extract ``table`` from ``chunk`` once per committee member: (each member's rows,
    calls). Members: one greedy call of each LM when several are given, else ``n`` samples
    at the settings' temperature of the given LM (a stronger one) or of ``lm``. A member
    that fails gives no rows (so it votes NULL, or abstains for an entity its chunk names:
    CLEAR leaves empty ballots out of those votes)."""
    voters: list[tuple[LM, float, int | None]]
    if isinstance(committee, Sequence) and len(committee) >= 2:
        voters = [(m, 0.0, None) for m in committee]
    else:
        one = committee if isinstance(committee, LM) else (
            committee[0] if isinstance(committee, Sequence) and committee else lm)
        voters = [(one, settings.sample_temperature, 1000 + s) for s in range(n)]
    ballots: list[list[dict[str, Any]]] = []
    calls = 0
    output = extraction_model([table])
    for voter, temperature, seed in voters:
        try:
            rows, used = await extract_chunk(voter, chunk, [table], settings, trace=trace,
                                             temperature=temperature, seed=seed,
                                             with_confidence=False, output=output)
            calls += used
        except StepError as exc:
            calls += failed_calls(exc)
            if trace is not None:
                trace.fallback(f"docsage.clear.committee: a vote on chunk {chunk.id} failed "
                               f"({exc}); it reads no row")
            rows = {}
        # renamed as the read it votes on was (group_keyed.py)
        ballots.append([r.values for r in named_for_subject(table, rows.get(table.name, []),
                                                             chunk.title, chunk.text)])
    return ballots, calls


def voting_ballots(ballots: Sequence[Sequence[Mapping[str, Any]]], table: Table,
                   values: Mapping[str, Any], text: str) -> list[Sequence[Mapping[str, Any]]]:
    """The ballots that vote on the row ``values`` read from ``text``: a ballot that found no
    row at all (or failed) says nothing of an entity the text names, and abstains (two
    empty reads of three dropped Dyrte Fourzixze's stated row in ``fixes-docsage-set1``);
    for an entity it does not name, every ballot votes (an empty one votes NULL)."""
    name = key_name(table, values)
    if name and mentions(text, name, "TEXT"):
        return [b for b in ballots if b]
    return list(ballots)


class _Match(NamedTuple):
    """How a ballot's rows are matched with the target: by the key columns ``by``, no
    name in ``names`` contradicting the target's, ``dropped`` the key columns left out."""

    by: list[str]
    names: list[str]
    dropped: list[str]


def _match(table: Table, target: Mapping[str, Any], invented: Sequence[str]) -> _Match:
    """By the whole key; with ``invented`` key columns (an id no chunk states), by the rest
    of the key and the columns naming the entity the id numbers
    (:func:`.aliases.name_columns_of`, where the target has a value), when the target has
    some of the rest; else by the whole key as before."""
    keys = key_columns(table)
    rest = [k for k in keys if k not in invented]
    if len(rest) == len(keys) or not any(not is_null(target.get(k)) for k in rest):
        return _Match(keys, [], [])
    names = [c for c in name_columns_of(table, invented)
             if c not in keys and not is_null(target.get(c))]
    return _Match(rest, names, [k for k in keys if k in invented])


def _voters_rows(ballot: Sequence[Mapping[str, Any]], table: Table, target: Mapping[str, Any],
                 col: str, aliases: Mapping[str, str] | None,
                 match: _Match | None = None) -> list[Mapping[str, Any]]:
    """The rows of one ballot that are ``target``'s row for a vote on ``col``: the same
    entity (by ``match``, else the whole key); for a key or multi-valued column also the
    same values of the other multi-valued columns (where the target has one: a NULL there
    matches any). A single-valued column depends on the entity alone, so any of its rows
    votes."""
    keys = key_columns(table)
    match = match or _Match(keys, [], [])
    parts = [i for i, k in enumerate(keys) if k in match.by]

    def entity(values: Mapping[str, Any]) -> tuple[str, ...]:
        whole = entity_key(table, values, aliases)
        return tuple(whole[i] for i in parts)
    key = entity(target)
    named = {c: normalize_entity(target.get(c), aliases) for c in match.names}
    rows = [r for r in ballot if entity(r) == key and all(
        is_null(r.get(c)) or normalize_entity(r.get(c), aliases) == n for c, n in named.items())]
    if table.column(col).single_valued and col not in keys:
        return rows
    for m in multi_valued(table):
        want = cell_form(table, m, target.get(m), aliases)
        if m != col and want is not None:
            rows = [r for r in rows if cell_form(table, m, r.get(m), aliases) == want]
    return rows


VoteRule = Literal["committee", "first-read-breaks-ties", "with-first-read", "keep-first-read"]


def tally(ballots: Sequence[Sequence[Mapping[str, Any]]], table: Table,
          target: Mapping[str, Any], columns: Sequence[str],
          aliases: Mapping[str, str] | None = None,
          rule: VoteRule = "committee", invented: Sequence[str] = ()) -> dict[str, CellVote]:
    """Per-cell vote on ``columns`` of the row whose entity key matches ``target``'s: the
    strict majority's value, else NULL with ``majority`` False; a ballot without the row
    votes NULL. A multi-valued cell the target has can only be confirmed (a ballot has the
    entity with that value) or voted NULL, never turned into another of the entity's values;
    one the target lacks is filled like any other cell. ``rule``: ``committee`` counts the
    ballots alone; ``first-read-breaks-ties`` does too, and without a strict majority keeps
    the target's value (``target``: the read the vote is on) when it has as many ballots as
    any other value (a tie it is part of: a re-read that gives the first read's "183
    offices" and one that finds no offices, the third empty and abstaining); a NULL first
    read breaks no tie; ``with-first-read`` counts ``target`` as one more ballot;
    ``keep-first-read`` does too, and without a strict majority keeps the target's value.
    ``majority`` is False whenever no value has a strict majority. ``invented``: key
    columns holding an id no chunk states (:func:`.aliases.unstated_ids`; the model numbered
    each read anew): when the target has some of the rest of its key, a ballot's row is the
    target's by that rest and by the entity's name (:func:`_match`), the id is not voted on,
    and a ballot with several such rows that disagree on a cell votes it NULL (two laureates
    of one nationality are not told apart by it); else the id aligns as before."""
    if rule in ("with-first-read", "keep-first-read"):
        ballots = [*ballots, [dict(target)]]
    match = _match(table, target, invented)
    out = {}
    for col in columns:
        if col in match.dropped:
            continue
        rows = [_voters_rows(b, table, target, col, aliases, match) for b in ballots]
        want = cell_form(table, col, target.get(col), aliases)
        if not table.column(col).single_valued and want is not None:
            picks = [{col: target.get(col)} if any(
                cell_form(table, col, r.get(col), aliases) == want for r in found) else {}
                for found in rows]
        else:
            picks = [dict(found[0]) if found and not (match.dropped and len(
                {cell_form(table, col, r.get(col), aliases) for r in found}) > 1) else {}
                for found in rows]
        votes = [cell_form(table, col, p.get(col), aliases) for p in picks]
        counted = Counter(votes)
        best, count = counted.most_common(1)[0]
        if count * 2 > len(picks):
            value = next(p.get(col) for p, v in zip(picks, votes) if v == best)
            out[col] = CellVote(value=value if best is not None else None,
                                share=count / len(picks), majority=True)
        else:
            first = cell_form(table, col, target.get(col), aliases)
            breaks = rule == "first-read-breaks-ties" and first is not None and \
                counted[first] == count
            kept = rule == "keep-first-read" or breaks
            out[col] = CellVote(value=target.get(col) if kept else None,
                                share=count / len(picks), majority=False)
    return out


__all__ = ["CellVote", "VoteRule", "committee_ballots", "tally", "voting_ballots"]
