"""CLEAR Level B: cross-record constraints checked as SQL in a staging DuckDB (spec §3.3).

"The system stages all candidate tuples {t_k} in a temporary database and runs a lightweight
constraint validation engine to detect the set of tuples V that violate C(S^q)." Here the
engine is deterministic SQL (ambiguity A5), one query per constraint:

* functional dependency lhs → rhs: ``GROUP BY lhs HAVING COUNT(DISTINCT rhs) > 1``
  (text on both sides compared case- and space-insensitively);
* temporal order: ``WHERE before >= after`` when strict, ``before > after`` otherwise;
* numeric range: ``WHERE x NOT BETWEEN ? AND ?`` (a one-sided bound: ``<`` or ``>``), on
  INT and DOUBLE columns only;
* a temporal order between a year (INT) and a DATE compares the DATE's ``year()``; one on
  other types is skipped;
* referential integrity: an anti-join (``NOT EXISTS`` a parent row with the value);
* duplicate key: ``GROUP BY key HAVING COUNT(*) > 1``.

A constraint that does not apply to its columns' types, or that meets a DuckDB error, is
skipped and named in :attr:`CheckResult.skipped`: it never fails the question.

Besides the schema's constraints (:meth:`Schema.all_constraints`: declared ones, unique primary
keys, foreign keys), a table with a primary key implies key → c for each ``single_valued``
column c. Identifiers come only from the validated :class:`Schema`; values (range bounds)
are bound as parameters, never written into SQL text. Run :func:`aliases.canonicalize` and
:func:`aliases.merge_entities` first, or spellings of one entity look like different ones.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

import duckdb
from pydantic import BaseModel, Field

from quaderno.methods.docsage.rows import Row, load_rows
from quaderno.methods.docsage.schema import (Constraint, FunctionalDependency, NumericRange,
                                             ReferentialIntegrity, Schema, TemporalOrder,
                                             UniqueKey)

log = logging.getLogger(__name__)

ViolationKind = Literal["fd", "temporal", "range", "fk", "unique"]


class Violation(BaseModel):
    """Tuples that together break one constraint: their tids, the columns involved and the
    values seen (one list per tid for group constraints, in tid order)."""

    kind: ViolationKind
    table: str
    constraint: dict[str, Any]
    tids: list[int]
    columns: list[str]
    values: list[Any] = Field(default_factory=list)
    message: str = ""


class CheckResult(BaseModel):
    """The staged rows (with the tids the violations name), the violations, and for each
    tid the index of its row in the list that was checked."""

    rows: list[Row]
    violations: list[Violation] = Field(default_factory=list)
    index_of_tid: dict[int, int] = Field(default_factory=dict)
    # constraints not checked (a column type they do not apply to, a database error)
    skipped: list[str] = Field(default_factory=list)

    def by_tid(self) -> dict[int, Row]:
        return {r.tid: r for r in self.rows if r.tid is not None}

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.violations:
            out[v.kind] = out.get(v.kind, 0) + 1
        return out


def implied_dependencies(schema: Schema) -> list[FunctionalDependency]:
    """key → column for every single-valued non-key column of a table with a primary key."""
    out = []
    for t in schema.tables:
        if not t.primary_key:
            continue
        for c in t.columns:
            if c.single_valued and c.name not in t.primary_key:
                out.append(FunctionalDependency(table=t.name, lhs=list(t.primary_key),
                                                rhs=c.name))
    return out


def _cmp(schema: Schema, table: str, col: str, alias: str = "") -> str:
    """A column as compared: text folded (case, surrounding space), others as they are."""
    t = schema.table(table)
    ref = f"{alias}.{col}" if alias else col
    return f"lower(trim({ref}))" if t is not None and t.column(col).type == "TEXT" else ref


def _fd(conn: Any, schema: Schema, c: FunctionalDependency) -> list[Violation]:
    lhs = ", ".join(_cmp(schema, c.table, x) for x in c.lhs)
    not_null = " AND ".join(f"{x} IS NOT NULL" for x in [*c.lhs, c.rhs])
    sql = (f"SELECT {lhs}, list(_tid ORDER BY _tid), list({c.rhs} ORDER BY _tid) "
           f"FROM {c.table} WHERE {not_null} GROUP BY {lhs} "
           f"HAVING COUNT(DISTINCT {_cmp(schema, c.table, c.rhs)}) > 1")
    out = []
    for row in conn.execute(sql).fetchall():
        key, tids, values = row[:len(c.lhs)], row[-2], row[-1]
        out.append(Violation(kind="fd", table=c.table, constraint=c.model_dump(),
                             tids=list(tids), columns=[*c.lhs, c.rhs], values=list(values),
                             message=f"{c.table}: {', '.join(map(str, key))} has "
                                     f"{len(set(map(str, values)))} values of {c.rhs}"))
    return out


class SkippedConstraint(Exception):  # noqa: N818 - a control-flow signal, never raised out
    """A constraint that does not apply to its columns' types; it is skipped and noted."""


