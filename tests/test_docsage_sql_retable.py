"""A table named where another was meant is read as that one (``retable.py``). The measuring
model's held-out Set2 query joined ``company_memberships_info AS T2 ON T1.id =
T2.commission_id`` and selected ``T2.chief_executive``: both columns of
``company_memberships``, neither of the table it named; told so, it wrote the same query
three times (``s13h-docsage-set2``, replayed at ac06bf6)."""

from __future__ import annotations

import pytest
from docsage_fakes import row
from quaderno.errors import SQLRefusedError
from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.schema import Schema

SCHEMA = Schema.model_validate({"tables": [
    {"name": "commission", "columns": [{"name": "id", "type": "INT"}, {"name": "company"},
                                       {"name": "employees", "type": "INT"}],
     "primary_key": ["id"]},
    {"name": "memberships", "columns": [{"name": "member"}, {"name": "chief_executive"},
                                        {"name": "commission_id", "type": "INT"}]},
    {"name": "memberships_info", "columns": [{"name": "member"}, {"name": "role"}]},
    # have the chief executive too, but not the commission id
    {"name": "officers", "columns": [{"name": "chief_executive"}, {"name": "office"}]},
    {"name": "branches", "columns": [{"name": "chief_executive"}, {"name": "office"},
                                     {"name": "city"}]},
]})
COMPANIES = [(1, "Kelvo Trust", 300, "Ann Vel"), (2, "Brin Holdings", 900, "Dag Orn"),
             (3, "Ulm Savings", 500, "Eli Sar")]
MODEL_SQL = ("SELECT T2.chief_executive FROM commission AS T1 INNER JOIN memberships_info "
             "AS T2 ON T1.id = T2.commission_id ORDER BY T1.employees DESC LIMIT 1")
SWAP = ("memberships_info AS T2 -> memberships (the one table with chief_executive, "
        "commission_id)")


def _rows() -> list[Row]:
    out = []
    for cid, name, staff, ceo in COMPANIES:
        out += [row("commission", f"c-{cid}", id=cid, company=name, employees=staff),
                row("memberships", f"m-{cid}", member=name, chief_executive=ceo,
                    commission_id=cid),
                row("memberships_info", f"i-{cid}", member=name, role="member")]
    out.append(row("officers", "o-1", chief_executive="Somebody Else", office="HQ"))
    out.append(row("branches", "b-1", chief_executive="Ann Vel", office="Ulm", city="Ulm"))
    return out


@pytest.fixture(scope="module")
def sb():
    with SQLSandbox(SCHEMA, _rows()) as sandbox:
        yield sandbox


def test_the_held_out_query_reads_the_table_it_meant(sb: SQLSandbox) -> None:
    checked = sb.check(MODEL_SQL)
    assert checked.requalified == [SWAP]
    assert checked.tables == ["commission", "memberships"]
    traced = run_with_lineage(sb, MODEL_SQL)
    assert traced.result.rows == [["Dag Orn"]]       # Brin Holdings has the most staff
    assert {s.chunk_id for s in traced.lineage[0].sources} == {"c-2", "m-2"}


def test_an_unaliased_table_keeps_its_name_as_the_alias(sb: SQLSandbox) -> None:
    sql = ("SELECT memberships_info.chief_executive FROM commission JOIN memberships_info "
           "ON commission.id = memberships_info.commission_id WHERE commission.id = 3")
    assert sb.check(sql).requalified == [SWAP.replace("memberships_info AS T2",
                                                      "memberships_info AS memberships_info")]
    assert run_with_lineage(sb, sql).result.rows == [["Eli Sar"]]


def test_a_correlated_use_of_the_alias_is_read_from_the_swapped_table(sb: SQLSandbox) -> None:
    sql = MODEL_SQL.replace("ORDER BY", "WHERE NOT EXISTS (SELECT 1 FROM officers AS o "
                            "WHERE o.chief_executive = T2.chief_executive) ORDER BY")
    assert sb.check(sql).requalified == [SWAP]
    assert run_with_lineage(sb, sql).result.rows == [["Dag Orn"]]


