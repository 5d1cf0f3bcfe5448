"""The read-only gate for model-written SQL (spec §4 and §11).

The SQL DocSage runs is written by a model that has read untrusted documents, so it is
treated like code from a stranger. :func:`check_sql` parses it with sqlglot and accepts only a
single SELECT (or set operation, or WITH ... SELECT) over the schema's tables: every node of
the syntax tree is inspected, never the text. Writes, DDL, commands, table-valued and file or
network functions, system catalogs and unknown tables are refused, and columns are qualified
against the schema so unknown or ambiguous ones fail (a table whose columns, as the query
reads them, are all another table's is first read as that one: ``retable.py``; a column
qualified with the wrong table of its SELECT is moved to the one table there that has it,
when nothing else could be meant: ``requalify.py``; a column no table of its SELECT has,
bare or given to a read table that lacks it, gets the one join a declared foreign key
gives: ``autojoin.py``). What runs afterwards is the SQL
*regenerated from the checked tree* with comments dropped, so nothing the parser did not see
(a comment hiding a second statement, say) can reach DuckDB.

The gate is the first wall; the sandbox (``sandbox.py``) is the second: even a query that
slipped through runs with external access off, extensions off and the configuration locked.
"""

from __future__ import annotations

import logging
import re

import sqlglot
from pydantic import BaseModel, ConfigDict, Field
from sqlglot import exp
from sqlglot.errors import SqlglotError

from quaderno.errors import SQLRefusedError
from quaderno.methods.docsage.autojoin import Unique, resolve
from quaderno.methods.docsage.bare_keywords import bare_keywords
from quaderno.methods.docsage.ctes import visible_ctes
from quaderno.methods.docsage.correlated import hoist_order, outer_columns
from quaderno.methods.docsage.join_hint import column_hint
from quaderno.methods.docsage.requalify import requalify
from quaderno.methods.docsage.retable import respell_tables, retable
from quaderno.methods.docsage.schema import Schema

log = logging.getLogger(__name__)

MAX_SQL_CHARS = 20_000


def _node_types(*names: str) -> tuple[type[exp.Expression], ...]:
    """The sqlglot expression classes of these names that this sqlglot version has."""
    return tuple(getattr(exp, n) for n in names if isinstance(getattr(exp, n, None), type))


# statements and clauses that write, change the database or its settings, or run a command
_FORBIDDEN_NODES = _node_types(
    "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "AlterColumn",
    "TruncateTable", "Command", "Copy", "Attach", "Detach", "Pragma", "Set", "SetItem", "Use",
    "Transaction", "Commit", "Rollback", "Install", "Load", "LoadData", "Export", "Import",
    "Into", "Describe", "Show", "Summarize", "Kill", "Cache", "Uncache", "Refresh", "Grant",
    "Revoke", "Analyze", "Comment", "Put", "Get")

# table-valued, file, network, catalog and environment functions, by name or prefix
_FORBIDDEN_FUNCTIONS = frozenset({
    "glob", "sniff_csv", "query", "query_table", "getenv", "current_setting", "read_text",
    "read_blob", "parquet_scan", "delta_scan", "iceberg_scan", "st_read", "which_secret",
    "load_aws_credentials", "checkpoint", "force_checkpoint", "enable_profiling",
    "disable_profiling", "json_execute_serialized_sql", "from_substrait", "get_substrait",
    "get_substrait_json", "sqlite_attach", "postgres_attach", "mysql_attach", "set_variable",
    "getvariable", "current_database", "current_schema", "current_schemas", "version",
    "current_version",  # sqlglot reads version() as CURRENT_VERSION
    "pg_typeof"})
_FORBIDDEN_PREFIXES = ("read_", "duckdb_", "pragma_", "parquet_", "iceberg_", "delta_",
                       "sqlite_", "postgres_", "mysql_", "http", "s3", "azure_", "gcs_",
                       "json_execute", "load_", "install_", "pg_", "information_schema")
_SYSTEM_PREFIXES = ("duckdb_", "pg_", "sqlite_", "information_schema", "system", "temp")
_AUTO_ALIAS = re.compile(r"^_col_\d+$")


