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


def unqualify(root: exp.Expression, schema: Schema) -> list[str]:
    """Drop, in place, the qualifier of a column given to a table of its SELECT that lacks
    it when no table the query reads anywhere has it, so that the gate can join the table
    that does (``autojoin.py``); what was dropped. The measuring model selected
    ``T2.chief_executive`` with ``T2`` a membership table and the column in a sibling table
    the query did not read; told the join, it wrote the same query three times
    (``s13h-docsage-set2``). With no table of the query holding the column, the bare
    column cannot stand for another one, nor bind to an enclosing query. Nothing is
    dropped when a derived table or CTE of the query gives the column (or gives columns
    that cannot be known), or an output of any SELECT of the query is named like it (a
    bare name binds to an output alias in WHERE, GROUP BY, HAVING and ORDER BY), or when no
    table of the schema has it. Nor when the column has a schema or catalog part, or the
    named table may be missing from a row (an outer join's optional side, or any table of
    a SELECT with a RIGHT or FULL join): a value joined from elsewhere would then be given
    to rows the named table has none for. Each dropped column is marked
    (:data:`DROPPED`), so the gate can check it was joined (``autojoin.resolve``). The gate
    keeps the qualified query, and its refusal, when no single join gives the column."""
    read = {t.name.lower() for t in root.find_all(exp.Table)}
    held = {c for t in schema.tables if t.name.lower() in read for c in t.column_names}
    anywhere = {c for t in schema.tables for c in t.column_names}
    outputs = {a.alias.lower() for a in root.find_all(exp.Alias) if a.alias}
    scopes = list(traverse_scope(root))
    # what any derived table or CTE of the query gives: a bare column could bind to it
    derived = [_outputs(src) for scope in scopes for src in scope.sources.values()
               if not isinstance(src, exp.Table)]
    dropped: list[str] = []
    for scope in scopes:
        tables = {a.lower(): schema.table(src.name.lower())
                  for a, src in scope.sources.items() if isinstance(src, exp.Table)
                  and not _optional(scope.expression, src)}
        for col in scope.columns:
            table, name = tables.get(col.table.lower()), col.name.lower()
            if table is None or name in held or name not in anywhere or name in outputs \
                    or col.args.get("db") or col.args.get("catalog") or \
                    col.find_ancestor(exp.Select) is not scope.expression or \
                    any(d is None or name in d for d in derived):
                continue
            dropped.append(f"{col.table}.{col.name} -> the table joined for {col.name}")
            col.set("table", None)
            col.meta[DROPPED] = True
    return list(dict.fromkeys(dropped))


# the mark :func:`unqualify` leaves in a column's ``meta``
DROPPED = "quaderno_dropped_qualifier"


def _optional(select: exp.Expression, table: exp.Table) -> bool:
    """Whether a row of ``select`` may lack a row of ``table``: it is joined LEFT, RIGHT or
    FULL, or the SELECT has a RIGHT or FULL join (which may leave its FROM table out)."""
    joins = select.args.get("joins") or []
    if any(j.side in ("RIGHT", "FULL") for j in joins):
        return True
    holder = table.parent
    return isinstance(holder, exp.Join) and holder.side in ("LEFT", "RIGHT", "FULL")


__all__ = ["DROPPED", "requalify", "unqualify"]
