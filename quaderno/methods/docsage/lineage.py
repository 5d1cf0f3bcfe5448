"""Provenance of SQL result rows: from each result row back to tuples and chunks (spec §4).

The checked query is rewritten (:mod:`.lineage_rewrite`) so that it also returns, as one extra
last column, the list of ``_tid`` s that produced each result row, for plain and aggregate
queries, CTEs and derived tables alike. Uncorrelated subqueries in WHERE, HAVING or the SELECT
list (IN, scalar, EXISTS) are run on their own, rewritten the same way, and their tids are
kept as ``support_tids`` of every row; a filtering IN test's, only those rows of it that
admitted the row (``in_support.py``).

What cannot be traced exactly (UNION/INTERSECT/EXCEPT without ALL, recursive CTEs, correlated
subqueries, table-less sources) is recorded as ``partial`` with a note, never guessed. The
rewritten query runs *once* in place of the original, so the visible result is the query's own
result with the lineage column stripped; if the rewrite fails to run or times out, the
original runs (with the same time limit; its own timeout is raised) and the lineage is marked
partial; a support subquery that times out is left untraced and marked partial too, and the
support subqueries share one time limit (so a query and its tracing take about three times
the limit at most: the rewrite, the original after a timed-out rewrite, the subqueries, each
with the query process's grace). A query that reads a whole row as a value, or puts a WITH on
a set operation, is answered untraced: either could hand the rewrite row ids of its own. Tids are
then mapped through ``_prov`` to document, chunk and character span, with the row's values.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from quaderno.errors import SQLExecutionError, SQLRefusedError
from quaderno.methods.docsage.aggregates import is_aggregate as _is_aggregate
from quaderno.methods.docsage.in_support import Support, group_rows, row_support
from quaderno.methods.docsage.lineage_rewrite import (LINEAGE, Rewriter, lineage_name,
                                                      support_queries)
from quaderno.methods.docsage.records import RowSource
from quaderno.methods.docsage.rows import PROV_TABLE, Correction, cell_chunks
from quaderno.methods.docsage.sandbox import QueryResult, SQLSandbox, SQLTimeoutError
from quaderno.methods.docsage.schema import TID, Schema
from quaderno.methods.docsage.sqlgate import CheckedSQL

log = logging.getLogger(__name__)

MAX_SUPPORT_QUERIES = 8  # filter subqueries traced per query, each one run on its own


class ResultLineage(BaseModel):
    """The provenance of result row ``row``: the tids that produced it (``tids``), those its
    subqueries read (``support_tids``), and their sources (at most ``max_sources``)."""

    row: int
    mode: Literal["row", "group", "none"]
    tids: list[int] = Field(default_factory=list)
    support_tids: list[int] = Field(default_factory=list)
    sources: list[RowSource] = Field(default_factory=list)
    sources_truncated: bool = False
    partial: bool = False


class TracedResult(BaseModel):
    """A query's result (lineage column removed) with one :class:`ResultLineage` per row."""

    result: QueryResult
    lineage: list[ResultLineage]
    partial: bool = False
    notes: list[str] = Field(default_factory=list)
    requalified: list[str] = Field(default_factory=list)  # see CheckedSQL.requalified
    joined: list[str] = Field(default_factory=list)  # see CheckedSQL.joined
    hoisted: list[str] = Field(default_factory=list)  # see CheckedSQL.hoisted
    respelled: list[str] = Field(default_factory=list)  # see CheckedSQL.respelled


# -- running and mapping ------------------------------------------------------------------------
def _tids(value: Any) -> list[int]:
    if not isinstance(value, (list, tuple)):
        return []
    seen: dict[int, None] = {}
    for v in value:
        if v is not None:
            seen.setdefault(int(v), None)
    return list(seen)


def _written(sql: str) -> exp.Expression | None:
    """The query as written (the gate's qualified tree names the row id where it expands a
    ``*`` or joins a table, and no longer shows some whole-row reads as columns); None when
    it does not parse here, which the callers read as the unsafe answer."""
    try:
        return sqlglot.parse_one(sql, read="duckdb")
    except SqlglotError:        # the gate parsed it
        return None


def _names_row_id(root: exp.Expression) -> bool:
    """Whether the query as written names the row id column."""
    return any(i.name.lower() == TID for i in root.find_all(exp.Identifier))


def _whole_rows(root: exp.Expression, schema: Schema) -> bool:
    """Whether the query as written reads a whole row of a table as a value: a bare name
    that is an alias or name of a table, CTE or derived table of the query and no column of
    the schema (``SELECT t``, ``to_json(t)``, ``unnest(max_by(t, t.staff) OVER ())``)."""
    sources = {a.name.lower() for a in root.find_all(exp.TableAlias) if a.name}
    sources |= {t.name.lower() for t in root.find_all(exp.Table)}
    columns = {c.lower() for t in schema.tables for c in t.column_names}
    return any(not c.table and c.name.lower() in sources and c.name.lower() not in columns
               for c in root.find_all(exp.Column))


