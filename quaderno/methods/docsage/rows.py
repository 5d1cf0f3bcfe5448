"""Extracted rows with their provenance, and loading them into DuckDB (spec §1, Eq. 6).

Every row carries where it came from (document, chunk, character span), who extracted it, a
confidence per value and the corrections CLEAR made. In the database a row is a line of its
table plus a line of the side table ``_prov`` sharing its ``_tid``, so a query's result rows
can be traced back to the chunk text.

Values are always bound as parameters, never formatted into SQL: documents are untrusted.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, Field

from quaderno.methods.docsage.schema import TID, Schema, Table

PROV_TABLE = "_prov"
PROV_DDL = (f"CREATE TABLE {PROV_TABLE} ({TID} BIGINT NOT NULL, tbl VARCHAR, doc_id VARCHAR, "
            "chunk_id VARCHAR, char_start INTEGER, char_end INTEGER, extractor VARCHAR, "
            "confidence VARCHAR, corrections VARCHAR)")


class Correction(BaseModel):
    """One change CLEAR made to a cell, with the evidence it rests on."""

    column: str
    old: Any = None
    new: Any = None
    reason: str                       # low-confidence | constraint:<kind> | conflict | ...
    by: str = ""                      # committee | backtracking | alias-merge | ...
    evidence_chunk: str | None = None
    evidence_quote: str = ""


class Provenance(BaseModel):
    doc_id: str = ""
    chunk_id: str
    char_start: int = 0
    char_end: int = 0
    extractor: str = ""
    confidence: dict[str, float] = Field(default_factory=dict)
    # which score produced each confidence: "logprobs" | "samples" (``auto`` mode may use
    # either per chunk); a calibration only applies to the kind it was computed on
    confidence_kind: dict[str, str] = Field(default_factory=dict)
    corrections: list[Correction] = Field(default_factory=list)
    # column -> {chunk: value}: the chunks other rows merged into this one as the same
    # entity gave the same value from, and that value (:func:`.aliases.merge_entities`):
    # the number each of them gave the entity is its number there too, while the cell
    # still holds it (:mod:`.scoped_ids`)
    agreed: dict[str, dict[str, Any]] = Field(default_factory=dict)


def value_chunk(chunk_id: str, corrections: Sequence[Correction], column: str) -> str:
    """The chunk a cell's value came from: the evidence chunk of the cell's latest correction
    that names one (an alias-merge fill, a committee or backtracking fix), else the row's
    own ``chunk_id``."""
    for c in reversed(corrections):
        if c.column == column and c.evidence_chunk:
            return c.evidence_chunk
    return chunk_id


def take_cell(confidence: dict[str, float], kinds: dict[str, str], source: Provenance,
              column: str, value: Any, reason: str) -> Correction:
    """A cell filled from another row (``source``): its score and the kind of score move into
    ``confidence`` and ``kinds`` (in place), and the correction to record names the chunk
    the value came from (:func:`value_chunk`), so the cell keeps its evidence."""
    if column in source.confidence:
        confidence[column] = source.confidence[column]
        kinds.pop(column, None)
        if column in source.confidence_kind:
            kinds[column] = source.confidence_kind[column]
    return Correction(column=column, old=None, new=value, reason=reason, by=reason,
                      evidence_chunk=value_chunk(source.chunk_id, source.corrections, column))


def cell_chunks(chunk_id: str, corrections: Sequence[Correction]) -> dict[str, str]:
    """column -> the chunk its value came from, for the cells whose chunk is not the row's
    own (:func:`value_chunk` of every corrected column)."""
    out = {}
    for column in dict.fromkeys(c.column for c in corrections):
        source = value_chunk(chunk_id, corrections, column)
        if source != chunk_id:
            out[column] = source
    return out


class Row(BaseModel):
    """One tuple of one table. ``tid`` is given when the row enters a database."""

    table: str
    values: dict[str, Any]
    provenance: Provenance
    tid: int | None = None

    def confidence(self) -> float | None:
        """The tuple's confidence: the lowest of its values' (spec §3 Level A)."""
        return min(self.provenance.confidence.values()) if self.provenance.confidence else None


def noted(row: Row, corrections: Sequence[Correction], values: dict | None = None) -> Row:
    """``row`` with ``corrections`` added to its provenance (and ``values``, when given)."""
    prov = row.provenance.model_copy(update={
        "corrections": [*row.provenance.corrections, *corrections]})
    update: dict = {"provenance": prov}
    if values is not None:
        update["values"] = values
    return row.model_copy(update=update)


def row_chunks(row: Row) -> list[str]:
    """Every chunk a row's values came from, its own first (:func:`cell_chunks`)."""
    own = row.provenance.chunk_id
    return list(dict.fromkeys([own, *cell_chunks(own, row.provenance.corrections).values()]))


