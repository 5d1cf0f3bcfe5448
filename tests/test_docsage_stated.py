"""A numeric result cell quoted as its source chunk writes it. The measuring model's Set2
answer was "63907400000.0" for a revenue the document writes "USD 63907.4M": right, but the
column had no unit, so the answer said neither dollars nor millions."""

from __future__ import annotations

import pytest

from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.reason import numbered, result_table
from quaderno.methods.docsage.records import StatedValue
from quaderno.methods.docsage.rows import Correction, Provenance, Row
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.schema import Column, Schema, Table
from quaderno.methods.docsage.stated import projected_columns, stated_values, with_stated

SCHEMA = Schema(tables=[Table(name="companies", columns=[
    Column(name="name"), Column(name="annual_revenue", type="DOUBLE"),
    Column(name="founded", type="INT"), Column(name="area", type="DOUBLE")],
    primary_key=["name"])])
TEXTS = {
    "d43#0": "Rastou Bank\nRastou Bank, founded in 1931, reported revenue of USD 63907.4M.",
    "d12#0": "Olvenmark\nOlvenmark (founded 1967) had a turnover of $42.8107 billion.",
    "d77#2": "Errata\nOlvenmark's site covers 283 square kilometres.",
}


def _rows() -> list[Row]:
    return [
        Row(table="companies", values={"name": "Rastou Bank", "annual_revenue": 63907400000.0,
                                       "founded": 1931, "area": None},
            provenance=Provenance(chunk_id="d43#0", doc_id="d43")),
        # the area was filled by a correction from another chunk
        Row(table="companies", values={"name": "Olvenmark", "annual_revenue": 42810700000.0,
                                       "founded": 1967, "area": 283.0},
            provenance=Provenance(chunk_id="d12#0", doc_id="d12", corrections=[Correction(
                column="area", old=None, new=283.0, reason="backtracking", by="judge",
                evidence_chunk="d77#2", quote="covers 283 square kilometres")])),
    ]


def _run(sql: str):
    with SQLSandbox(SCHEMA, _rows()) as sb:
        table = result_table(run_with_lineage(sb, sql))
    table.stated = stated_values(table, SCHEMA, TEXTS)
    return table


@pytest.mark.parametrize("sql,columns,expected", [
    ("SELECT MAX(annual_revenue) FROM companies", ["MAX(annual_revenue)"],
     [{"annual_revenue"}]),
    ("SELECT name, annual_revenue AS rev FROM companies", ["name", "rev"],
     [{"name"}, {"annual_revenue"}]),
    ("SELECT count(*) AS n, count(DISTINCT founded) FROM companies", ["n", "c"], [set(), set()]),
    ("SELECT * FROM companies", ["name", "founded"], [{"name"}, {"founded"}]),
    ("SELECT founded FROM companies UNION SELECT area FROM companies", ["founded"],
     [{"founded"}]),
    ("SELECT (", ["x"], [{"x"}]),                       # unreadable: the result's own names
])
def test_what_each_result_column_reads(sql, columns, expected) -> None:
    assert projected_columns(sql, columns) == expected


def test_a_maximum_is_quoted_from_the_chunk_it_was_read_from() -> None:
    table = _run("SELECT MAX(annual_revenue) FROM companies")
    assert table.rows == [[63907400000.0]]
    assert table.stated == [StatedValue(row=1, column=table.columns[0], value=63907400000.0,
                                        quote="USD 63907.4M", chunk_id="d43#0",
                                        doc_id="d43")]
    assert 'written "USD 63907.4M"' in numbered(table, 10)


def test_every_row_and_column_is_quoted_on_its_own() -> None:
    table = _run("SELECT name, annual_revenue, founded FROM companies ORDER BY name")
    quotes = {(s.row, s.column): s.quote for s in table.stated}
    # a year the chunk writes as "1967" says no more than the figures: no quote
    assert quotes == {(1, "annual_revenue"): "$42.8107 billion",
                      (2, "annual_revenue"): "USD 63907.4M"}


def test_a_corrected_cell_is_quoted_from_its_evidence_chunk() -> None:
    table = _run("SELECT area FROM companies WHERE name = 'Olvenmark'")
    (s,) = table.stated
    assert (s.quote, s.chunk_id, s.doc_id) == ("283 square kilometres", "d77#2", "")


@pytest.mark.parametrize("sql", [
    "SELECT AVG(annual_revenue) FROM companies",         # computed: equals no stated value
    "SELECT COUNT(*) FROM companies",
    "SELECT MAX(annual_revenue) / 1000000 FROM companies",
])
def test_what_no_document_states_gets_no_quote(sql) -> None:
    table = _run(sql)
    assert table.rows and table.stated == []


def test_a_computed_value_equal_to_a_stated_one_in_another_column_is_not_quoted() -> None:
    # 283 is Olvenmark's area: quoted when the projection reads area ...
    table = _run("SELECT MAX(area) + 0 * MAX(founded) AS y FROM companies")
    assert table.rows == [[283.0]]
    assert [s.quote for s in table.stated] == ["283 square kilometres"]
    # ... not when it reads only founded and happens to come out at 283
    table = _run("SELECT MAX(founded) - 1684 AS y FROM companies")
    assert table.rows == [[283]] and table.stated == []


STATED = [StatedValue(row=1, column="m", value=63907400000.0, quote="USD 63907.4M",
                      chunk_id="d43#0", doc_id="d43"),
          StatedValue(row=2, column="staff", value=2300, quote="2,300 staff",
                      chunk_id="d43#0")]


@pytest.mark.parametrize("answer,rows,expected", [
    ("63907400000.0", [1], '63907400000.0 (written "USD 63907.4M" in d43)'),
    ("63,907,400,000", [1], '63,907,400,000 (written "USD 63907.4M" in d43)'),
    ("The highest is 63907400000", [1, 2],
     'The highest is 63907400000 (written "USD 63907.4M" in d43)'),
    ("USD 63907.4M", [1], "USD 63907.4M"),               # quoted already
    ("Rastou Bank", [1], "Rastou Bank"),                 # gives no number
    ("63907400000.0", [2], "63907400000.0"),             # row 1 not cited
    ("2,300", [2], '2,300 (written "2,300 staff")'),     # no document id: none said
    ("2,300 staff", [2], "2,300 staff"),
    ("64 billion", [1], "64 billion"),                   # another number
])
def test_the_answer_gets_the_words_only_for_a_number_it_gives(answer, rows, expected) -> None:
    assert with_stated(answer, STATED, rows) == expected
