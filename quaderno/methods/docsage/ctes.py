"""Which CTE names a table reference in a query can mean, by SQL's scoping as DuckDB applies
it: the gate (:mod:`.sqlgate`) lets a CTE's name stand for a table only where it is visible,
so a name defined elsewhere cannot hide a catalog, a file or an unknown table."""

from __future__ import annotations

from sqlglot import exp


def _in_recursive_part(node: exp.Expression, cte: exp.CTE) -> bool:
    """Whether ``node`` lies in the recursive part of ``cte``'s body: the right side of its
    UNION (the anchor on the left, and a body without UNION, read the real tables)."""
    body = cte.this
    if not isinstance(body, exp.Union):
        return False
    current: exp.Expression | None = node
    while current is not None and current is not cte:
        if current is body.expression:
            return True
        current = current.parent
    return False


def visible_ctes(node: exp.Expression) -> set[str]:
    """The CTE names a table reference at ``node`` can mean, by SQL's scoping as DuckDB
    applies it: those of every enclosing query's WITH; inside a CTE's definition only the
    CTEs before it, and itself in the recursive part of a WITH RECURSIVE's UNION. A name
    defined in a subquery is not visible outside it, so it cannot hide a catalog or an
    unknown table there."""
    names: set[str] = set()
    inside: set[int] = set()  # WITH clauses whose CTE definition holds node
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.CTE) and isinstance(parent.parent, exp.With):
            with_ = parent.parent
            inside.add(id(with_))
            # by identity: sqlglot's == compares trees, and two CTEs may look alike
            at = next(i for i, c in enumerate(with_.expressions) if c is parent)
            before = with_.expressions[:at]
            names |= {c.alias_or_name.lower() for c in before}
            if with_.args.get("recursive") and _in_recursive_part(node, parent):
                names.add(parent.alias_or_name.lower())
        with_ = parent.args.get("with_")
        if isinstance(with_, exp.With) and id(with_) not in inside:
            names |= {c.alias_or_name.lower() for c in with_.expressions}
        parent = parent.parent
    return names


__all__ = ["visible_ctes"]