class CheckedSQL(BaseModel):
    """A query that passed the gate: the qualified syntax tree and the SQL regenerated from
    it (comments dropped), which is what the sandbox runs."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    original: str
    sql: str
    expression: exp.Expression
    tables: list[str]
    # columns the gate moved to the one table in scope that has them (``requalify.py``)
    requalified: list[str] = Field(default_factory=list)
    # tables the gate joined on a declared foreign key for a column the query read from
    # a table it did not name (``autojoin.py``)
    joined: list[str] = Field(default_factory=list)
    # a subquery's ORDER BY of the enclosing query's columns, with its LIMIT, the gate moved
    # out to the enclosing query (:func:`.correlated.hoist_order`)
    hoisted: list[str] = Field(default_factory=list)
    # tables named with other underscores or case than the schema's, renamed to it
    # (:func:`.retable.respell_tables`)
    respelled: list[str] = Field(default_factory=list)


def _refuse(reason: str, message: str, sql: str) -> SQLRefusedError:
    log.info("SQL refused (%s): %s", reason, message)
    return SQLRefusedError(f"SQL refused ({reason}): {message}", reason=reason, sql=sql)


def _statement_name(node: exp.Expression) -> str:
    key = type(node).__name__
    if isinstance(node, exp.Command):
        key = str(node.this).upper()
    return key.upper()


def function_name(node: exp.Func) -> str:
    """The SQL name of a function node, lower-case (``read_csv``, ``getenv``)."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def _forbidden_function(name: str) -> bool:
    return name in _FORBIDDEN_FUNCTIONS or name.startswith(_FORBIDDEN_PREFIXES)


def _check_table(node: exp.Table, known: set[str], ctes: set[str], sql: str) -> None:
    target = node.this
    if not isinstance(target, exp.Identifier):
        name = function_name(target) if isinstance(target, exp.Func) else target.sql("duckdb")
        raise _refuse("table-function", f"FROM {name}(...) is a table function; read only the "
                      f"tables of the schema ({', '.join(sorted(known))})", sql)
    name = target.name
    lowered = name.lower()
    parts = [p for p in (node.args.get("catalog"), node.args.get("db")) if p is not None]
    if parts:
        full = ".".join([p.name for p in parts] + [name])
        raise _refuse("qualified-table", f"table {full!r} names a schema or catalog; use the "
                      f"bare table names of the schema ({', '.join(sorted(known))})", sql)
    if lowered in ctes or lowered in known:
        return
    if lowered.startswith(_SYSTEM_PREFIXES):
        raise _refuse("system-catalog", f"{name!r} is a system catalog; only the schema's "
                      f"tables may be read ({', '.join(sorted(known))})", sql)
    if "/" in name or "." in name or ":" in name:
        raise _refuse("file-or-url", f"FROM {name!r} reads a file or URL; only the schema's "
                      f"tables may be read ({', '.join(sorted(known))})", sql)
    raise _refuse("unknown-table", f"unknown table {name!r}; the schema's tables are "
                  f"{', '.join(sorted(known))}", sql)


def _check_sources(select: exp.Select, sql: str) -> None:
    """FROM and JOIN may name tables (checked elsewhere), subqueries (LATERAL ones too) or
    VALUES, nothing else."""
    sources = []
    if select.args.get("from_") is not None:
        sources.append(select.args["from_"].this)
    sources += [j.this for j in select.args.get("joins") or []]
    for src in sources:
        if isinstance(src, (exp.Table, exp.Subquery, exp.Values)):
            continue
        if isinstance(src, exp.Lateral) and isinstance(src.this, exp.Subquery) \
                and not src.args.get("view"):
            continue
        if isinstance(src, exp.Lateral):  # LATERAL read_csv(...), LATERAL VIEW explode(...)
            src = src.this
        name = function_name(src) if isinstance(src, exp.Func) else type(src).__name__.lower()
        raise _refuse("table-function", f"FROM {name}(...) is not a table of the schema; read "
                      "only the schema's tables (use UNNEST in the SELECT list instead)", sql)


