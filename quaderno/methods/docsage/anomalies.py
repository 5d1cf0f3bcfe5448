"""Uncertainty signals over extracted rows, computed by code (spec §2 step 2), for ASK.

Pure functions over a list of :class:`Row` (trial extractions), no LLM and no database:

* :func:`alignment_conflicts`: an entity with ≥ 2 distinct normalized values in a
  ``single_valued`` column (entity-alignment conflicts);
* :func:`fk_matches`: foreign-key values matching 0 parent entities (missing) or ≥ 2
  (ambiguous);
* :func:`value_anomalies`: parse-failure rate > 20% in a typed column, robust z-score
  0.6745·|x − median| / MAD > 3.5, years outside [1000, current year + 1], negative counts;
* :func:`null_rates`: share of NULLs per column (ASK flags required columns above 50%).

Each signal names the rows (indices into the given list) and their chunks, so the
clarification question can cite them.
"""

from __future__ import annotations

import datetime as dt
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from quaderno.methods.docsage.normalize import (entity_key, is_null, is_year_column, key_columns,
                                                normalize_entity, normalize_value,
                                                plausible_year)
from quaderno.methods.docsage.rows import Row, coerce
from quaderno.methods.docsage.schema import Column, Schema

PARSE_FAILURE_RATE = 0.2
ROBUST_Z = 3.5
_COUNT_WORDS = re.compile(r"(count|number|num|staff|employees|members|population|students|"
                          r"size|headcount|total|quantity|players|seats)", re.I)


class AlignmentConflict(BaseModel):
    """One entity with several values of a column that should have one."""

    table: str
    entity: tuple[str, ...]   # normalized key
    column: str
    values: list[Any]         # the distinct values as written (first spelling of each)
    rows: list[int]           # indices into the rows given
    chunks: list[str]


class FKMatch(BaseModel):
    """A foreign-key value that names no parent entity, or several."""

    table: str
    column: str
    ref_table: str
    value: Any
    parents: list[str] = Field(default_factory=list)   # normalized keys of matching parents
    rows: list[int]
    chunks: list[str]

    @property
    def kind(self) -> Literal["missing", "ambiguous"]:
        return "missing" if not self.parents else "ambiguous"


class Anomaly(BaseModel):
    """A suspicious value distribution in one column."""

    kind: Literal["parse_failure", "outlier", "implausible_year", "negative_count"]
    table: str
    column: str
    values: list[Any]
    rows: list[int]
    chunks: list[str]
    detail: str = ""


def alignment_conflicts(schema: Schema, rows: Sequence[Row],
                        aliases: Mapping[str, str] | None = None) -> list[AlignmentConflict]:
    """Entities (by normalized key) with ≥ 2 distinct normalized values in a single-valued
    non-key column; tables whose key is never filled are skipped."""
    out = []
    for t in schema.tables:
        keys = set(key_columns(t))
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, r in enumerate(rows):
            if r.table == t.name:
                k = entity_key(t, r.values, aliases)
                if any(k):
                    groups.setdefault(k, []).append(i)
        for col in t.columns:
            if col.name in keys or not col.single_valued:
                continue
            for k, idx in groups.items():
                seen: dict[str, tuple[Any, list[int]]] = {}
                for i in idx:
                    norm = normalize_value(rows[i].values.get(col.name), col.type)
                    if norm is not None:
                        seen.setdefault(norm, (rows[i].values.get(col.name), []))[1].append(i)
                if len(seen) >= 2:
                    members = sorted(i for _, ids in seen.values() for i in ids)
                    out.append(AlignmentConflict(
                        table=t.name, entity=k, column=col.name,
                        values=[v for v, _ in seen.values()], rows=members,
                        chunks=[rows[i].provenance.chunk_id for i in members]))
    return out


def _words(text: str) -> set[str]:
    return set(text.split())


def match_parent(value: str, parents: Iterable[str]) -> list[str]:
    """The parents a foreign-key value names, all normalized (:func:`normalize_entity`):
    the equal one; failing that, those whose words contain all of the value's words, or
    the reverse ("xandria" ~ "xandria university"). One is a match, several are ambiguous,
    none is missing. Used by the detector and by CLEAR's correction alike."""
    found = {p for p in parents if p}
    if not value:
        return []
    if value in found:
        return [value]
    words = _words(value)
    return sorted(p for p in found if words <= _words(p) or _words(p) <= words)