def _shows(traced: QueryResult, name: str) -> bool:
    """Whether a visible cell of ``traced`` (all columns but its last) holds ``name``."""
    return any(name in json.dumps(cell, default=str)
               for row in traced.rows for cell in row[:-1]
               if isinstance(cell, (str, dict, list, tuple)))


def _checked(sandbox: SQLSandbox, expression: exp.Expression) -> CheckedSQL:
    """The rewritten query through the gate again: everything model-derived that runs has
    passed it."""
    return sandbox.check(expression.sql(dialect="duckdb", comments=False))


def _support_tids(sandbox: SQLSandbox, root: exp.Expression, rewriter: Rewriter,
                  timeout_s: float, max_rows: int) -> tuple[list[Support], bool]:
    """The tuples each filter subquery read, all of them within one ``timeout_s`` together
    (each ran with the whole limit, and eight slow IN subqueries of a query that itself ran
    at once took eight times it)."""
    deadline = time.monotonic() + timeout_s
    supports: list[Support] = []
    partial = False
    queries = [(q, k) for q, k in support_queries(root) if q.find(exp.Table) is not None]
    if len(queries) > MAX_SUPPORT_QUERIES:
        # each runs on its own, and a model nesting NOT IN 30 deep would run 30 ever deeper
        # queries: the outermost are traced, the rest left partial
        rewriter.notes.append(f"{len(queries) - MAX_SUPPORT_QUERIES} of {len(queries)} "
                              "subqueries not traced (too many)")
        queries, partial = queries[:MAX_SUPPORT_QUERIES], True
    for n, (query, key) in enumerate(queries):
        left = deadline - time.monotonic()
        if left <= 0:
            rewriter.notes.append(f"{len(queries) - n} of {len(queries)} subqueries not "
                                  f"traced (their {timeout_s:g} s were spent)")
            partial = True
            break
        rewritten = rewriter.query(query, {})
        if rewritten is None:
            partial = True
            continue
        try:
            res = sandbox.run_checked(_checked(sandbox, rewritten), timeout_s=left,
                                      max_rows=max_rows)
        except SQLTimeoutError as e:   # the answer stands; only its support is untraced
            rewriter.notes.append(f"subquery not traced (timed out): {str(e)[:120]}")
            partial = True
            continue
        except (SQLExecutionError, SQLRefusedError) as e:
            rewriter.notes.append(f"subquery not traced (correlated?): {str(e)[:120]}")
            partial = True
            continue
        tids = list(dict.fromkeys(t for row in res.rows for t in _tids(row[-1])))
        supports.append(Support(tids=tids, key=None if res.truncated else key,
                                by_value=group_rows(res.rows, _tids) if key else {}))
        partial = partial or res.truncated
    return supports, partial


def _confidence(text: str | None, tid: int) -> dict[str, float]:
    try:
        found = json.loads(text) if text else {}
        return {str(k): float(v) for k, v in found.items()} if isinstance(found, dict) else {}
    except (ValueError, TypeError, AttributeError) as exc:
        log.warning("_prov: unreadable confidences of tid %d (%s)", tid, exc)
        return {}


def _corrections(text: str | None, tid: int) -> list[Correction]:
    try:
        return TypeAdapter(list[Correction]).validate_json(text) if text else []
    except ValidationError as exc:
        log.warning("_prov: unreadable corrections of tid %d (%s)", tid, exc)
        return []


def _sources(sandbox: SQLSandbox, tids: list[int]) -> dict[int, RowSource]:
    if not tids:
        return {}
    prov = sandbox.run_trusted(
        f"SELECT {TID}, tbl, doc_id, chunk_id, char_start, char_end, extractor, confidence, "
        f"corrections FROM {PROV_TABLE} WHERE {TID} IN (SELECT UNNEST(?::BIGINT[]))", [tids],
        max_rows=len(tids) + 1)
    out: dict[int, RowSource] = {}
    by_table: dict[str, list[int]] = {}
    for tid, tbl, doc, chunk, start, end, extractor, conf, fixes in prov.rows:
        corrections = _corrections(fixes, tid)
        out[tid] = RowSource(
            tid=tid, table=tbl, doc_id=doc or "", chunk_id=chunk or "", char_start=start or 0,
            char_end=end or 0, extractor=extractor or "", confidence=_confidence(conf, tid),
            cell_chunks=cell_chunks(chunk or "", corrections),
            corrections=[c.model_dump(mode="json") for c in corrections])
        by_table.setdefault(tbl, []).append(tid)
    for tbl, ids in by_table.items():
        if sandbox.schema.table(tbl) is None:  # names come from the schema, never the model
            continue
        res = sandbox.run_trusted(f"SELECT * FROM {tbl} WHERE {TID} IN "
                                  "(SELECT UNNEST(?::BIGINT[]))", [ids], max_rows=len(ids) + 1)
        for row in res.rows:
            values = dict(zip(res.columns, row, strict=True))
            tid = values.pop(TID)
            out[tid].values = values
    return out


