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


__all__ = ["outer_columns"]
