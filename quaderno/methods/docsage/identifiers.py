"""What a table or column of a DocSage schema may be named: a plain SQL identifier.

Names are validated as plain SQL identifiers when the schema is built (:func:`identifier`), so
a name written by the model can never smuggle SQL into the DDL; values never enter DDL at all.
A name must also be no keyword DuckDB would need quoted (:func:`reserved`, read from the
installed DuckDB), and a drafted schema avoids the words sqlglot, which the SQL gate reads
queries with, cannot read unquoted either (:func:`avoided`). The schema's models
(:mod:`.schema`) check their names here.
"""

from __future__ import annotations

import functools
import re

_IDENT = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
# words a table or column may not be named: DuckDB keywords that would need quoting
_RESERVED = frozenset({
    "select", "from", "where", "group", "order", "by", "limit", "having", "join", "on", "as",
    "and", "or", "not", "null", "table", "create", "drop", "insert", "update", "delete", "union",
    "with", "case", "when", "then", "else", "end", "in", "is", "like", "between", "distinct",
    "all", "any", "default", "primary", "foreign", "key", "references", "check", "unique",
    "user", "desc", "asc", "offset", "values", "into", "set", "pragma", "attach", "copy"})


@functools.cache
def duckdb_keywords() -> frozenset[str]:
    """DuckDB's keywords that cannot name a column or table unquoted (reserved, and those
    only usable as type or function names or only as column names: ``left``, ``window``,
    ``full``, ``to``, ...), read from the installed DuckDB itself."""
    import duckdb

    rows = duckdb.connect().execute("SELECT keyword_name FROM duckdb_keywords() WHERE "
                                    "keyword_category <> 'unreserved'").fetchall()
    return frozenset(r[0] for r in rows)


@functools.cache
def sqlglot_keywords() -> frozenset[str]:
    """The words of the installed sqlglot's DuckDB keywords that sqlglot cannot read as a
    column or table named so: DuckDB's own reserved words, and some DuckDB takes as names
    (``grant``, ``lock``, ``rollup``, ``current_date``), which the SQL gate, parsing with
    sqlglot, would refuse or misread. Found by parsing each keyword in a column's and a
    table's places, so the set follows the installed sqlglot."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.dialects.duckdb import DuckDB
    from sqlglot.errors import SqlglotError

    def readable(w: str) -> bool:
        try:
            trees = [sqlglot.parse_one(sql, read="duckdb") for sql in (
                f"SELECT {w} FROM t WHERE {w} = 1 GROUP BY {w} ORDER BY {w}",
                f"SELECT a.{w}, AVG({w}) FROM {w} AS a JOIN b ON a.{w} = b.{w} GROUP BY 1")]
        except SqlglotError:
            return False
        return all(sum(c.name == w for c in t.find_all(exp.Column)) == 4 for t in trees) \
            and any(t.name == w for t in trees[1].find_all(exp.Table))

    return frozenset(w for k in DuckDB.Tokenizer.KEYWORDS
                     if _IDENT.match(w := k.lower()) and not readable(w))


def reserved(name: str) -> bool:
    """``name`` cannot name a table or column: an SQL keyword DuckDB would need quoted."""
    return name in _RESERVED or name in duckdb_keywords()


def avoided(name: str) -> bool:
    """``name`` is not one to give a table or column: :func:`reserved`, or a word DuckDB
    takes as a name but sqlglot, which the SQL gate reads queries with, cannot read unquoted
    (:func:`sqlglot_keywords`: a query naming award's ``grant`` was refused). A schema
    naming one is valid, and the gate tells the model to quote it."""
    return reserved(name) or name in sqlglot_keywords()


def identifier(name: str, what: str = "name") -> str:
    """``name`` lower-cased if it is a safe SQL identifier, else ValueError naming it."""
    norm = name.strip().lower() if isinstance(name, str) else name
    if not isinstance(norm, str) or not _IDENT.match(norm) or reserved(norm):
        raise ValueError(f"{what} {name!r} is not a plain identifier: use 1-63 lower-case "
                         "letters, digits or '_', starting with a letter, and not an SQL keyword")
    return norm


__all__ = ["avoided", "duckdb_keywords", "identifier", "reserved", "sqlglot_keywords"]
