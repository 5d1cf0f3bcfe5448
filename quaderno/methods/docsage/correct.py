"""CLEAR correction: committee re-extraction and backtracking retrieval (spec §3.4).

"For simple omissions or low confidence, a committee of more powerful LLMs is used for
re-extraction. For complex logic conflicts ... the conflicting group along with relevant
source text is submitted to a Verification & Disambiguation Sub-module [that may] initiate
a targeted backtracking retrieval to find decisive evidence from the original documents."

* :func:`committee_ballots` re-extracts one table from one chunk with a committee: n samples at
  temperature 0.7 of the extraction LM, n samples of a given stronger LM, or one greedy call
  of each of several given LMs; :func:`tally`: per cell the strict majority wins, else NULL.
* :func:`resolve_conflict` settles one entity's conflicting values of one column: retrieval
  with "<entity spellings> <attribute> <candidate values>" (top 5 over all documents) plus
  the conflicting rows' own chunks, and a judge that must choose a value and *quote* the
  decisive words; the quote must really be in the numbered passage (whitespace and case
  aside), or the judgment is refused. Unresolved: the value with the latest dated evidence
  (chunk ``meta['date']``, else the latest year in the value's sentence), else NULL.

Every changed cell gets a :class:`Correction` with its evidence.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, Field

from quaderno.corpus.chunk import Chunk
from quaderno.errors import LLMError, StepError
from quaderno.llm.lm import LM
from quaderno.llm.steps import Step
from quaderno.llm.trace import Trace
from quaderno.methods.docsage.aliases import name_columns_of
from quaderno.methods.docsage.amounts import read_cell, stated_mentions, stated_spans
from quaderno.methods.docsage.chunk_extract import extract_chunk, failed_calls
from quaderno.methods.docsage.extract import ExtractionSettings, extraction_model
from quaderno.methods.docsage.group_keyed import named_for_subject
from quaderno.methods.docsage.normalize import (YEAR_IN_TEXT, cell_form, entity_key, fold_text,
                                                is_null, key_columns, key_name, multi_valued,
                                                normalize_entity, normalize_value,
                                                plausible_year)
from quaderno.methods.docsage.rows import Correction, Row, coerce
from quaderno.methods.docsage.schema import Column, Table
from quaderno.methods.docsage.spans import mentions, surface_forms
from quaderno.methods.docsage.steps import DATA_NOTE, fenced
from quaderno.methods.docsage.figures import number_stated

log = logging.getLogger(__name__)

# (query, k) -> chunks or hits (anything with a ``.chunk``); e.g. Episode.retrieve(cite=False)
Retrieve = Callable[[str, int], Awaitable[Sequence[Any]]]


class Judgment(BaseModel):
    value: str | None = Field(default=None, description="the correct value as the passage "
                              "writes it, or null when no passage decides")
    passage: int = Field(default=0, description="number of the passage that decides (0: none)")
    quote: str = Field(default="", description="the words of that passage that decide, "
                       "copied exactly")


JUDGE = Step(
    name="docsage.clear.judge",
    instruction=(
        "Documents disagree about the {attribute} of {entity}.\n"
        "Candidate values: {candidates}\n\n"
        "Passages:\n<data>\n{passages}\n</data>\n\n"
        "Which value is correct? Prefer the most recent statement and explicit corrections. "
        "Quote the decisive words of one passage exactly as written. If no passage "
        "decides, answer null. " + DATA_NOTE),
    inputs=("entity", "attribute", "candidates", "passages"),
    output=Judgment, max_tokens=300)


def quote_in(quote: str, text: str) -> bool:
    """Whether ``quote`` occurs in ``text`` as :func:`normalize.fold_text` compares text
    (case, accents, punctuation and whitespace aside, so surrounding quotes and ellipses
    do not matter); an empty or very short quote never does."""
    q = fold_text(quote)
    return len(q) >= 8 and q in fold_text(text)


# -- committee ---------------------------------------------------------------------------------
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


# -- backtracking retrieval ----------------------------------------------------------------------
class Resolution(BaseModel):
    """How one conflict was settled; ``value`` None with ``by`` 'unresolved' means NULL."""

    value: Any = None
    by: str                        # stated | backtracking | latest-evidence | unresolved
    evidence_chunk: str | None = None
    evidence_quote: str = ""
    retrieved: list[str] = Field(default_factory=list)


_SENTENCE = re.compile(r"[^.!?\n]*[.!?\n]?")


def _sentence_with(text: str, value: Any, col: str | Column = "TEXT") -> str:
    """The first sentence of ``text`` that writes ``value`` (in any of its surface forms,
    or, given the column, at the scale the text states it: "USD 54860M" for 54860000000)."""
    col_type = col if isinstance(col, str) else col.type
    forms = [f.casefold() for f in surface_forms(value, col_type)]
    spans = [] if isinstance(col, str) else stated_spans(text, value, col)
    for m in _SENTENCE.finditer(text):
        low = m.group(0).casefold()
        if any(f and f in low for f in forms) or any(
                m.start() <= start < m.end() for start, _ in spans):
            return m.group(0).strip()
    return ""


def _read_judged(table: Table, column: str, value: Any, quote: str) -> tuple[Any, str]:
    """The judge's value read as its quote states it, in the column's unit (it copies
    "$42.8 billion" from the passage; the candidates are in whole units), by the rule
    extraction follows (:func:`.amounts.read_cell`): (the value, or None with the reason
    when a count's number is written as money or a measure)."""
    read, change = read_cell(table, table.column(column), value, quote)
    if change is not None and change.reason == "unit":
        return None, f"{value!r} is written as {change.evidence_quote!r}, not a count"
    return read, ""


def evidence_date(chunk: Chunk | None, value: Any,
                  col: str | Column = "TEXT") -> tuple[int, int, int] | None:
    """When a value's evidence is dated: the chunk's ``meta['date']`` (ISO date or year),
    else the latest plausible year in the sentence stating the value (the value itself
    excepted, so "founded in 1874" is not dated 1874). ``col``: the column, or its type."""
    if chunk is None:
        return None
    meta = chunk.meta.get("date") or chunk.meta.get("published")
    if meta:
        text = str(meta)
        try:
            d = dt.date.fromisoformat(text[:10])
            return d.year, d.month, d.day
        except ValueError:
            if text[:4].isdigit():
                return int(text[:4]), 1, 1
    sentence = _sentence_with(chunk.text, value, col)
    years = [int(y) for y in YEAR_IN_TEXT.findall(sentence)
             if y != str(value).strip() and plausible_year(int(y))]
    return (max(years), 1, 1) if years else None


def _value_in(value: Any, quote: str) -> bool:
    v = fold_text(str(value))
    return bool(v) and v in fold_text(quote)


def _passages(chunks: Sequence[Chunk]) -> str:
    return "\n\n".join(f"[{i}] {c.title + ': ' if c.title else ''}{c.text}"
                       for i, c in enumerate(chunks, start=1))


async def resolve_conflict(lm: LM, *, entity: Sequence[str], table: Table, column: str,
                           candidates: Sequence[tuple[Any, str]],
                           chunks: Mapping[str, Chunk], retrieve: Retrieve | None,
                           trace: Trace | None = None, k: int = 5) -> tuple[Resolution, int]:
    """Settle conflicting values of one entity's column: (resolution, LLM calls).
    ``candidates``: (value, chunk id of its evidence) pairs; ``entity``: its spellings.
    A number its own chunk does not state (:func:`.figures.number_stated`: a committee's 0
    offices from a chunk that says nothing of offices, ``docsage-rosters-set2``) is no
    candidate: when one value is left it is taken (``by="stated"``) without a call, and
    when none is left the cell is unresolved."""
    typ = table.column(column).type
    if typ in ("INT", "DOUBLE"):
        col = table.column(column)
        stated = [(v, c) for v, c in candidates
                  if c not in chunks or number_stated(chunks[c].render(), v, col)]
        if len(stated) < len(candidates):
            if trace is not None:
                left = [v for v, c in candidates if (v, c) not in stated]
                trace.fallback(f"docsage.clear.judge: {left} not stated by their own chunks; "
                               f"dropped as candidates ({len(stated)} left)")
            if not stated:
                return Resolution(value=None, by="unresolved"), 0
            checked = [(v, c) for v, c in stated if c in chunks]
            if len({normalize_value(v, typ) for v, _ in stated}) == 1 and checked:
                v, c = checked[0]
                return Resolution(value=v, by="stated", evidence_chunk=c,
                                  evidence_quote=_sentence_with(chunks[c].text, v, col)), 0
            candidates = stated
    values = list(dict.fromkeys(str(v) for v, _ in candidates))
    allowed = {normalize_value(v, typ): v for v, _ in candidates}
    query = " ".join([*dict.fromkeys(entity), column.replace("_", " "), *values])
    retrieved: list[Chunk] = []
    if retrieve is not None:
        for item in await retrieve(query, k):
            retrieved.append(getattr(item, "chunk", item))
    own = [chunks[c] for _, c in candidates if c in chunks]
    passages = list({c.id: c for c in [*own, *retrieved]}.values())
    ids = [c.id for c in retrieved]
    calls = 0
    if passages:
        try:
            result = await JUDGE.run(lm, trace=trace, entity=" / ".join(dict.fromkeys(entity)),
                                     attribute=f"{column} ({table.name})",
                                     candidates=", ".join(values),
                                     passages=fenced(_passages(passages)))
            calls += result.attempts
            j = result.value
            picked, refused = _read_judged(table, column, j.value, j.quote)
            typed, readable = coerce(picked, typ)
            if not readable:    # "about twelve hundred" for a count: no value of the column
                refused = f"{picked!r} is not a {typ}"
                picked = None
            elif typ != "TEXT":
                picked = typed
            chosen = normalize_value(picked, typ)
            if refused and trace is not None:
                trace.fallback(f"docsage.clear.judge: value {refused}; refused")
            if chosen is not None and 1 <= j.passage <= len(passages):
                source = passages[j.passage - 1]
                value = allowed.get(chosen, picked)
                if not quote_in(j.quote, source.text):
                    if trace is not None:
                        trace.fallback(f"docsage.clear.judge: quote {j.quote[:60]!r} is not in "
                                       f"passage {j.passage} ({source.id}); refused")
                elif chosen not in allowed and not _value_in(j.value, j.quote):
                    if trace is not None:
                        trace.fallback(f"docsage.clear.judge: value {j.value!r} is neither a "
                                       "candidate nor in the quote; refused")
                elif typ in ("INT", "DOUBLE") and not stated_mentions(j.quote, value,
                                                                      table.column(column)):
                    # a candidate its quote does not state: the Set2 judge kept a committee's
                    # 0 offices over a chunk's 183, quoting a sentence with no number
                    if trace is not None:
                        trace.fallback(f"docsage.clear.judge: quote {j.quote[:60]!r} does not "
                                       f"state {value!r}; refused")
                else:
                    return Resolution(value=value, by="backtracking", evidence_chunk=source.id,
                                      evidence_quote=j.quote.strip(), retrieved=ids), calls
        except (StepError, LLMError) as exc:
            calls += failed_calls(exc) if isinstance(exc, StepError) else 1
            if trace is not None:
                trace.fallback(f"docsage.clear.judge failed ({exc}); latest evidence instead")
    col = table.column(column)
    dated = [(evidence_date(chunks.get(c), v, col), v, c) for v, c in candidates]
    dated = [d for d in dated if d[0] is not None]
    if dated:
        latest = max(d[0] for d in dated)
        winners = {normalize_value(v, typ) for d, v, _ in dated if d == latest}
        if len(winners) == 1:
            _, v, c = next(d for d in dated if d[0] == latest)
            quote = _sentence_with(chunks[c].text, v, col) if c in chunks else ""
            return Resolution(value=v, by="latest-evidence", evidence_chunk=c,
                              evidence_quote=quote, retrieved=ids), calls
    return Resolution(value=None, by="unresolved", retrieved=ids), calls


def apply_cell(row: Row, column: str, value: Any, *, reason: str, by: str,
               evidence_chunk: str | None = None, quote: str = "",
               confidence: float | None = None) -> Row:
    """``row`` with ``column`` set to ``value`` and a correction recorded (when it changed).
    ``confidence``: the committee's vote share, an agreement score (kind ``samples``)."""
    old = row.values.get(column)
    conf = dict(row.provenance.confidence)
    kinds = dict(row.provenance.confidence_kind)
    if confidence is not None:
        conf[column] = confidence
        kinds[column] = "samples"
    corrections = list(row.provenance.corrections)
    if normalize_value(old) != normalize_value(value):
        corrections.append(Correction(column=column, old=old, new=value, reason=reason, by=by,
                                      evidence_chunk=evidence_chunk, evidence_quote=quote))
    prov = row.provenance.model_copy(update={"confidence": conf, "confidence_kind": kinds,
                                             "corrections": corrections})
    return row.model_copy(update={"values": {**row.values, column: value}, "provenance": prov})
