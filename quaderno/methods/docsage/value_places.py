"""Where the values a query compares are written, for a query that found nothing.

Over the benchmark's gold tables (``benchmarks/docsage_oracle_tables.py``) the measuring
model wrote ``WHERE achievement = 'the Stedrurial Medal'`` for the medal's laureates and,
told only that the query found nothing, wrote the same query again. A text value a query
compares a column with (``=``, ``IN``) that no row of that column holds, but some other
TEXT column does (a link table ``membership(laureate, award)`` of a discovered schema), is
named with the columns that hold it, so the re-compiled query can read them. Values are
compared folded (case, accents, punctuation; a leading "the" aside), as the rows hold them;
the hint quotes the rows' own spelling, which folds to the query's own value (document text
no longer than it, given as a quoted literal). The gold tables themselves write the medal in
no column (``laureates`` holds its members only): there this says nothing, and the re-run
of 219fad4 repeated the query as before (the oracle script now says what each gold table
holds, as a discovered schema does).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from quaderno.methods.docsage.normalize import folded_name
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table

#: how many columns a hint names per value
_PLACES = 3


def _compared(tree: exp.Expression) -> Iterator[tuple[exp.Column, str]]:
    """(column, text value) for each ``column = 'value'`` (either side) and each text value
    of ``column IN (...)`` in ``tree``."""
    for eq in tree.find_all(exp.EQ):
        for col, lit in ((eq.this, eq.expression), (eq.expression, eq.this)):
            if isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string:
                yield col, lit.this
    for node in tree.find_all(exp.In):
        if isinstance(node.this, exp.Column):
            for lit in node.expressions:
                if isinstance(lit, exp.Literal) and lit.is_string:
                    yield node.this, lit.this


def _column(table: Table, name: str) -> str | None:
    """``table``'s column named ``name`` in any case, as the schema writes it."""
    return next((c.name for c in table.columns if c.name.lower() == name.lower()), None)


class ReadTables(NamedTuple):
    """A query parsed (:func:`read_tables`): its tree, the schema tables it reads (lower
    case), and by which name or alias each is written (an alias written for two tables in
    two scopes keeps the last; ``tables`` keeps both)."""

    tree: exp.Expression
    tables: set[str]
    alias: dict[str, str]


def read_tables(schema: Schema, sql: str) -> ReadTables | None:
    """``sql`` parsed, with the schema tables it reads; None for a query that does not
    parse. The hints for a query that found nothing read the query so (:func:`value_places`,
    :func:`.reason.empty_columns`)."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except SqlglotError:
        return None
    known = {t.name.lower() for t in schema.tables}
    read = [t for t in tree.find_all(exp.Table) if t.name.lower() in known]
    return ReadTables(tree, {t.name.lower() for t in read},
                      {t.alias_or_name.lower(): t.name.lower() for t in read})


def value_places(schema: Schema, rows: Sequence[Row], sql: str) -> list[str]:
    """One sentence per text value ``sql`` compares a column with that no row of that
    column holds and some other TEXT column of the schema does ("'the Stedrurial Medal' is
    in no row of laureates.achievement; it is written in membership.award"), in the order
    the query writes them; none for a query that does not parse."""
    if (parsed := read_tables(schema, sql)) is None:
        return []
    tree, read, alias = parsed
    tables = {t.name.lower(): t for t in schema.tables}
    # folded value -> (table, column) -> the rows' spelling, for every TEXT cell
    held: dict[str, dict[tuple[str, str], str]] = {}
    for r in rows:
        table = tables.get(r.table.lower())
        if table is None:
            continue
        for c in table.columns:
            v = r.values.get(c.name)
            if c.type == "TEXT" and isinstance(v, str) and (f := folded_name(v)):
                held.setdefault(f, {}).setdefault((table.name, c.name), v)
    out, said = [], set()
    for col, value in _compared(tree):
        folded = folded_name(value)
        if not folded or folded in said:
            continue
        owner = alias.get(col.table.lower()) if col.table else None
        # the tables the column may be of: its qualifier's, else every table read that has it
        candidates = [owner] if owner else sorted(read)
        compared = {(tables[t].name, c) for t in candidates
                    if (c := _column(tables[t], col.name)) is not None}
        places = held.get(folded, {})
        if not compared or compared & set(places) or not places:
            continue
        said.add(folded)
        where = ", ".join(f"{t}.{c} (as {spelled!r})" for (t, c), spelled
                          in list(places.items())[:_PLACES])
        out.append(f"{value!r} is in no row of "
                   f"{' or '.join(f'{t}.{c}' for t, c in sorted(compared))}; "
                   f"it is written in {where}.")
    return out


__all__ = ["ReadTables", "read_tables", "value_places"]
