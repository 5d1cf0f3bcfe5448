"""A subquery that selects or orders by the enclosing query's columns, refused.

A column a subquery's own tables lack resolves to the enclosing query's table (SQL's
correlation), so a model that gives the subquery the wrong table gets no error and a wrong
answer. The measuring model wrote, for "the chief executive of the company with the fewest
employees in the commission" (``docsage-rosters-set2``)::

    SELECT chief_executive FROM companies WHERE company_name =
      (SELECT company_name FROM commissions WHERE commission_name = '…'
       ORDER BY employees LIMIT 1)

``commissions`` has neither ``company_name`` nor ``employees``: both are the outer row's, the
subquery returns each company's own name, and all 14 companies came back. A correlated
subquery rightly *filters* by an outer column (``WHERE o.id = c.id``); what it selects and
what it orders by are its own rows' values, so a projection made only of outer columns, or
an ORDER BY one, is refused with the subquery's tables and the tables that have the column:
the model's one repair then has what it needs.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from quaderno.methods.docsage.aggregates import is_aggregate
from quaderno.methods.docsage.normalize import key_columns
from quaderno.methods.docsage.schema import Schema


def outer_columns(tree: exp.Expression, schema: Schema) -> str | None:
    """Why a subquery of the qualified ``tree`` reads the enclosing query's columns as its
    own (module docstring), or None."""
    for scope in traverse_scope(tree):
        if not scope.is_subquery or not isinstance(scope.expression, exp.Select):
            continue
        external = {id(c) for c in scope.external_columns}
        if not external:
            continue
        select = scope.expression
        picked = [c for p in select.selects
                  if (cols := list(p.find_all(exp.Column))) and all(id(c) in external
                                                                   for c in cols)
                  for c in cols]
        order = select.args.get("order")
        ordered = [c for o in (order.expressions if order else [])
                   if (cols := list(o.find_all(exp.Column))) and all(id(c) in external
                                                                    for c in cols)
                   for c in cols]
        bad = list(dict.fromkeys(c.name for c in [*picked, *ordered]))
        if not bad:
            continue
        inner = sorted({s.name for s in scope.sources.values() if isinstance(s, exp.Table)})
        does = [f"{verb} {', '.join(dict.fromkeys(c.name for c in cols))}"
                for verb, cols in (("selects", picked), ("orders by", ordered)) if cols]
        owners = {n: [t.name for t in schema.tables if n in t.column_names] for n in bad}
        where = "; ".join(f"{n} is a column of {', '.join(o) or 'no table'}"
                          for n, o in owners.items())
        return (f"the subquery over {', '.join(inner) or 'its sources'} {' and '.join(does)}, "
                f"which {'it does' if len(inner) == 1 else 'its tables do'} not have: SQL "
                "reads them from the enclosing query's row, so the subquery gives that row's "
                f"own value. {where}: read them from their table inside the subquery (FROM "
                "it, or JOIN it there), or order the enclosing query instead")
    return None


def _sole_filter(test: exp.Expression, outer: exp.Select) -> bool:
    """``test`` is the whole of ``outer``'s WHERE (in parentheses or not): not under NOT, OR
    or AND, nor in the SELECT list or a JOIN's ON."""
    node = test.parent
    while isinstance(node, exp.Paren):
        node = node.parent
    return isinstance(node, exp.Where) and node is outer.args.get("where")


def _members_of_outer(test: exp.In, outer: exp.Select, schema: Schema) -> bool:
    """The ``IN`` test compares the whole key of the one table the enclosing SELECT reads,
    with no join, with what the subquery lists (``company_name IN (SELECT company_name FROM
    commissions ...)``): the subquery lists the enclosing query's own entities, one row
    each."""
    col, source = test.this, (outer.args.get("from_") or outer.args.get("from"))
    if not isinstance(col, exp.Column) or source is None or \
            not isinstance(source.this, exp.Table) or outer.args.get("joins"):
        return False
    table = schema.table(source.this.name)
    return table is not None and col.table in ("", source.this.alias_or_name) and \
        key_columns(table) == [col.name]


def hoist_order(tree: exp.Expression, schema: Schema) -> str | None:
    """Move a subquery's ORDER BY of the enclosing query's columns, with its LIMIT, out to the
    enclosing query, in place, when that is the one reading; what was moved, or None.

    The measuring model wrote, for "the chief executive of the company with the fewest
    employees in the commission" (``docsage-head-set2``, refused and repeated word for
    word)::

        SELECT chief_executive FROM companies WHERE company_name IN
          (SELECT company_name FROM commissions WHERE commission_name = '…'
           GROUP BY company_name ORDER BY employees LIMIT 1)

    ``employees`` is the enclosing row's, so the subquery's order says nothing; ordering the
    members it selects by the enclosing query's column is what the refusal tells the model
    to write. Moved only when the subquery is an ``IN (subquery)`` test that is the whole
    WHERE of the enclosing SELECT (no NOT, OR or AND around it) on the whole key of the one
    table it reads without a join (the subquery lists its entities, one row each), selects
    its own columns, orders by the enclosing query's columns alone, has a LIMIT (no query in
    it) and no OFFSET; and the enclosing SELECT has no ORDER BY, LIMIT, DISTINCT, QUALIFY,
    GROUP BY, aggregate or window of its own (its rows are then the members, and its order
    is free)."""
    for scope in traverse_scope(tree):
        select = scope.expression
        if not scope.is_subquery or not isinstance(select, exp.Select):
            continue
        order, limit = select.args.get("order"), select.args.get("limit")
        if order is None or limit is None or select.args.get("offset") is not None or \
                limit.find(exp.Select) is not None:
            continue
        external = {id(c) for c in scope.external_columns}
        if not external or not all(
                (cols := list(o.find_all(exp.Column))) and all(id(c) in external for c in cols)
                for o in order.expressions):
            continue
        if any((cols := list(p.find_all(exp.Column))) and all(id(c) in external for c in cols)
               for p in select.selects):
            continue
        wrapper = select.parent
        test = wrapper.parent if isinstance(wrapper, exp.Subquery) else None
        if not isinstance(test, exp.In) or test.args.get("query") is not wrapper:
            continue
        outer = test.find_ancestor(exp.Select)
        if outer is None or not _sole_filter(test, outer) or \
                not _members_of_outer(test, outer, schema) or \
                any(outer.args.get(a) for a in ("order", "limit", "offset", "distinct",
                                                 "qualify")) or \
                is_aggregate(outer) or any(p.find(exp.Window) for p in outer.selects):
            continue
        moved = f"{order.sql('duckdb')} {limit.sql('duckdb')}"
        select.set("order", None)
        select.set("limit", None)
        outer.set("order", order)
        outer.set("limit", limit)
        return moved
    return None


__all__ = ["hoist_order", "outer_columns"]
