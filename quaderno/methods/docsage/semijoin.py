"""A filter on a table the query does not read, added by the gate as an IN test, not a join.

"What is the average birth year of the laureates in the Stedrurial Medal whose nationality is
Kraxryndia?" The measuring model wrote ``SELECT avg(birth_year) FROM laureates WHERE
nationality = 'Kraxryndia' AND award_name = 'Stedrurial Medal'`` three times, told each time
that ``award_name`` is a column of ``stedrurial_medal`` and how to join it. The gate's join
(``autojoin.py``) was not added: a laureate may hold several ``stedrurial_medal`` rows (a
research grant misread as a medal repeated Zouzand Grialforn), and a join would count that
laureate's birth year twice in the average (``after-no-clear-set1``).

When the column is used only to filter, the question it asks is which rows of the read table
have a matching row in the other one: a semi-join, which keeps each read row at most once
however many rows match. So when every use of the column in its SELECT lies in top-level
AND-conjuncts of the WHERE clause that

* read no column but the new table's own (the wanted column, and other columns no read table
  has and the new table does), and no subquery; conditions on those other columns alone go
  along, so that one row of the new table must meet them all, as one joined row would, and
  a column of it read anywhere else in the SELECT (ordered by, compared with a read
  table's) leaves the whole to the join, which reads every column from one row; and
* are false or NULL when those columns are NULL (a comparison, LIKE, IN list or BETWEEN with
  a column as one side, also under NOT, lower(), upper(), trim() or a cast, and AND/OR of
  such), so that a read row without a matching row, which the LEFT JOIN would keep with
  NULLs, is dropped by both readings alike;

and the join found is on one column, those conjuncts move into ``<read key> IN (SELECT <new
table's key> FROM <new table> WHERE <conjuncts>)``. It replaces the LEFT JOIN in lists too:
"the people born after 1900" are each listed once, not once per birth row. The subquery is
uncorrelated, so lineage traces its rows as the answer's support (``lineage.py``).
"""

from __future__ import annotations

from sqlglot import exp

# a predicate with a column as one side: NULL when the column is
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike,
                exp.In, exp.Between)
# wrappers that keep a NULL a NULL
_PASS_NULL = (exp.Paren, exp.Cast, exp.TryCast, exp.Lower, exp.Upper, exp.Trim)
# what could turn a NULL into a value, or read another scope
_NOT_MOVED = (exp.Is, exp.Coalesce, exp.NullSafeEQ, exp.NullSafeNEQ, exp.Case, exp.If,
              exp.Anonymous, exp.Subquery, exp.Select, exp.Exists)


def _bare(node: exp.Expression) -> exp.Expression:
    while isinstance(node, _PASS_NULL):
        node = node.this
    return node


def rejects_null(node: exp.Expression) -> bool:
    """Whether ``node`` is never true when the columns it reads are NULL (module docstring)."""
    node = node.this if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.And):
        return rejects_null(node.this) or rejects_null(node.expression)
    if isinstance(node, exp.Or):
        return rejects_null(node.this) and rejects_null(node.expression)
    if isinstance(node, exp.Not):
        inner = node.this.this if isinstance(node.this, exp.Paren) else node.this
        return isinstance(inner, _COMPARISONS) and rejects_null(inner)
    if isinstance(node, _COMPARISONS):
        sides = [node.this] + ([node.expression] if node.expression is not None else [])
        return any(isinstance(_bare(s), exp.Column) for s in sides)
    return False


def _conjuncts(where: exp.Expression) -> list[exp.Expression]:
    """The top-level AND-ed conditions of a WHERE clause, parentheses around an AND
    opened ("WHERE (a = 1 AND b = 2)")."""
    out: list[exp.Expression] = []
    stack = [where.this]
    while stack:
        n = stack.pop()
        if isinstance(n, exp.Paren) and isinstance(n.this, exp.And):
            stack.append(n.this)
        elif isinstance(n, exp.And):
            stack += [n.expression, n.this]
        else:
            out.append(n)
    return out


def _key_pair(condition: exp.Expression, alias: str) -> tuple[exp.Column, exp.Column] | None:
    """(the new table's key column, the read table's) of a one-column join condition."""
    if not isinstance(condition, exp.EQ):
        return None
    a, b = condition.this, condition.expression
    if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
        return None
    return (a, b) if a.table == alias else (b, a)


def add_semijoin(select: exp.Select, owner: str, alias: str, condition: exp.Expression,
                 wanted: list[exp.Column], owner_columns: set[str]) -> str | None:
    """Move the conjuncts of ``select``'s WHERE that read ``wanted`` (columns of ``owner``,
    read as ``alias``, which the join ``condition`` gives) into an IN test over ``owner``, in
    place; what was added, or None when the filter cannot be read that way (module
    docstring). ``owner_columns``: the owner's column names (lower case)."""
    where = select.args.get("where")
    pair = _key_pair(condition, alias)
    if where is None or pair is None:
        return None
    def owned(col: exp.Column) -> bool:  # a column no read table gave, the owner has
        return col.table.lower() in ("", alias.lower()) and col.name.lower() in owner_columns

    conjuncts = _conjuncts(where)
    # the conditions on the wanted column, and those on the owner's other columns: one
    # row of the owner must meet them all, as one joined row would
    moved = [c for c in conjuncts if any(_within(w, c) for w in wanted)
             or (c.find(exp.Column) is not None and all(map(owned, c.find_all(exp.Column))))]
    if not moved or any(not any(_within(w, c) for c in moved) for w in wanted):
        return None  # the column is also read outside the filter
    outputs = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias)}
    if any(owned(col) and not any(_within(col, c) for c in moved)
           and (col.table or col.name.lower() not in outputs)   # ORDER BY an output
           for col in select.find_all(exp.Column) if col.find_ancestor(exp.Select) is select):
        return None  # another of its columns too: it must come from the same row, joined
    for c in moved:
        if c.find(*_NOT_MOVED) is not None or not rejects_null(c):
            return None
        if not all(any(col is w for w in wanted) or owned(col)
                   for col in c.find_all(exp.Column)):
            return None  # a read table's column: the test would be correlated
    own, read = pair
    kept = [c for c in conjuncts if not any(c is m for m in moved)]
    inner = [c.copy() for c in moved]
    for c in inner:
        for col in c.find_all(exp.Column):  # quoted only where the name needs it
            col.set("this", exp.to_identifier(col.name))
            col.set("table", exp.to_identifier(alias))
    table = exp.to_table(owner)
    if alias != owner:
        table = exp.alias_(table, alias, table=True)
    sub = exp.select(own.copy()).from_(table).where(exp.and_(*inner))
    test = exp.In(this=read.copy(), query=exp.Subquery(this=sub))
    select.set("where", exp.Where(this=exp.and_(*kept, test) if kept else test))
    return f"WHERE {test.sql('duckdb')}"


def _within(node: exp.Expression, ancestor: exp.Expression) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


__all__ = ["add_semijoin", "rejects_null"]
