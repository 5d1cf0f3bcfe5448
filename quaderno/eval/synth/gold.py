"""The gold database: a world's tables in DuckDB, the source of truth for every answer.

Tables: the members (``institutions``, ``clubs`` …: ``name`` plus the family's columns and
the foreign key to the linked table), the linked table (``presidents``, ``cities`` …) and
``membership(member, joined, left_year)``, which also holds former members. Questions are
written against these tables and their gold answers are what DuckDB returns.
"""

from __future__ import annotations

from typing import Any

import duckdb

from quaderno.eval.synth.families import Attr, Family
from quaderno.eval.synth.world import World

_SQL_TYPES = {"year": "INTEGER", "count": "BIGINT", "money": "DOUBLE", "category": "VARCHAR",
              "text": "VARCHAR"}


def _cols(attrs: tuple[Attr, ...]) -> list[tuple[str, str]]:
    return [(a.column, _SQL_TYPES[a.kind]) for a in attrs]


def table_columns(fam: Family) -> dict[str, list[tuple[str, str]]]:
    """Column names and SQL types of every gold table of ``fam``."""
    return {
        fam.members: [("name", "VARCHAR")] + _cols(fam.attrs) + [(fam.link_role, "VARCHAR")],
        fam.link_table: [("name", "VARCHAR")] + _cols(fam.link_attrs),
        "membership": [("member", "VARCHAR"), ("joined", "INTEGER"), ("left_year", "INTEGER")],
    }


def table_rows(world: World) -> dict[str, list[list[Any]]]:
    fam = world.family
    members = [[e.name] + [e.values.get(a.column) for a in fam.attrs] + [e.link]
               for e in world.members]
    links = [[e.name] + [e.values.get(a.column) for a in fam.link_attrs] for e in world.links]
    membership = [[e.name, e.joined, None] for e in world.members]
    membership += [[e.name, e.joined, e.left] for e in world.distractors if e.role == "former"]
    return {fam.members: members, fam.link_table: links, "membership": membership}


def connect(columns: dict[str, list[tuple[str, str]]],
            rows: dict[str, list[list[Any]]]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB holding ``rows`` under ``columns`` (gold or extracted tables)."""
    con = duckdb.connect(":memory:")
    for table, cols in columns.items():
        con.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in cols)})")
        if rows.get(table):
            marks = ", ".join("?" for _ in cols)
            con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows[table])
    return con


def gold_db(world: World) -> duckdb.DuckDBPyConnection:
    return connect(table_columns(world.family), table_rows(world))


def run(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[list[str], list[list[Any]]]:
    """Column names and rows (as lists) of ``sql``."""
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description or []]
    return cols, [list(r) for r in cur.fetchall()]
