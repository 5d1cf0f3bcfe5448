"""A table named with other underscores or case than the schema's is read as that table.
The measuring model's Set2 Relationship query (``grid-docsage-set2``) read
``drournlia_markets_commission`` from a schema whose table is ``drournliamarketscommission``;
told so, it wrote the same query twice more, and the question ended "not found"."""

from __future__ import annotations

import pytest
from quaderno.errors import SQLRefusedError
from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.reason import gate_repairs
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.schema import Column, Schema, Table
from quaderno.methods.docsage.sqlgate import check_sql

SCHEMA = Schema(tables=[
    Table(name="drournliamarketscommission",
          columns=[Column(name="name"), Column(name="employees", type="INT"),
                   Column(name="chief_executive")], primary_key=["name"]),
])
SET2_SQL = ("SELECT chief_executive FROM drournlia_markets_commission WHERE employees = "
            "(SELECT MIN(employees) FROM drournlia_markets_commission)")


@pytest.fixture(scope="module")
def sb():
    rows = [Row(table="drournliamarketscommission", values={
        "name": n, "employees": e, "chief_executive": c}, provenance=Provenance(chunk_id=n))
        for n, e, c in (("Roustoustus Systems", 51090, "Distaend Rinbaernvaer"),
                        ("Rastou", 97040, "Grernril Nyrkrar"))]
    with SQLSandbox(SCHEMA, rows) as sandbox:
        yield sandbox


def test_the_set2_query_reads_the_table_the_schema_spells(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, SET2_SQL)
    assert traced.result.rows == [["Distaend Rinbaernvaer"]]
    assert traced.respelled == ["drournlia_markets_commission as drournliamarketscommission"]
    assert traced.lineage[0].sources[0].chunk_id == "Roustoustus Systems"
    assert "a table named as the schema spells it" in gate_repairs(
        [], [], [], traced.respelled)


@pytest.mark.parametrize("sql", [
    "SELECT d.name FROM Drournlia_Markets_Commission AS d",                # its alias stays
    "SELECT drournlia_markets_commission.name FROM drournlia_markets_commission",
    "SELECT name FROM DROURNLIAMARKETSCOMMISSION",
])
def test_qualified_and_aliased_columns_still_resolve(sb: SQLSandbox, sql) -> None:
    assert sorted(run_with_lineage(sb, sql).result.rows) == [["Rastou"],
                                                             ["Roustoustus Systems"]]


def test_a_correct_name_is_left_as_written() -> None:
    checked = check_sql("SELECT name FROM drournliamarketscommission", SCHEMA)
    assert checked.respelled == []


def test_a_name_two_tables_could_mean_or_a_cte_defines_is_not_respelled() -> None:
    two = Schema(tables=[Table(name="ab_c", columns=[Column(name="x")]),
                         Table(name="a_bc", columns=[Column(name="x")])])
    with pytest.raises(SQLRefusedError, match="unknown table 'abc'"):
        check_sql("SELECT x FROM abc", two)
    # a CTE of that spelling is the CTE, not the schema's table
    checked = check_sql("WITH drournlia_markets_commission AS (SELECT 1 AS name) "
                        "SELECT name FROM drournlia_markets_commission", SCHEMA)
    assert checked.respelled == [] and checked.tables == []
    # a respelling into a name a CTE shadows there is no respelling (the review of 64a0620:
    # it read the CTE and said it had read the table)
    with pytest.raises(SQLRefusedError, match="unknown table 'drournlia_markets_commission'"):
        check_sql("WITH drournliamarketscommission AS (SELECT 'evil' AS name) "
                  "SELECT name FROM drournlia_markets_commission", SCHEMA)
    # only a schema table can be reached: other names stay refused
    with pytest.raises(SQLRefusedError, match="system catalog"):
        check_sql("SELECT * FROM duckdb_tables", SCHEMA)
