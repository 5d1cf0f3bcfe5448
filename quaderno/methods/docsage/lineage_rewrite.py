"""The rewrite that carries tuple ids through a SQL query, for its rows' provenance (spec §4).

The checked query is rewritten with sqlglot so that it also returns, as one extra last column
``__lineage_<random>`` (a name no query can know: :func:`lineage_name`), the list of ``_tid`` s
that produced each result row:

* a non-aggregate SELECT adds ``[a._tid, b._tid, ...]`` over its FROM/JOIN tables;
* an aggregate or GROUP BY query adds ``flatten(list([...]))``, so every group (or the one
  global row) carries the tids it aggregated; HAVING, ORDER BY and LIMIT are untouched, so the
  lists align with the result rows exactly; SELECT DISTINCT becomes the equivalent GROUP BY;
* CTEs and derived tables (LATERAL ones too) that are themselves plain or aggregate SELECTs
  (or UNION ALLs of them) expose their own ``__lineage`` and the outer query concatenates it;
* subqueries in WHERE, HAVING or the SELECT list (IN, scalar, EXISTS) are not sources of the
  rows: each is taken out as a standalone query carrying the outer WITH
  (:func:`support_queries`), to be rewritten the same way and run on its own.

What the rewrite cannot trace exactly (UNION/INTERSECT/EXCEPT without ALL, recursive CTEs,
NATURAL JOIN, SELECT DISTINCT ON, a WITH on a set operation, table-less sources) gets a note
in :attr:`Rewriter.notes`, never a guess. Running the rewritten query and tracing its rows
back to tuples and chunks is :mod:`.lineage`.
"""

from __future__ import annotations

import secrets

from sqlglot import exp

from quaderno.methods.docsage.aggregates import is_aggregate as _is_aggregate
from quaderno.methods.docsage.in_support import in_key
from quaderno.methods.docsage.schema import TID

LINEAGE = "__lineage"  # the reserved prefix of the lineage column's name


def lineage_name() -> str:
    """A name for one run's lineage column that no query can know beforehand: the rewrite
    reads each derived table's column of that name, and a query that could write one (a
    struct's field named in a string, ``from_json(..., '{"__lineage": "BIGINT[]"}')``, passes
    any check of the names it writes) would choose the chunks its rows cite."""
    return f"{LINEAGE}_{secrets.token_hex(8)}"