def _walk(root: exp.Expression, schema: Schema, sql: str) -> list[str]:
    known = {t.name for t in schema.tables}
    used: set[str] = set()
    for node in root.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            raise _refuse("write", f"{_statement_name(node)} is not allowed: the query must "
                          "only read (one SELECT, no writes, DDL, settings or commands)", sql)
        if isinstance(node, exp.Table):
            ctes = visible_ctes(node)
            _check_table(node, known, ctes, sql)
            if node.name.lower() in known and node.name.lower() not in ctes:
                used.add(node.name.lower())
                alias = node.args.get("alias")
                if isinstance(alias, exp.TableAlias) and alias.columns:
                    # "FROM t AS x(a, b)" renames by position, and a table's first column
                    # is the hidden tuple id: x.a would be the id (review 22)
                    raise _refuse("column-aliases", f"a column list after {node.name}'s alias "
                                  "renames its columns by position, which is not allowed: "
                                  "rename columns in the SELECT list (col AS name)", sql)
        elif isinstance(node, exp.Join) and node.args.get("method") == "NATURAL":
            # a NATURAL join matches every column both tables have, the hidden tuple id
            # too, and so matches no row (review 22)
            raise _refuse("natural-join", "NATURAL JOIN is not allowed: name the join's "
                          "columns with ON or USING", sql)
        elif isinstance(node, exp.Func) and _forbidden_function(function_name(node)):
            raise _refuse("forbidden-function", f"function {function_name(node)}() is not "
                          "allowed: it reads files, the network, settings or the catalog; "
                          "compute the answer from the schema's tables only", sql)
        elif isinstance(node, exp.PositionalColumn):
            # "#2" reads a column by position, the hidden lineage column too (review 17)
            raise _refuse("positional-column", "a column by position (#N) is not allowed: "
                          "name each column the query reads", sql)
        elif isinstance(node, exp.Columns):
            # columns chosen and renamed by a pattern ("COLUMNS('^(x.*)$') AS '\\1'") can
            # copy the name of the column lineage adds to every derived table, and cite
            # what the query never read (review 16)
            raise _refuse("columns-pattern", "COLUMNS(...) is not allowed: name each column "
                          "the query reads", sql)
        elif isinstance(node, exp.Select):
            _check_sources(node, sql)
    return sorted(used)


def _plain(node: exp.Expression) -> exp.Expression:
    """``node`` with columns unqualified and identifiers unquoted, for a readable name."""
    def strip(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column):
            return exp.column(n.name)
        if isinstance(n, exp.Identifier):
            return exp.to_identifier(n.name)
        return n
    return node.copy().transform(strip)


def _restore_output_names(root: exp.Expression) -> None:
    """qualify() names unaliased computed outputs ``_col_N``; name them after their
    expression instead (``COUNT(*)``) so result columns stay readable."""
    select = root
    while isinstance(select, exp.SetOperation):
        select = select.this
    if not isinstance(select, exp.Select):
        return
    renamed: dict[str, str] = {}
    for proj in select.expressions:
        if isinstance(proj, exp.Alias) and _AUTO_ALIAS.match(proj.alias):
            new = _plain(proj.this).sql("duckdb", identify=False)[:60]
            renamed[proj.alias] = new
            proj.set("alias", exp.to_identifier(new, quoted=True))
    if not renamed:
        return
    for clause in ("order", "having", "qualify"):
        part = root.args.get(clause) or select.args.get(clause)
        if part is None:
            continue
        for ident in part.find_all(exp.Identifier):
            if ident.name in renamed and not isinstance(ident.parent, exp.Table):
                ident.set("this", renamed[ident.name])


def check_sql(sql: str, schema: Schema, unique: Unique | None = None) -> CheckedSQL:
    """Accept ``sql`` only if it is one read-only query over ``schema``'s tables and columns;
    return it qualified and regenerated. Raises :class:`SQLRefusedError` naming what was
    refused and what to change. ``unique``: whether the data holds one row of a table per
    value of some columns, for a join the gate adds (``autojoin.py``)."""
    try:
        return _check(sql, schema, unique)
    except RecursionError as e:  # sqlglot parses and walks recursively: some 45 nested
        # parentheses or subqueries exhaust Python's stack, and the question must not crash
        raise _refuse("too-deep", "the query nests too deeply to check; write it with fewer "
                      "nested parentheses and subqueries (a CTE per step)", sql) from e


def _resolved(root: exp.Expression, schema: Schema, joined: list[str],
              unique: Unique | None) -> tuple[exp.Expression, list[str]]:
    """``root`` with its columns moved to the tables that have them (``requalify.py``) and
    qualified with the joins the gate adds (``autojoin.resolve``), and what was moved."""
    try:
        moved = requalify(root, schema)
    except Exception as e:  # scoping fails on shapes qualify refuses with a clear message
        log.info("no re-qualification, the query's scopes could not be read: %r", e)
        moved = []
    qualified, dropped = resolve(root, schema, joined, unique)
    return qualified, moved + dropped


