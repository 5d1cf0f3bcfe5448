"""A column qualified with a table of its SELECT that lacks it, moved to the one table there
that has it, when nothing else could be meant (a repair the gate makes before it checks the
query: :mod:`.sqlgate`).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from quaderno.methods.docsage.schema import Schema


def _outputs(source: object) -> set[str] | None:
    """The column names a derived table or CTE in scope gives (lower case); None when they
    cannot be known (``SELECT *``)."""
    expression = getattr(source, "expression", None)
    if not isinstance(expression, exp.Query):
        return None
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
           for e in getattr(expression, "selects", [])):
        return None
    return {n.lower() for n in expression.named_selects}


def _same_column_compared(col: exp.Column, alias: str) -> bool:
    """Moving ``col`` to ``alias`` would compare a column with itself
    (``ON t1.city_name = t1.city_name``: a join that matches everything)."""
    parent = col.parent
    if not isinstance(parent, exp.Binary):
        return False
    other = parent.right if parent.left is col else parent.left
    return isinstance(other, exp.Column) and other.name.lower() == col.name.lower() \
        and other.table.lower() == alias.lower()


def requalify(root: exp.Expression, schema: Schema) -> list[str]:
    """Move a column qualified with a table that lacks it to the one other table of the same
    SELECT that has it, in place; what was moved. The measuring model joined
    ``league_city AS T1`` with ``city AS T2`` on ``T1.city_name = T2.name`` and selected
    ``T2.city_name``, and on the refusal wrote the same query again: with one table in scope
    holding ``city_name`` there is one reading. Nothing is moved when another reading is
    possible: several tables have the column, a derived table or CTE of the SELECT gives it
    (or gives columns that cannot be known), the column belongs to an enclosing query
    (correlated), or the move would compare the column with itself. The gate refuses those
    as before."""
    moved: list[str] = []
    for scope in traverse_scope(root):
        tables = {a: schema.table(src.name.lower())
                  for a, src in scope.sources.items() if isinstance(src, exp.Table)}
        derived = [_outputs(src) for src in scope.sources.values()
                   if not isinstance(src, exp.Table)]
        by_case = {a.lower(): t for a, t in tables.items()}
        for col in scope.columns:
            table, name = by_case.get(col.table.lower()), col.name.lower()
            if table is None or name in table.column_names or \
                    col.find_ancestor(exp.Select) is not scope.expression:
                continue
            owners = [a for a, t in tables.items() if t is not None and name in t.column_names]
            if len(owners) != 1 or any(d is None or name in d for d in derived) or \
                    _same_column_compared(col, owners[0]):
                continue
            moved.append(f"{col.table}.{col.name} -> {owners[0]}.{col.name}")
            col.set("table", exp.to_identifier(owners[0]))
    return list(dict.fromkeys(moved))


__all__ = ["requalify"]
