"""The one join a declared foreign key gives, added by the gate when the query lacks it.

The measuring model reads a column from a table its query does not name, and told so
("date is a column of births, which the query does not read: join births ON
births.person_name = people.name") writes the same query again: 13 of 20 2Wiki questions and
the Set1 Statistics question ended there. When the schema leaves a single reading, the gate
writes the join itself: in the SELECT where the column cannot be resolved, with only tables
of the schema as sources, the tables that have the column and are not read are joined to a
read table by

* a foreign key between the two, either way (``births.person_name -> people.name``); or,
  when no such key exists,
* two foreign keys to the same key of a third table (a laureate's nationality and birth
  year, both rows pointing at ``stedrurial_medal.laureate_name``): joined on those columns.

Exactly one such join must exist, else nothing is added and the model gets the hint as
before. The join is a LEFT JOIN, so the rows the query read stay its rows (a person without
a death date is still counted, still matches ``OR date < ...``): the new table only looks
their value up, NULL where it has none, which a comparison or an aggregate skips. Columns the
query wrote without a table that the new table also has are pinned to the table that gave
them before, so the join changes no other column's meaning. What was added is reported
(``CheckedSQL.joined``) and recorded in the trace.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from quaderno.methods.docsage.schema import ForeignKey, Schema, Table

_UNRESOLVED = re.compile(r"Column '([^']+)' could not be resolved(?: for table: '([^']+)')?")


def unresolved(error: str) -> tuple[str, str] | None:
    """The column and its table qualifier ("" when none) a qualify error names."""
    m = _UNRESOLVED.search(error)
    if not m:
        return None
    return m[1].strip('"').split(".")[-1].strip('"').lower(), (m[2] or "").strip('"').lower()


def _on(left: str, cols: list[str], right: str, ref_cols: list[str]) -> exp.Expression:
    pairs = [exp.EQ(this=exp.column(c, table=left), expression=exp.column(r, table=right))
             for c, r in zip(cols, ref_cols, strict=True)]
    condition = pairs[0]
    for p in pairs[1:]:
        condition = exp.And(this=condition, expression=p)
    return condition


def _direct(owner: Table, alias: str, read: Table, at: str) -> list[exp.Expression]:
    """Join conditions a foreign key between ``owner`` (as ``alias``) and ``read`` (as
    ``at``) gives, either way."""
    return ([_on(alias, fk.cols, at, fk.ref_cols) for fk in owner.foreign_keys
             if fk.ref_table == read.name]
            + [_on(at, fk.cols, alias, fk.ref_cols) for fk in read.foreign_keys
               if fk.ref_table == owner.name])


def _shared(owner: Table, alias: str, read: Table, at: str) -> list[exp.Expression]:
    """Join conditions two foreign keys to the same key of a third table give."""
    def same(a: ForeignKey, b: ForeignKey) -> bool:
        return a.ref_table == b.ref_table and a.ref_cols == b.ref_cols and \
            a.ref_table not in (owner.name, read.name)
    return [_on(alias, a.cols, at, b.cols) for a in owner.foreign_keys
            for b in read.foreign_keys if same(a, b)]


def _wanted(scope: Scope, name: str, qualifier: str, aliases: set[str]) -> list[exp.Column]:
    """The columns of this SELECT (not of its subqueries) the error is about."""
    return [c for c in scope.columns
            if c.name.lower() == name and c.find_ancestor(exp.Select) is scope.expression
            and (c.table.lower() == qualifier if qualifier else not c.table)
            and c.table.lower() not in aliases]


def _pin(scope: Scope, read: dict[str, Table], owner: Table) -> None:
    """Columns written without a table that the joined ``owner`` also has keep the one read
    table that gave them before."""
    for col in scope.columns:
        if col.table or col.find_ancestor(exp.Select) is not scope.expression or \
                col.name.lower() not in owner.column_names:
            continue
        givers = [a for a, t in read.items() if col.name.lower() in t.column_names]
        if len(givers) == 1:
            col.set("table", exp.to_identifier(givers[0]))


def add_join(root: exp.Expression, schema: Schema, error: str) -> str | None:
    """Add, in place, the one join that gives the column ``error`` says cannot be resolved
    (module docstring); what was added ("births ON births.person_name = people.name"), or
    None when the schema gives no single join."""
    what = unresolved(error)
    if what is None:
        return None
    name, qualifier = what
    for scope in traverse_scope(root):
        select = scope.expression
        if not isinstance(select, exp.Select) or \
                not all(isinstance(s, exp.Table) for s in scope.sources.values()):
            continue
        read = {a: schema.table(s.name.lower()) for a, s in scope.sources.items()}
        if any(t is None for t in read.values()):
            continue
        aliases = {a.lower() for a in read}
        columns = _wanted(scope, name, qualifier, aliases)
        if not columns:
            continue
        names = {t.name for t in read.values()}
        owners = [t for t in schema.tables if name in t.column_names and t.name not in names
                  and (not qualifier or t.name == qualifier)]
        alias_of = {o.name: o.name if o.name not in aliases else f"{o.name}_joined"
                    for o in owners}
        for kind in (_direct, _shared):
            found = [(o, cond) for o in owners for at, t in read.items()
                     for cond in kind(o, alias_of[o.name], t, at)]
            if found:
                break
        if len(found) != 1:
            return None
        owner, condition = found[0]
        alias = alias_of[owner.name]
        _pin(scope, read, owner)
        for col in columns:
            col.set("table", exp.to_identifier(alias))
        table = exp.to_table(owner.name)
        if alias != owner.name:
            table = exp.alias_(table, alias, table=True)
        select.join(table, on=condition, join_type="left", copy=False)
        return f"LEFT JOIN {owner.name}" + (f" AS {alias}" if alias != owner.name else "") + \
            f" ON {condition.sql('duckdb')} (for {name})"
    return None


__all__ = ["add_join", "unresolved"]