def test_a_query_the_other_repairs_make_right_keeps_its_tables(sb: SQLSandbox) -> None:
    """Review 22: a swap tried first read ``branches`` for a query whose columns move to the
    table it already reads (``officers``), and dropped the filter an inner join to a table
    lacking two of its columns made. The swap is tried only for a query that does not check
    otherwise."""
    sql = "SELECT T2.chief_executive FROM officers AS T1, memberships_info AS T2 " \
          "WHERE T2.office = 'HQ'"
    checked = sb.check(sql)
    assert checked.requalified == ["T2.chief_executive -> T1.chief_executive",
                                   "T2.office -> T1.office"]
    assert checked.tables == ["memberships_info", "officers"]


def test_a_cte_of_the_tables_name_is_not_swapped_in(sb: SQLSandbox) -> None:
    """Review 22: the model's own CTE named like the table that fits would have been read,
    and the repair would have said it read the table."""
    sql = ("WITH memberships AS (SELECT 'Nobody' AS chief_executive, 2 AS commission_id) "
           + MODEL_SQL)
    with pytest.raises(SQLRefusedError) as info:
        sb.check(sql)
    assert info.value.reason == "unknown-column"


def test_a_table_the_select_reads_already_is_not_swapped_in(sb: SQLSandbox) -> None:
    """The table with the columns is read by the SELECT: the columns move to it
    (``requalify.py``); the misnamed table stays, joined as written."""
    sql = ("SELECT T2.chief_executive, T3.member FROM memberships AS T3 JOIN memberships_info "
           "AS T2 ON T3.member = T2.member WHERE T2.commission_id = 1")
    checked = sb.check(sql)
    assert checked.requalified == ["T2.chief_executive -> T3.chief_executive",
                                   "T2.commission_id -> T3.commission_id"]
    assert checked.tables == ["memberships", "memberships_info"]
    assert run_with_lineage(sb, sql).result.rows == [["Ann Vel", "Kelvo Trust"]]


@pytest.mark.parametrize(("sql", "why"), [
    # one column of another table: the gate's join, or the model's, not another table
    ("SELECT T2.chief_executive FROM commission AS T1 JOIN memberships_info AS T2 "
     "ON T1.company = T2.member", "chief_executive is a column of memberships and officers and "
     "branches"),
    # two tables have every column read through the alias: which was meant is not guessed
    ("SELECT T2.chief_executive, T2.office FROM memberships_info AS T2", "Unknown column"),
    # the alias names a source in a subquery too (its own memberships_info): not swapped
    ("SELECT T2.chief_executive FROM commission AS T1 JOIN memberships_info AS T2 "
     "ON T1.id = T2.commission_id WHERE T1.company IN (SELECT T2.member FROM "
     "memberships_info AS T2)", "Unknown column"),
    # read in a correlated subquery through the alias, a column only the named table has
    ("SELECT T2.chief_executive FROM commission AS T1 JOIN memberships_info AS T2 "
     "ON T1.id = T2.commission_id WHERE EXISTS (SELECT 1 FROM officers AS o "
     "WHERE o.office = T2.role)", "Unknown column"),
    # swapped, the query still reads a column neither table has: refused as written
    ("SELECT T2.chief_executive, T2.commission_id, T2.buried FROM memberships_info AS T2",
     "Unknown column"),
])
def test_what_has_no_single_reading_is_refused_as_written(sb: SQLSandbox, sql: str,
                                                          why: str) -> None:
    with pytest.raises(SQLRefusedError) as info:
        sb.check(sql)
    assert info.value.reason == "unknown-column" and why in str(info.value)
    assert "memberships_info AS" not in str(info.value)   # no swap shows in the refusal