def run_with_lineage(sandbox: SQLSandbox, sql: str, *, timeout_s: float = 5.0,
                     max_rows: int = 10_000, max_sources: int = 50) -> TracedResult:
    """Gate-check and run model-written ``sql`` in ``sandbox``; return its result with the
    provenance of every row. Raises SQLRefusedError, SQLTimeoutError (when the plain query
    times out; a slow lineage rewrite only makes the lineage partial), SQLExecutionError."""
    checked = sandbox.check(sql)
    written = _written(sql)
    if any(i.name.lower().startswith(LINEAGE)
           for i in checked.expression.find_all(exp.Identifier)) or \
            written is None or _names_row_id(written):
        # names of that prefix are DocSage's own (the lineage column's name is random per
        # run, so no query can write it; this refusal only keeps a model's names apart)
        # and the row id: a CTE shadowing a table with its own _tid column chose the
        # tuples its rows cite (review 17)
        raise SQLRefusedError(f"SQL refused (reserved-name): {TID!r} and names starting with "
                              f"{LINEAGE!r} are reserved by DocSage for provenance; name the "
                              "column or alias otherwise", reason="reserved-name", sql=sql)
    # a row read as a value anywhere (unnest(first_value(t) OVER ...), lag(t)) carries the
    # lineage column the rewrite adds to a derived table, and could replace or erase it
    # (review 17): such a query's result stands untraced
    untraced = _whole_rows(written, sandbox.schema)
    rewriter = Rewriter({t.name for t in sandbox.schema.tables}, lineage_name())
    rewritten = None if untraced else rewriter.query(checked.expression, {})
    if untraced:
        rewriter.notes.append("a whole row of a table is read as a value; untraced")
    result: QueryResult | None = None
    mode: Literal["row", "group", "none"] = "none"
    partial = False
    if rewritten is not None:
        try:
            traced = sandbox.run_checked(_checked(sandbox, rewritten), timeout_s=timeout_s,
                                         max_rows=max_rows)
        except SQLTimeoutError as e:
            # the rewrite (extra list aggregation) can be slower than the query itself:
            # run the plain query with the same limit; if that times out too, it raises
            log.warning("lineage rewrite timed out after %.1fs, running the query untraced",
                        timeout_s)
            rewriter.notes.append(f"lineage rewrite timed out ({str(e)[:120]}); untraced")
        except (SQLExecutionError, SQLRefusedError) as e:
            log.warning("lineage rewrite failed, running the query untraced: %s", e)
            rewriter.notes.append(f"lineage rewrite did not run: {str(e)[:160]}")
        else:
            if _shows(traced, rewriter.name):
                # a derived table's whole row read as a value (``SELECT t``, ``to_json(t)``)
                # holds the lineage column the rewrite added: the plain query's result stands
                rewriter.notes.append("a whole row of a derived table is read as a value; "
                                      "untraced")
            elif traced.columns and traced.columns[-1] == rewriter.name:
                names = checked.expression.named_selects  # the re-check may re-case them
                columns = names if len(names) == len(traced.columns) - 1 else traced.columns[:-1]
                result = traced.model_copy(update={
                    "sql": checked.sql, "columns": columns,
                    "rows": [r[:-1] for r in traced.rows]})
                row_tids = [_tids(r[-1]) for r in traced.rows]
                top = rewritten
                while isinstance(top, (exp.SetOperation, exp.Subquery)):
                    top = top.this
                mode = "group" if isinstance(top, exp.Select) and _is_aggregate(top) else "row"
    if result is None:
        try:
            result = sandbox.run_checked(checked, timeout_s=timeout_s, max_rows=max_rows)
        except SQLExecutionError as e:
            e.requalified = list(checked.requalified)  # the repair must know what ran
            e.joined = list(checked.joined)
            e.hoisted = list(checked.hoisted)
            e.respelled = list(checked.respelled)
            raise
        row_tids = [[] for _ in result.rows]
        partial = bool(checked.tables)  # a query that reads no table has nothing to trace
    supports, support_partial = ([], True) if untraced else _support_tids(
        sandbox, checked.expression, rewriter, timeout_s, max_rows)
    traced_rows = not partial   # each row's own tuples are known (before support's notes)
    partial = partial or support_partial or bool(rewriter.notes)
    sources = _sources(sandbox, sorted({t for ts in row_tids for t in ts[:max_sources]}))
    # each row's support: an IN test's rows that admitted it (in_support.py), else all
    per_row = [row_support(supports, tids, sources, traced_rows) for tids in row_tids]
    sources.update(_sources(sandbox, sorted({t for ss in per_row for t in ss[:max_sources]}
                                            - set(sources))))
    lineage = []
    for i, (tids, support) in enumerate(zip(row_tids, per_row, strict=True)):
        picked = [sources[t] for t in (tids + [s for s in support if s not in tids])[:max_sources]
                  if t in sources]
        lineage.append(ResultLineage(
            row=i, mode=mode, tids=tids, support_tids=support, sources=picked,
            sources_truncated=len(tids) + len(support) > max_sources, partial=partial))
    return TracedResult(result=result, lineage=lineage, partial=partial,
                        notes=list(dict.fromkeys(rewriter.notes)),
                        requalified=checked.requalified, joined=checked.joined,
                        hoisted=checked.hoisted, respelled=checked.respelled)