def fk_matches(schema: Schema, rows: Sequence[Row],
               aliases: Mapping[str, str] | None = None) -> list[FKMatch]:
    """Foreign-key values (single-column keys) that match no parent entity or several. A
    value matches a parent whose normalized key equals it; failing that, parents whose key's
    words contain all of the value's words, or the reverse ("Xandria" ~ "Xandria
    University"): one such parent is a match, several are ambiguous."""
    out = []
    for t in schema.tables:
        for fk in t.foreign_keys:
            if len(fk.cols) != 1:
                continue
            col, ref = fk.cols[0], fk.ref_cols[0]
            parents = {normalize_entity(r.values.get(ref), aliases) for r in rows
                       if r.table == fk.ref_table} - {""}
            by_value: dict[str, list[int]] = {}
            for i, r in enumerate(rows):
                if r.table == t.name and not is_null(r.values.get(col)):
                    by_value.setdefault(normalize_entity(r.values.get(col), aliases),
                                        []).append(i)
            for value, idx in by_value.items():
                near = match_parent(value, parents)
                if len(near) == 1:
                    continue
                out.append(FKMatch(table=t.name, column=col, ref_table=fk.ref_table,
                                   value=rows[idx[0]].values.get(col), parents=near, rows=idx,
                                   chunks=[rows[i].provenance.chunk_id for i in idx]))
    return out


def _is_count(col: Column) -> bool:
    return col.type in ("INT", "DOUBLE") and bool(
        _COUNT_WORDS.search(col.name) or _COUNT_WORDS.search(col.description))


def value_anomalies(schema: Schema, rows: Sequence[Row], *,
                    current_year: int | None = None) -> list[Anomaly]:
    """Value-distribution anomalies per typed column (see the module docstring). Robust z
    needs ≥ 5 numbers and a non-zero median absolute deviation."""
    this_year = current_year or dt.date.today().year
    year_max = this_year + 1
    out = []
    for t in schema.tables:
        idx = [i for i, r in enumerate(rows) if r.table == t.name]
        for col in t.columns:
            if col.type == "TEXT":
                continue
            given = [(i, rows[i].values.get(col.name)) for i in idx
                     if not is_null(rows[i].values.get(col.name))]
            parsed = [(i, v, coerce(v, col.type)) for i, v in given]
            failed = [(i, v) for i, v, (_, ok) in parsed if not ok]
            if given and len(failed) / len(given) > PARSE_FAILURE_RATE:
                out.append(_anomaly("parse_failure", t.name, col.name, failed, rows,
                                    f"{len(failed)} of {len(given)} values are not "
                                    f"{col.type}"))
            good = [(i, v, x) for i, v, (x, ok) in parsed if ok and x is not None]
            if is_year_column(col):
                years = [(i, v) for i, v, x in good if not plausible_year(
                    int(x.year if isinstance(x, dt.date) else x), this_year)]
                if years:
                    out.append(_anomaly("implausible_year", t.name, col.name, years, rows,
                                        f"outside [1000, {year_max}]"))
            if col.type not in ("INT", "DOUBLE"):
                continue
            if _is_count(col):
                neg = [(i, v) for i, v, x in good if x < 0]
                if neg:
                    out.append(_anomaly("negative_count", t.name, col.name, neg, rows,
                                        "a count below zero"))
            nums = [float(x) for _, _, x in good]
            if len(nums) >= 5:
                med = statistics.median(nums)
                mad = statistics.median(abs(x - med) for x in nums)
                if mad > 0:
                    far = [(i, v) for i, v, x in good
                           if 0.6745 * abs(float(x) - med) / mad > ROBUST_Z]
                    if far:
                        out.append(_anomaly("outlier", t.name, col.name, far, rows,
                                            f"robust z > {ROBUST_Z} (median {med:g}, "
                                            f"MAD {mad:g})"))
    return out


def _anomaly(kind: Any, table: str, column: str, items: Sequence[tuple[int, Any]],
             rows: Sequence[Row], detail: str) -> Anomaly:
    return Anomaly(kind=kind, table=table, column=column, values=[v for _, v in items],
                   rows=[i for i, _ in items],
                   chunks=[rows[i].provenance.chunk_id for i, _ in items], detail=detail)


def null_rates(schema: Schema, rows: Sequence[Row]) -> dict[str, float]:
    """{"table.column": share of the table's rows with no value, missing meaning
    :func:`normalize.is_null` (None, "", "N/A", "not mentioned", ...)}; tables without rows
    are left out. Pure over ``rows``: ASK's missing-relationship check reads it."""
    out = {}
    for t in schema.tables:
        mine = [r for r in rows if r.table == t.name]
        if not mine:
            continue
        for col in t.columns:
            out[f"{t.name}.{col.name}"] = sum(is_null(r.values.get(col.name))
                                              for r in mine) / len(mine)
    return out