def _swapped(root: exp.Expression, schema: Schema, unique: Unique | None,
             refused: SqlglotError, joined: list[str]) -> tuple[exp.Expression, list[str]]:
    """``root``, which does not check as written, with its misnamed tables read as the ones
    meant (``retable.py``), resolved like any query (its joins replace ``joined``); raises
    ``refused`` (the query as written's error, ``joined`` as it left it) when nothing is
    swapped or the swapped query does not check either."""
    retry: list[str] = []
    try:
        swapped = retable(root, schema)
        if swapped:
            qualified, moved = _resolved(root, schema, retry, unique)
            joined[:] = retry
            return qualified, swapped + moved
    except Exception as e:  # no reading with another table: the refusal as written
        log.info("no table swapped: %r", e)
    raise refused


def _check(sql: str, schema: Schema, unique: Unique | None) -> CheckedSQL:
    if not isinstance(sql, str) or not sql.strip():
        raise _refuse("empty", "no SQL was given; write one SELECT statement", str(sql))
    if len(sql) > MAX_SQL_CHARS:
        raise _refuse("too-long", f"the query has {len(sql)} characters (at most "
                      f"{MAX_SQL_CHARS}); write a shorter SELECT", sql[:200])
    if bare := bare_keywords(sql, schema):
        raise _refuse("keyword-name", "; ".join(
            f"{w} is a name of the schema that SQL reads as a keyword: write it double-quoted, "
            f'"{w}"' for w in bare), sql)
    try:
        # a comment after the last semicolon ("SELECT ...; -- the top one") parses as a
        # Semicolon holding it: no statement (one after it is, and is refused below)
        statements = [s for s in sqlglot.parse(sql, read="duckdb")
                      if s is not None and not isinstance(s, exp.Semicolon)]
    except SqlglotError as e:
        raise _refuse("parse", f"the SQL does not parse as DuckDB: {str(e)[:300]}", sql) from e
    if len(statements) != 1:
        raise _refuse("multiple-statements", f"found {len(statements)} statements; write "
                      "exactly one SELECT and nothing after it", sql)
    root = statements[0]
    if not isinstance(root, (exp.Select, exp.SetOperation)):
        raise _refuse("not-a-select", f"a {_statement_name(root)} statement is not allowed; "
                      "write one SELECT (WITH ... SELECT and UNION are fine)", sql)
    respelled = respell_tables(root, schema)
    tables = _walk(root, schema, sql)
    joined: list[str] = []
    try:
        written = root.copy()
        try:
            qualified, requalified = _resolved(root, schema, joined, unique)
        except SqlglotError as refused:
            # a table named where another was meant (retable.py), only for a query that
            # does not check as written, and only if the swapped one checks
            qualified, requalified = _swapped(written, schema, unique, refused, joined)
    except SqlglotError as e:
        raise _refuse("unknown-column", f"{str(e)[:300]}; the schema's columns are: "
                      + "; ".join(f"{t.name}({', '.join(t.column_names)})"
                                  for t in schema.tables)
                      + column_hint(str(e), schema, tables)
                      + (f" (the gate had added {'; '.join(joined)}; the position above is "
                         "in that query)" if joined else ""), sql) from e
    except Exception as e:  # sqlglot's optimizer asserts on shapes it cannot resolve (a
        # PIVOT beside a derived table under SELECT *): a refusal the model can act on, not a
        # crash that loses the question
        log.warning("sqlglot could not qualify the query: %r", e)
        raise _refuse("unsupported", "the query's shape cannot be checked (sqlglot: "
                      f"{type(e).__name__}); write it more simply, naming the columns "
                      "instead of SELECT * and without PIVOT", sql) from e
    hoisted = []
    if (why := outer_columns(qualified, schema)) is not None and \
            (moved := hoist_order(qualified, schema)) is not None:
        # the one reading of an order by the enclosing row's columns (correlated.py)
        log.info("the gate moved %s out of a subquery", moved)
        hoisted.append(moved)
        why = outer_columns(qualified, schema)
    if why is not None:
        raise _refuse("outer-column", why, sql)
    _restore_output_names(qualified)
    normalized = qualified.sql(dialect="duckdb", comments=False)
    # defence in depth: what will run must itself parse as the same single query
    again = [s for s in sqlglot.parse(normalized, read="duckdb") if s is not None]
    if len(again) != 1 or type(again[0]) is not type(qualified):
        raise _refuse("parse", "the query does not survive normalization; simplify it", sql)
    tables = _walk(again[0], schema, sql)  # an added join reads one more table
    return CheckedSQL(original=sql, sql=normalized, expression=qualified, tables=tables,
                      requalified=requalified, joined=joined, hoisted=hoisted,
                      respelled=respelled)