_NUMERIC = ("INT", "DOUBLE")


def _col_type(schema: Schema, table: str, col: str) -> str:
    t = schema.table(table)
    if t is None or col not in t.column_names:
        raise SkippedConstraint(f"{table}.{col} is not a column of the schema")
    return t.column(col).type


def _temporal_side(ref: str, own: str, other: str) -> str:
    """A side of a temporal comparison: a DATE compared with a year (INT) by its year."""
    return f"year({ref})" if own == "DATE" and other in _NUMERIC else ref


def _temporal(conn: Any, schema: Schema, c: TemporalOrder) -> list[Violation]:
    tb, ta = _col_type(schema, c.table, c.before), _col_type(schema, c.table, c.after)
    ordered = (*_NUMERIC, "DATE")
    if tb not in ordered or ta not in ordered:
        raise SkippedConstraint(f"temporal order {c.table}.{c.before} ({tb}) before "
                                f"{c.after} ({ta}): not dates or years")
    before, after = _temporal_side(c.before, tb, ta), _temporal_side(c.after, ta, tb)
    op = ">=" if c.strict else ">"
    sql = (f"SELECT _tid, {c.before}, {c.after} FROM {c.table} "
           f"WHERE {before} {op} {after} ORDER BY _tid")
    return [Violation(kind="temporal", table=c.table, constraint=c.model_dump(), tids=[tid],
                      columns=[c.before, c.after], values=[b, a],
                      message=f"{c.table}: {c.before}={b} is not before {c.after}={a}")
            for tid, b, a in conn.execute(sql).fetchall()]


def _range(conn: Any, schema: Schema, c: NumericRange) -> list[Violation]:
    kind = _col_type(schema, c.table, c.column)
    if kind not in _NUMERIC:
        raise SkippedConstraint(f"numeric range on {c.table}.{c.column}, a {kind} column")
    if c.low is not None and c.high is not None:
        where, params = f"{c.column} NOT BETWEEN ? AND ?", [c.low, c.high]
    elif c.low is not None:
        where, params = f"{c.column} < ?", [c.low]
    else:
        where, params = f"{c.column} > ?", [c.high]
    sql = f"SELECT _tid, {c.column} FROM {c.table} WHERE {where} ORDER BY _tid"
    return [Violation(kind="range", table=c.table, constraint=c.model_dump(), tids=[tid],
                      columns=[c.column], values=[x],
                      message=f"{c.table}.{c.column}={x} outside [{c.low}, {c.high}]")
            for tid, x in conn.execute(sql, params).fetchall()]


def _fk(conn: Any, schema: Schema, c: ReferentialIntegrity) -> list[Violation]:
    match = " AND ".join(f"{_cmp(schema, c.ref_table, r, 'p')} = {_cmp(schema, c.table, x, 'c')}"
                         for x, r in zip(c.cols, c.ref_cols))
    not_null = " AND ".join(f"c.{x} IS NOT NULL" for x in c.cols)
    cols = ", ".join(f"c.{x}" for x in c.cols)
    sql = (f"SELECT c._tid, {cols} FROM {c.table} c WHERE {not_null} AND NOT EXISTS "
           f"(SELECT 1 FROM {c.ref_table} p WHERE {match}) ORDER BY c._tid")
    return [Violation(kind="fk", table=c.table, constraint=c.model_dump(), tids=[row[0]],
                      columns=list(c.cols), values=list(row[1:]),
                      message=f"{c.table}.{','.join(c.cols)}={list(row[1:])} has no row in "
                              f"{c.ref_table}")
            for row in conn.execute(sql).fetchall()]


