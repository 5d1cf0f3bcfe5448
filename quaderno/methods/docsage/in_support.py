"""Which rows of an IN test's subquery support which result row (``lineage.py``).

Lineage runs each subquery of a filter on its own and keeps the tuples it read as support.
For ``laureates.name IN (SELECT stedrurial_medal.laureate_name FROM stedrurial_medal WHERE
award_name = 'Stedrurial Medal')`` (the gate writes that shape for a column the query only
filters on, ``semijoin.py``), every medal row then supported every result row: an average
over no laureate at all still cited four medal rows, so it did not count as finding nothing,
and a laureate's answer cited the other laureates' medals.

A row is admitted by such a test through the subquery rows whose value equals its own, so
each result row keeps only those: the values of the test's column in the tuples the row was
computed from, looked up among the subquery's rows. A row computed from no tuple was
admitted by none and keeps none. The whole subquery stays every row's support where that
reading does not hold or cannot be checked: NOT IN (absence is read from every row), a test
outside WHERE or in a query whose rows are not the result's (a threshold subquery, a CTE),
a subquery of several columns, a row whose tuples were not all traced, or a value no
subquery row equals (the two sides compared after a cast).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from quaderno.methods.docsage.records import RowSource


@dataclass
class Support:
    """What one subquery read: its tuples, and for a filtering IN test, the outer column it
    tests (table name, column) and its tuples by the value they gave."""

    tids: list[int] = field(default_factory=list)
    key: tuple[str, str] | None = None
    by_value: dict[Any, list[int]] = field(default_factory=dict)


def in_key(sub: exp.Expression) -> tuple[str, str] | None:
    """(table, column) of the outer side of ``column IN (SELECT one column ...)`` when
    ``sub`` is that subquery and the test filters rows (in WHERE, not under NOT)."""
    test = sub.parent
    query = sub.this if isinstance(sub, exp.Subquery) else None
    if not isinstance(test, exp.In) or test.args.get("query") is not sub or \
            not isinstance(query, exp.Select) or len(query.expressions) != 1 or \
            not isinstance(test.this, exp.Column) or not test.this.table:
        return None
    node: exp.Expression | None = test.parent
    while isinstance(node, (exp.And, exp.Paren)):
        node = node.parent
    if not isinstance(node, exp.Where):
        return None                      # under NOT or OR, in the SELECT list, in ON
    select = node.parent
    if not _gives_result_rows(select):
        return None                      # a threshold, a value or a CTE body: all of it
    alias = test.this.table.lower()
    tables = [t for t in select.find_all(exp.Table)
              if t.find_ancestor(exp.Select) is select and t.alias_or_name.lower() == alias]
    return (tables[0].name.lower(), test.this.name.lower()) if len(tables) == 1 else None


def _gives_result_rows(select: exp.Expression) -> bool:
    """Whether the rows of ``select`` are the query's result rows: the root, or a branch of
    a set operation that is."""
    node = select
    while isinstance(node.parent, exp.SetOperation):
        node = node.parent
    return node.parent is None


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def group_rows(rows: Sequence[Sequence[Any]], tids_of) -> dict[Any, list[int]]:
    """The subquery's tuples by the value of its one column (the row's first)."""
    out: dict[Any, list[int]] = {}
    for row in rows:
        out.setdefault(_hashable(row[0]), []).extend(tids_of(row[-1]))
    return out


def row_support(supports: Sequence[Support], tids: Sequence[int],
                sources: Mapping[int, RowSource], complete: bool) -> list[int]:
    """The support of a result row computed from ``tids`` (``sources``: their tuples, with
    values); ``complete``: whether ``tids`` are all the tuples the row came from."""
    out: dict[int, None] = {}
    for s in supports:
        picked = _picked(s, tids, sources, complete)
        out.update(dict.fromkeys(s.tids if picked is None else picked))
    return list(out)


def _picked(s: Support, tids: Sequence[int], sources: Mapping[int, RowSource],
            complete: bool) -> list[int] | None:
    if s.key is None or not complete:
        return None
    if not tids:
        return []                        # admitted by no row: nothing of it supports
    if any(t not in sources for t in tids):
        return None
    table, column = s.key
    values = {_hashable(sources[t].values.get(column)) for t in tids
              if sources[t].table.lower() == table}
    found = [t for v in values if v is not None for t in s.by_value.get(v, [])]
    return found or None


__all__ = ["Support", "group_rows", "in_key", "row_support"]