BIGINT_MIN, BIGINT_MAX = -(2 ** 63), 2 ** 63 - 1  # what DuckDB's INT column (BIGINT) holds
# with fullmatch ("$" admits a final "\n"): digits, then a scale attached or after a space
_NUM = re.compile(r"(?P<num>[-+]?\d+(?:\.\d+)?)\s?(?:(?P<scale>k|m|bn|b)|"
                  r"(?P<word>thousand|million|billion|trillion)s?)?")
# currency codes and words around an amount ("USD 54860M", "43789.5 million dollars")
_CURRENCY_WORDS = re.compile(r"^\s*(?:usd|us\$|eur|gbp)(?![a-z])|\b(?:usd|eur|gbp|dollars?|"
                             r"euros?|pounds?)\s*$")
_SUFFIX = {"k": 3, "thousand": 3, "m": 6, "million": 6, "bn": 9, "b": 9, "billion": 9,
           "trillion": 12}


def exact_number(value: Any) -> Decimal | None:
    """A number read exactly, as a Decimal: a float would round 17-digit ids and counts, hide
    their fraction, and read "8.2 million" as 8199999.999999999. Scales (k, million, bn),
    currency signs, a percent sign and thousands separators are read; None when the value is
    not a number. Currency codes and words around it are read as no more than that."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        # the shortest text that reads back as the same float, not its binary expansion
        # (float.__repr__: a numpy float's own repr is "np.float64(0.1)")
        return Decimal(float.__repr__(value)) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    text = _CURRENCY_WORDS.sub(" ", value.strip().lower().replace(",", ""))
    text = text.lstrip("~≈$€£ ").rstrip("% ").strip()
    found = _NUM.fullmatch(text)
    if found is None:
        return None
    scale = found["scale"] or found["word"]
    exponent = _SUFFIX[scale] if scale else 0
    # the scale goes into the text: Decimal reads a string exactly, arithmetic would round
    # to 28 digits and could turn a fraction into a whole number
    return Decimal(f"{found['num']}e{exponent}")


def whole_number(value: Any) -> int | None:
    """``value`` as the whole number an INT column reads it as (1, "1", " 1 ", 1.0, "-2",
    "1,024", "4.0"), else None (a name, a fraction, a bool, a list)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    number, ok = coerce(value, "INT")
    return number if ok and isinstance(number, int) else None


