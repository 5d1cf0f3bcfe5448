"""The one join a declared foreign key gives, added by the gate when the query lacks it.

The measuring model reads a column from a table its query does not name, and told so
("date is a column of births, which the query does not read: join births ON
births.person_name = people.name") writes the same query again: 13 of 20 2Wiki questions and
the Set1 Statistics question ended there. When the schema leaves a single reading, the gate
writes the join itself: in the SELECT where the column cannot be resolved, with only tables
of the schema as sources, the tables that have the column and are not read are joined to a
read table by

* a foreign key between the two, either way (``births.person_name -> people.name``); or,
  when no such key exists,
* two foreign keys to the same key of a third table (a laureate's nationality and birth
  year, both rows pointing at ``stedrurial_medal.laureate_name``): joined on those columns.

Exactly one such join must exist, else nothing is added and the model gets the hint as
before. The join goes into a copy of the query that qualify() has already resolved as far as
it can (``validate_qualify_columns=False``): every column that has a table, correlated ones
too, is pinned to it, ``SELECT *`` is expanded, and only the column no table gives is left
bare, so the join changes no other column's meaning and cannot hide an outer query's table.
The join is a LEFT JOIN, so the rows the query read stay its rows (a person without a death
date is still counted, still matches ``OR date < ...``): the new table looks their value up,
NULL where it has none, which a comparison or an aggregate skips. A join whose new table
holds several rows for one key (two extracted birth dates of one person; without the data,
a side of the key that is not its primary key) repeats the row, once per value the tables
hold. A list or an IN test may show that, but a count, an average, a window, a LIMIT of
more than one row, or a subquery used as a value would change, so such a join is not added
where one of them reads the rows. A column used only to filter is not joined at all but
tested with IN (``semijoin.py``), which repeats no row, in a count as in a list. What was
added is reported (``CheckedSQL.joined``) and recorded in the trace.

A column the query gave to a table it reads that lacks it ("T2.chief_executive", T2 a
membership table) is joined the same way when no table of the query holds it: its qualifier
is dropped first (``requalify.unqualify``, reported with the moved columns), and kept, with
the refusal, when no single join gives every such column or one of them ends up anywhere but
on a table the gate added (:func:`resolve`). No join is added for a column an ON condition
reads: it would come after the join that needs it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.qualify_columns import validate_qualify_columns
from sqlglot.optimizer.scope import Scope, traverse_scope

from quaderno.methods.docsage.aggregates import is_aggregate
from quaderno.methods.docsage.requalify import DROPPED, unqualify
from quaderno.methods.docsage.schema import ForeignKey, Schema, Table
from quaderno.methods.docsage.semijoin import add_semijoin

log = logging.getLogger(__name__)

MAX_JOINS = 2  # joins the gate may add to one query

# whether the data holds one row of a table per value of these columns
Unique = Callable[[str, Sequence[str]], bool]
# sqlglot's two words for a column no table of the query has: validation's, and qualify's
# for a qualified column its table lacks ("t.x")
_UNRESOLVED = re.compile(r"Column '([^']+)' could not be resolved(?: for table: '([^']+)')?"
                         r"|Unknown column: (\S+)")


def unresolved(error: str) -> tuple[str, str] | None:
    """The column and its table qualifier ("" when none) a qualify error names."""
    m = _UNRESOLVED.search(error)
    if not m:
        return None
    name = m[1] or m[3]
    return name.strip('"').split(".")[-1].strip('"').lower(), (m[2] or "").strip('"').lower()


def _on(left: str, cols: list[str], right: str, ref_cols: list[str]) -> exp.Expression:
    pairs = [exp.EQ(this=exp.column(c, table=left), expression=exp.column(r, table=right))
             for c, r in zip(cols, ref_cols, strict=True)]
    condition = pairs[0]
    for p in pairs[1:]:
        condition = exp.And(this=condition, expression=p)
    return condition


def _direct(owner: Table, alias: str, read: Table,
            at: str) -> list[tuple[exp.Expression, list[str]]]:
    """Join conditions a foreign key between ``owner`` (as ``alias``) and ``read`` (as
    ``at``) gives, either way, each with the ``owner`` columns it matches on."""
    return ([(_on(alias, fk.cols, at, fk.ref_cols), fk.cols)
             for fk in owner.foreign_keys if fk.ref_table == read.name]
            + [(_on(at, fk.cols, alias, fk.ref_cols), fk.ref_cols)
               for fk in read.foreign_keys if fk.ref_table == owner.name])


def _shared(owner: Table, alias: str, read: Table,
            at: str) -> list[tuple[exp.Expression, list[str]]]:
    """Join conditions two foreign keys to the same key of a third table give."""
    def same(a: ForeignKey, b: ForeignKey) -> bool:
        return a.ref_table == b.ref_table and a.ref_cols == b.ref_cols and \
            a.ref_table not in (owner.name, read.name)
    return [(_on(alias, a.cols, at, b.cols), a.cols)
            for a in owner.foreign_keys for b in read.foreign_keys if same(a, b)]


def declared_unique(table: Table, cols: Sequence[str]) -> bool:
    """Whether the schema says ``cols`` hold one row of ``table`` per value: its primary key,
    with no column an entity has several values of (a row per value)."""
    return bool(table.primary_key) and set(table.primary_key) == set(cols) and \
        not table.multi_valued(table.primary_key)


def _wanted(scope: Scope, name: str, qualifier: str) -> list[exp.Column]:
    """The columns of this SELECT (not of its subqueries) the error is about: left bare by
    qualify(), or qualified with a table the SELECT does not read."""
    return [c for c in scope.columns
            if c.name.lower() == name and c.find_ancestor(exp.Select) is scope.expression
            and (c.table.lower() == qualifier if qualifier else not c.table)
            and c.table.lower() not in {a.lower() for a in scope.selected_sources}]


def _in_join(col: exp.Column, select: exp.Select) -> bool:
    """Whether ``col`` is read by a join of ``select`` (its ON condition)."""
    node = col.parent
    while node is not None and node is not select:
        if isinstance(node, exp.Join):
            return True
        node = node.parent
    return False


def _limits(node: exp.Expression) -> bool:
    """A LIMIT that keeps more than one row (a repeated row pushes another one out)."""
    limit = node.args.get("limit")
    if limit is None:
        return False
    value = limit.expression if isinstance(limit, exp.Limit) else limit
    return not (isinstance(value, exp.Literal) and value.is_int and int(value.name) <= 1)


def _counts_rows(node: exp.Expression) -> bool:
    """Whether a query's result depends on how often a row occurs: it aggregates, computes
    a window (in its SELECT list or QUALIFY), or keeps a LIMIT of more than one row."""
    if _limits(node):
        return True
    if not isinstance(node, exp.Select):
        return False
    return is_aggregate(node) or node.args.get("qualify") is not None or \
        any(e.find(exp.Window) is not None for e in node.expressions)


def _repeats_matter(scope: Scope, root: exp.Expression) -> bool:
    """Whether rows repeated by a join in this SELECT could change the answer: it counts
    rows itself; it is a subquery used as a value (two rows are an error), not one tested
    with IN, EXISTS, ANY or ALL; or its rows feed another query (a CTE, a derived table, a branch
    of a set operation) and any query there counts rows."""
    select = scope.expression
    if _counts_rows(select):
        return True
    if scope.is_root:
        return False
    if scope.is_subquery:
        holder = select.parent.parent if isinstance(select.parent, exp.Subquery) \
            else select.parent
        return not isinstance(holder, (exp.In, exp.Exists, exp.Any, exp.All))
    return any(_counts_rows(n) for n in root.find_all(exp.Select, exp.SetOperation))


def _taken(root: exp.Expression) -> set[str]:
    """Every table name and alias the query uses anywhere, of tables, CTEs, derived tables,
    VALUES and UNNEST alike (lower case)."""
    return {t.name.lower() for t in root.find_all(exp.Table)} | \
        {a.name.lower() for a in root.find_all(exp.TableAlias) if a.name} | \
        {c.alias_or_name.lower() for c in root.find_all(exp.CTE)}


def _alias(owner: str, taken: set[str]) -> str:
    alias, n = owner, 2
    while alias.lower() in taken:
        alias, n = f"{owner}_{n}", n + 1
    return alias


def add_join(root: exp.Expression, schema: Schema, error: str,
             unique: Unique | None = None) -> str | None:
    """Add, in place, the one join that gives the column ``error`` says cannot be resolved
    (module docstring) to ``root``, a query qualify() resolved without validating; what was
    added ("LEFT JOIN births ON births.person_name = people.name (for date)"), or None when
    the schema gives no single join. ``unique(table, columns)`` says whether the data holds
    one row per value of those columns (the sandbox asks its tables); without it the schema's
    word is taken (:func:`declared_unique`)."""
    one = unique or (lambda table, cols: declared_unique(schema.table(table), cols))
    what = unresolved(error)
    if what is None:
        return None
    name, qualifier = what
    taken = _taken(root)
    ctes = {c.alias_or_name.lower() for c in root.find_all(exp.CTE)}
    if qualifier and qualifier in taken:  # an alias of another SELECT: not ours to bind
        return None
    for scope in traverse_scope(root):
        select = scope.expression
        sources = {a: s for a, (_, s) in scope.selected_sources.items()}
        if not isinstance(select, exp.Select) or not sources or \
                not all(isinstance(s, exp.Table) and s.name.lower() not in ctes
                        for s in sources.values()):
            continue
        read = {a: schema.table(s.name.lower()) for a, s in sources.items()}
        if any(t is None for t in read.values()):
            continue
        columns = _wanted(scope, name, qualifier)
        if not columns:
            continue
        if any(_in_join(c, select) for c in columns):
            return None  # a join added after the one whose ON reads it would not bind
        names = {t.name for t in read.values()}
        owners = [t for t in schema.tables if name in t.column_names and t.name not in names
                  and t.name not in ctes and (not qualifier or t.name == qualifier)]
        alias_of = {o.name: o.name if qualifier else _alias(o.name, taken) for o in owners}
        found: list[tuple[Table, exp.Expression, list[str]]] = []
        for kind in (_direct, _shared):
            found = [(o, cond, cols) for o in owners for at, t in read.items()
                     for cond, cols in kind(o, alias_of[o.name], t, at)]
            if found:
                break
        if len(found) != 1:  # none, or a choice the query does not make
            return None
        owner, condition, cols = found[0]
        alias = alias_of[owner.name]
        semi = add_semijoin(select, owner.name, alias, condition, columns,
                            set(owner.column_names))
        if semi is not None:  # a filter only: an IN test, no row repeated (semijoin.py)
            return f"{semi} (for {name})"
        if _repeats_matter(scope, root) and not one(owner.name, cols):
            return None
        for col in columns:
            col.set("table", exp.to_identifier(alias))
        table = exp.to_table(owner.name)
        if alias != owner.name:
            table = exp.alias_(table, alias, table=True)
        select.join(table, on=condition, join_type="left", copy=False)
        return f"LEFT JOIN {owner.name}" + (f" AS {alias}" if alias != owner.name else "") + \
            f" ON {condition.sql('duckdb')} (for {name})"
    return None


def _qualify(root: exp.Expression, schema: Schema, joined: list[str],
             unique: Unique | None = None) -> exp.Expression:
    """``root`` qualified against the schema; a column no table of its SELECT has gets the
    one join a declared foreign key gives (at most :data:`MAX_JOINS`), recorded in
    ``joined``. Raises what qualify raised when no join gives it. The query is qualified
    without validating and then validated (what ``qualify`` does in one call), so a join goes
    into the tree already resolved as far as it can be, not into a second qualification of
    it."""
    tree = qualify(root.copy(), schema=schema.mapping(), dialect="duckdb",
                   validate_qualify_columns=False)
    while True:
        try:
            validate_qualify_columns(tree)
            return tree
        except SqlglotError as e:
            if len(joined) >= MAX_JOINS:
                raise
            try:
                how = add_join(tree, schema, str(e), unique)
                if how is not None:  # the new table is qualified like the others
                    tree = qualify(tree, schema=schema.mapping(), dialect="duckdb",
                                   validate_qualify_columns=False)
                    if _reads_ahead(tree):  # an ON bound to the table joined after it
                        how = None
            except Exception as scoping:  # scopes qualify cannot read: refuse as before
                log.info("no join added, the query's scopes could not be read: %r", scoping)
                how = None
            if how is None:
                raise
            log.info("the gate joined %s", how)
            joined.append(how)


def _reads_ahead(root: exp.Expression) -> bool:
    """Whether an earlier join's ON condition of a SELECT reads the table the gate joined
    last to it (always its last join): the added join bound a column the query's own ON
    left unresolved (``T2.company_id`` of a table lacking it, given to the table joined for
    another column), and DuckDB cannot bind it (the measuring model's held-out Set2 query,
    replayed at 7466608). Only columns of that SELECT count, not of a subquery in the ON,
    which may name a table of its own alike."""
    for select in root.find_all(exp.Select):
        joins = select.args.get("joins") or []
        if len(joins) < 2:
            continue
        added = joins[-1].this.alias_or_name.lower()
        for join in joins[:-1]:
            on = join.args.get("on")
            if on is not None and any(c.table.lower() == added and
                                      c.find_ancestor(exp.Select) is select
                                      for c in on.find_all(exp.Column)):
                return True
    return False


def _joined(col: exp.Column, taken: set[str]) -> bool:
    """Whether a column whose qualifier was dropped reads a table the gate added (none of
    the ``taken`` names of the query as written), itself or as the output of its SELECT it
    names ("ORDER BY birth_year" after "SELECT T2.birth_year")."""
    if col.table:
        return col.table.lower() not in taken
    select = col.find_ancestor(exp.Select)
    outputs = {e.alias_or_name.lower(): e.unalias() for e in select.expressions} \
        if select is not None else {}
    given = outputs.get(col.name.lower())
    return isinstance(given, exp.Column) and given is not col and \
        bool(given.meta.get(DROPPED)) and given.table.lower() not in taken | {""}


def resolve(root: exp.Expression, schema: Schema, joined: list[str],
            unique: Unique | None = None) -> tuple[exp.Expression, list[str]]:
    """``root`` qualified against the schema with the joins the gate adds (recorded in
    ``joined``), and the qualifiers it dropped for them: a column the query gave to a read
    table that lacks it, with no table of the query holding it, is joined like a bare one
    (:func:`.requalify.unqualify`) when that gives a join for every such column; otherwise
    the query is qualified as written, and raises what qualify raised."""
    dropped: list[str] = []
    try:
        bare = root.copy()
        dropped = unqualify(bare, schema)
    except Exception as e:  # scopes the gate cannot read: the query as written
        log.info("no qualifier dropped, the query's scopes could not be read: %r", e)
    if dropped:
        marked = sum(1 for c in bare.find_all(exp.Column) if c.meta.get(DROPPED))
        taken = _taken(root)
        try:
            tree = _qualify(bare, schema, joined, unique)
            # each column whose qualifier was dropped must read a table the gate added
            # (not bind to an output alias, nor vanish into another expression)
            landed = [c for c in tree.find_all(exp.Column) if c.meta.get(DROPPED)]
            if len(landed) >= marked and all(_joined(c, taken) for c in landed):
                return tree, dropped
            log.info("a column given to the wrong table was not joined: %s", dropped)
        except Exception as e:  # no join gives it (or scopes qualify cannot read)
            log.info("the columns given to the wrong table got no join: %r", e)
        joined.clear()
    return _qualify(root, schema, joined, unique), []


__all__ = ["MAX_JOINS", "Unique", "add_join", "declared_unique", "resolve", "unresolved"]
