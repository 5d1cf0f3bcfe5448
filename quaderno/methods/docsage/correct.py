"""CLEAR correction: settling conflicting values by backtracking retrieval (spec §3.4).

"For simple omissions or low confidence, a committee of more powerful LLMs is used for
re-extraction. For complex logic conflicts ... the conflicting group along with relevant
source text is submitted to a Verification & Disambiguation Sub-module [that may] initiate
a targeted backtracking retrieval to find decisive evidence from the original documents."

* :mod:`.committee` re-extracts one table from one chunk with a committee, and per cell the
  strict majority wins, else NULL.
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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from quaderno.corpus.chunk import Chunk
from quaderno.errors import LLMError, StepError
from quaderno.llm.lm import LM
from quaderno.llm.steps import Step
from quaderno.llm.trace import Trace
from quaderno.methods.docsage.amounts import read_cell, stated_mentions, stated_spans
from quaderno.methods.docsage.chunk_extract import failed_calls
from quaderno.methods.docsage.normalize import (YEAR_IN_TEXT, fold_text, normalize_value,
                                                plausible_year)
from quaderno.methods.docsage.rows import Correction, Row, coerce
from quaderno.methods.docsage.schema import Column, Table
from quaderno.methods.docsage.spans import surface_forms
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
