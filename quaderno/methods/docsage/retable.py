"""A table of the query named where another was meant (repairs the gate makes before it
checks the query: :mod:`.sqlgate`): written with other underscores or case than one table
of the schema (:func:`respell_tables`), or read for columns that all belong to one other
table (:func:`retable`).

The measuring model's held-out Set2 schema had ``company_memberships(member_name,
position_, chief_executive, qixskouxba_markets_commission_id)`` and
``company_memberships_info(id, member_name, position_)``. Its query joined
``company_memberships_info AS T2 ON T1.id = T2.qixskouxba_markets_commission_id`` and
selected ``T2.chief_executive``: both columns of the other table, neither of the one it
named. Told so, it wrote the same query three times (``s13h-docsage-set2``, replayed at
ac06bf6). When two or more of the columns the query reads through an alias are not in its
table, and exactly one other table of the schema, not read by that SELECT, has every column
read through it, the alias reads that table instead; the alias and every column stay as
written, and so are its uses in correlated subqueries, which count among the columns read
through it. One missing column is no such evidence ("SELECT c.league_name FROM city c" reads
a column of another table, which the gate joins or the model is told to join, not another
table): nothing is swapped then, nor when the alias names a source in another SELECT of the
query too, or when no such table or several exist.
A CTE of that name where the table is read, or an alias with its own column names ("AS
T2(a, b)"), swaps nothing either. The gate tries a swap only for a query that does not check
as written (one its other repairs, a column moved or a table joined, make right keeps them),
and keeps the query as written, and its refusal, when the swapped query does not check
either (``sqlgate._swapped``).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from quaderno.methods.docsage.ctes import visible_ctes
from quaderno.methods.docsage.schema import Schema


def retable(root: exp.Expression, schema: Schema) -> list[str]:
    """Swap, in place, each table the query reads whose columns, as the query reads them,
    are all in one other table (module docstring); what was swapped."""
    scopes = list(traverse_scope(root))
    defined: dict[str, int] = {}     # in how many SELECTs each alias names a source
    for scope in scopes:
        for alias in scope.sources:
            defined[alias.lower()] = defined.get(alias.lower(), 0) + 1
    swapped: list[str] = []
    for scope in scopes:
        sources = {a: s for a, s in scope.sources.items() if isinstance(s, exp.Table)}
        read = {s.name.lower() for s in sources.values()}
        for alias, src in sources.items():
            table = schema.table(src.name.lower())
            named = src.args.get("alias")
            if table is None or defined[alias.lower()] != 1 or \
                    (named is not None and named.columns):   # "AS T2(a, b)" names its own
                continue
            # every use of the alias, in correlated subqueries too
            used = {c.name.lower() for c in root.find_all(exp.Column)
                    if c.table.lower() == alias.lower()}
            if len(used - set(table.column_names)) < 2:
                continue
            fits = [t for t in schema.tables
                    if used <= set(t.column_names) and t.name.lower() not in read]
            if len(fits) != 1 or fits[0].name.lower() in visible_ctes(src):
                continue   # none, a choice, or a name a CTE of the query takes there
            written = src.name
            if not src.alias:   # the columns name the table: its name stays as the alias
                src.set("alias", exp.TableAlias(this=exp.to_identifier(written)))
            src.set("this", exp.to_identifier(fits[0].name))
            swapped.append(f"{written} AS {alias} -> {fits[0].name} (the one table with "
                           f"{', '.join(sorted(used))})")
    return swapped



def _spelling(name: str) -> str:
    return name.lower().replace("_", "")


def respell_tables(root: exp.Expression, schema: Schema) -> list[str]:
    """Rename each table the query names with other underscores or case than one table of
    the schema (``drournlia_markets_commission`` for ``drournliamarketscommission``: the
    measuring model wrote it three times over, told each time the schema's name) to that
    table, keeping the written name as its alias so qualified columns still resolve; a
    name a CTE defines, one two tables could mean, or one whose table a CTE shadows there,
    is left to be refused."""
    by_spelling: dict[str, list[str]] = {}
    for t in schema.tables:
        by_spelling.setdefault(_spelling(t.name), []).append(t.name)
    known = {t.name.lower() for t in schema.tables}
    out = []
    for node in list(root.find_all(exp.Table)):
        target = node.this
        if not isinstance(target, exp.Identifier) or node.args.get("db") is not None or \
                node.args.get("catalog") is not None:
            continue
        name = target.name
        if name.lower() in known or name.lower() in visible_ctes(node):
            continue
        matches = by_spelling.get(_spelling(name), [])
        if len(matches) != 1 or matches[0].lower() in visible_ctes(node):
            continue
        if not node.alias:
            node.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
        node.set("this", exp.to_identifier(matches[0]))
        out.append(f"{name} as {matches[0]}")
    return list(dict.fromkeys(out))


__all__ = ["respell_tables", "retable"]