def coerce(value: Any, col_type: str) -> tuple[Any, bool]:
    """(value as the column's type, True) or (None, False) when it cannot be read; None and
    empty strings are (None, True): a missing value is not a parse failure."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, True
    if isinstance(value, str) and value.strip().lower() in {"null", "none", "n/a", "unknown"}:
        return None, True
    if col_type == "TEXT":
        return (value.strip() if isinstance(value, str) else json.dumps(value)
                if isinstance(value, (list, dict)) else str(value)), True
    if col_type in ("INT", "DOUBLE"):
        num = exact_number(value)
        if num is None:
            return None, False
        if col_type == "INT":  # a fraction is refused, not rounded away
            # beyond 19 digits no BIGINT holds it: refused before int(), which is quadratic
            # in the digits (a million-digit "count" would take most of a minute)
            if num.adjusted() > 18 or num != num.to_integral_value():
                return None, False
            whole = int(num)
            return (whole, True) if BIGINT_MIN <= whole <= BIGINT_MAX else (None, False)
        as_float = float(num)  # beyond any float: inf, refused
        return (as_float, True) if math.isfinite(as_float) else (None, False)
    if col_type == "BOOL":
        if isinstance(value, bool):
            return value, True
        text = str(value).strip().lower()
        if text in {"true", "yes", "1"}:
            return True, True
        if text in {"false", "no", "0"}:
            return False, True
        return None, False
    # DATE: ISO dates, dates written out in English ("10 March 1950", "October 1, 1993",
    # "March 1950" as its first day), or a bare year read as its first of January
    text = str(value).strip()
    try:
        return dt.date.fromisoformat(text[:10]), True
    except ValueError:
        if re.fullmatch(r"\d{4}", text) and int(text) >= dt.MINYEAR:
            return dt.date(int(text), 1, 1), True
        written = written_date(text)
        return (written, True) if written is not None else (None, False)


_MONTHS = {name: n for n, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
     ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
     ("october", "oct"), ("november", "nov"), ("december", "dec")], start=1) for name in names}
_MONTH = r"(?P<month>[a-z]+)\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{3,4})"
_WRITTEN_DATES = [re.compile(p) for p in (
    rf"{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}",      # 10 March 1950, 1st of May, 1801
    rf"{_MONTH}\s+{_DAY},?\s+{_YEAR}",                 # October 1, 1993
    rf"{_MONTH},?\s+{_YEAR}")]                          # March 1950


def written_date(text: str) -> dt.date | None:
    """A whole text that is one date written out in English, as a date ("10 March 1950",
    "October 1, 1993", "Sept. 3rd, 1801"; "March 1950" as its first day); None for
    anything else, an impossible day ("31 February 1950") included."""
    low = " ".join(text.casefold().split()).rstrip(".")   # a sentence's full stop
    for pattern in _WRITTEN_DATES:
        m = pattern.fullmatch(low)
        if m is None or m["month"] not in _MONTHS:
            continue
        try:
            return dt.date(int(m["year"]), _MONTHS[m["month"]],
                           int(m.groupdict().get("day") or 1))
        except ValueError:
            return None
    return None


def typed_values(table: Table, values: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The row's values coerced to the table's column types, unknown keys dropped, and the
    names of the columns whose value could not be read (they become NULL)."""
    out, failed = {}, []
    for col in table.columns:
        value, ok = coerce(values.get(col.name), col.type)
        out[col.name] = value
        if not ok:
            failed.append(col.name)
    return out, failed


def load_rows(conn: Any, schema: Schema, rows: Sequence[Row]) -> list[Row]:
    """Create the schema's tables and ``_prov`` in the DuckDB connection ``conn`` and insert
    ``rows`` (values as bound parameters), numbering them; returns the rows with their tids.
    Rows of tables the schema lacks are skipped."""
    for ddl in schema.ddl():
        conn.execute(ddl)
    conn.execute(PROV_DDL)
    placed: list[Row] = []
    by_table: dict[str, list[Row]] = {}
    for row in rows:
        if schema.table(row.table) is not None:
            by_table.setdefault(row.table, []).append(row)
    tid = 0
    for name, group in by_table.items():
        table = schema.table(name)
        assert table is not None
        cols = [TID] + table.column_names
        sql = f"INSERT INTO {name} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
        params, prov = [], []
        for row in group:
            tid += 1
            values, _ = typed_values(table, row.values)
            params.append([tid] + [values[c] for c in table.column_names])
            p = row.provenance
            prov.append([tid, name, p.doc_id, p.chunk_id, p.char_start, p.char_end,
                         p.extractor, json.dumps(p.confidence),
                         json.dumps([c.model_dump(mode="json") for c in p.corrections])])
            placed.append(row.model_copy(update={"tid": tid}))
        conn.executemany(sql, params)
        conn.executemany(f"INSERT INTO {PROV_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", prov)
    return placed