def _unique(conn: Any, c: UniqueKey) -> list[Violation]:
    cols = ", ".join(c.cols)
    not_null = " AND ".join(f"{x} IS NOT NULL" for x in c.cols)
    sql = (f"SELECT {cols}, list(_tid ORDER BY _tid) FROM {c.table} WHERE {not_null} "
           f"GROUP BY {cols} HAVING COUNT(*) > 1")
    return [Violation(kind="unique", table=c.table, constraint=c.model_dump(),
                      tids=list(row[-1]), columns=list(c.cols), values=list(row[:-1]),
                      message=f"{c.table}: key {list(row[:-1])} on {len(row[-1])} rows")
            for row in conn.execute(sql).fetchall()]


def check_one(conn: Any, schema: Schema, c: Constraint) -> list[Violation]:
    """The violations of one constraint in a connection holding the staged tables. Raises
    :class:`SkippedConstraint` for one that does not apply to its columns' types."""
    if isinstance(c, FunctionalDependency):
        return _fd(conn, schema, c)
    if isinstance(c, TemporalOrder):
        return _temporal(conn, schema, c)
    if isinstance(c, NumericRange):
        return _range(conn, schema, c)
    if isinstance(c, ReferentialIntegrity):
        return _fk(conn, schema, c)
    return _unique(conn, c)


def staged_order(schema: Schema, rows: Sequence[Row]) -> list[int]:
    """Indices of ``rows`` in the order :func:`load_rows` numbers them (tid 1, 2, ...):
    grouped by table in order of first appearance, rows of unknown tables left out."""
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        if schema.table(r.table) is not None:
            groups.setdefault(r.table, []).append(i)
    return [i for idx in groups.values() for i in idx]


def check(schema: Schema, rows: Sequence[Row], *, implied: bool = True,
          constraints: Sequence[Constraint] | None = None) -> CheckResult:
    """Stage ``rows`` in a fresh in-memory DuckDB (tids numbered by :func:`load_rows`) and
    run every constraint (default: :meth:`Schema.all_constraints` plus, with ``implied``,
    the key → single-valued-column dependencies)."""
    todo: list[Constraint] = list(constraints if constraints is not None
                                  else schema.all_constraints())
    if implied and constraints is None:
        seen = {(c.table, tuple(c.lhs), c.rhs) for c in todo
                if isinstance(c, FunctionalDependency)}
        todo += [fd for fd in implied_dependencies(schema)
                 if (fd.table, tuple(fd.lhs), fd.rhs) not in seen]
    conn = duckdb.connect(":memory:")
    try:
        conn.execute("SET enable_external_access = false")
        placed = load_rows(conn, schema, rows)
        violations: list[Violation] = []
        skipped: list[str] = []
        for c in todo:
            try:
                violations += check_one(conn, schema, c)
            except SkippedConstraint as exc:
                skipped.append(f"{c.kind} constraint skipped: {exc}")
            except duckdb.Error as exc:   # one bad constraint never sinks the question
                skipped.append(f"{c.kind} constraint {c.model_dump()} skipped: "
                               f"{type(exc).__name__}: {exc}")
        for note in skipped:
            log.info("level B: %s", note)
    finally:
        conn.close()
    log.debug("level B: %d rows, %d constraints, %d violations", len(placed), len(todo),
              len(violations))
    order = staged_order(schema, rows)
    return CheckResult(rows=placed, violations=violations, skipped=skipped,
                       index_of_tid={r.tid: i for r, i in zip(placed, order)
                                     if r.tid is not None})