class Rewriter:
    def __init__(self, tables: set[str], name: str) -> None:
        self.tables = tables
        self.name = name       # the lineage column's name in this run (:func:`lineage_name`)
        self.notes: list[str] = []

    def query(self, q: exp.Expression, ctes: dict[str, bool]) -> exp.Expression | None:
        """A copy of ``q`` that also returns ``__lineage`` as its last column, or None."""
        if isinstance(q, exp.SetOperation) and q.args.get("with_") is not None:
            # its CTEs are not seen by the branches' rewrite, which would read a table's
            # row ids from a CTE shadowing it (review 17)
            self.notes.append("WITH on a set operation is not traced")
            return None
        if isinstance(q, exp.Union) and not q.args.get("distinct"):
            left = self.query(q.this, ctes)
            right = self.query(q.expression, ctes)
            if left is None or right is None:
                return None
            out = q.copy()
            out.set("this", left)
            out.set("expression", right)
            return out
        if isinstance(q, exp.Subquery):
            inner = self.query(q.this, ctes)
            if inner is None:
                return None
            out = q.copy()
            out.set("this", inner)
            return out
        if isinstance(q, exp.Select):
            return self.select(q, ctes)
        kind = type(q).__name__.upper() + (" (without ALL)" if isinstance(q, exp.Union) else "")
        self.notes.append(f"{kind} is not traced row by row")
        return None

    def select(self, q: exp.Select, ctes: dict[str, bool]) -> exp.Select | None:
        q = q.copy()
        local = dict(ctes)
        with_ = q.args.get("with_")
        if with_ is not None:
            for cte in with_.expressions:
                name = cte.alias_or_name.lower()
                columns = cte.args["alias"].columns if cte.args.get("alias") else []
                if with_.args.get("recursive") or columns:
                    self.notes.append(f"CTE {name!r} (recursive or with a column list) is "
                                      "not traced")
                    local[name] = False
                    continue
                body = self.query(cte.this, local)
                local[name] = body is not None
                if body is not None:
                    cte.set("this", body)
        parts: list[exp.Expression] = []
        sources = []
        if q.args.get("from_") is not None:
            sources.append(q.args["from_"].this)
        joins = q.args.get("joins") or []
        if any(str(j.args.get("method") or "").upper() == "NATURAL" for j in joins):
            self.notes.append("NATURAL JOIN is not traced")
            return None
        sources += [j.this for j in joins]
        for src in sources:
            alias = src.alias_or_name
            if isinstance(src, exp.Table) and src.name.lower() in local:
                if local[src.name.lower()]:
                    parts.append(exp.column(self.name, table=alias, quoted=True))
            elif isinstance(src, exp.Table) and src.name.lower() in self.tables:
                parts.append(exp.Array(expressions=[exp.column(TID, table=alias, quoted=True)]))
            elif isinstance(src, exp.Subquery) or (isinstance(src, exp.Lateral)
                                                    and isinstance(src.this, exp.Subquery)):
                # a LATERAL subquery runs once per outer row, in place: its lineage column
                # is that row's, as a derived table's is
                derived = src.this if isinstance(src, exp.Lateral) else src
                inner = self.query(derived.this, local)
                if inner is not None:
                    derived.set("this", inner)
                    parts.append(exp.column(self.name, table=alias, quoted=True))
                else:
                    self.notes.append(f"derived table {alias!r} is not traced")
            else:
                self.notes.append(f"source {alias or type(src).__name__!r} has no tuples")
        if not parts:
            return None
        lineage: exp.Expression = parts[0]
        for part in parts[1:]:
            lineage = exp.Anonymous(this="list_concat", expressions=[lineage, part])
        if q.args.get("distinct") is not None and not _is_aggregate(q):
            if q.args["distinct"].args.get("on") is not None:
                self.notes.append("SELECT DISTINCT ON is not traced")
                return None
            q.set("distinct", None)
            q.set("group", exp.Group(expressions=[p.unalias().copy() for p in q.expressions]))
        if _is_aggregate(q):
            lineage = exp.Anonymous(this="flatten", expressions=[
                exp.Anonymous(this="list", expressions=[lineage])])
        q.append("expressions", exp.alias_(lineage, self.name, quoted=True))
        return q


def _outer_ctes(root: exp.Expression) -> exp.With | None:
    with_ = root.args.get("with_")
    return with_.copy() if isinstance(with_, exp.With) else None


def _is_source(sub: exp.Subquery) -> bool:
    """Whether ``sub`` is part of what produces the rows (a FROM/JOIN source, a CTE's body or
    the query itself, through parenthesised UNION branches and the left side of EXCEPT or
    INTERSECT), not a filter (a WHERE/IN subquery, the right side of EXCEPT or INTERSECT)."""
    node: exp.Expression = sub
    while isinstance(node.parent, exp.Subquery) or (
            isinstance(node.parent, exp.SetOperation)
            and (isinstance(node.parent, exp.Union) or node is node.parent.this)):
        node = node.parent
    if isinstance(node.parent, exp.Lateral):
        node = node.parent
    return node.parent is None or isinstance(node.parent, (exp.From, exp.Join, exp.CTE))


def support_queries(root: exp.Expression
                    ) -> list[tuple[exp.Expression, tuple[str, str] | None]]:
    """Subqueries that are not FROM/JOIN sources (IN, scalar, EXISTS), as standalone
    queries carrying the outer WITH so CTE names resolve, each with the outer column a
    filtering IN test compares it to (``in_support.in_key``)."""
    out = []
    outer = _outer_ctes(root)
    # EXISTS (SELECT ...) holds its query without a Subquery node around it
    found = [*root.find_all(exp.Subquery),
             *(e for e in root.find_all(exp.Exists) if not isinstance(e.this, exp.Subquery))]
    for sub in found:
        if isinstance(sub, exp.Subquery) and _is_source(sub):
            continue
        query = sub.this.copy()
        if outer is not None and query.args.get("with_") is None:
            query.set("with_", outer.copy())
        out.append((query, in_key(sub)))
    return out


__all__ = ["LINEAGE", "Rewriter", "lineage_name", "support_queries"]
