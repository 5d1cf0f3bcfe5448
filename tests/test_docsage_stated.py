"""A numeric result cell quoted as its source chunk writes it. The measuring model's Set2
answer was "63907400000.0" for a revenue the document writes "USD 63907.4M": right, but the
column had no unit, so the answer said neither dollars nor millions."""

from __future__ import annotations

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.reason import result_table
from quaderno.methods.docsage.synthesis import numbered
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
    "d43#0": "Rastou Bank, founded in 1931, reported revenue of USD 63907.4M.",
    "d12#0": "Olvenmark (founded 1967) had a turnover of $42.8107 billion.",
    "d77#2": "Olvenmark's site covers 283 square kilometres.",
}
CHUNKS = {i: Chunk(id=i, text=t, title=i.split("#")[0]) for i, t in TEXTS.items()}


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


def _run(sql: str, rows=None, schema=SCHEMA, chunks=CHUNKS):
    with SQLSandbox(schema, rows or _rows()) as sb:
        table = result_table(run_with_lineage(sb, sql))
    table.stated = stated_values(table, schema, chunks)
    return table


@pytest.mark.parametrize("sql,columns,expected", [
    ("SELECT MAX(annual_revenue) FROM companies", ["MAX(annual_revenue)"],
     [{"annual_revenue"}]),
    ("SELECT name, annual_revenue AS rev FROM companies", ["name", "rev"],
     [{"name"}, {"annual_revenue"}]),
    ("SELECT count(*) AS n, count(DISTINCT founded) FROM companies", ["n", "c"], [set(), set()]),
    # computed: no tuple's value, whatever it equals
    ("SELECT AVG(a), SUM(a), a * 1, MEDIAN(a), (MIN(a)) FROM t", list("vwxyz"),
     [set(), set(), set(), set(), {"a"}]),
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
    assert (s.quote, s.chunk_id, s.doc_id) == ("283 square kilometres", "d77#2", "d77")


@pytest.mark.parametrize("sql", [
    "SELECT AVG(annual_revenue) FROM companies",         # computed: equals no stated value
    "SELECT COUNT(*) FROM companies",
    "SELECT MAX(annual_revenue) / 1000000 FROM companies",
])
def test_what_no_document_states_gets_no_quote(sql) -> None:
    table = _run(sql)
    assert table.rows and table.stated == []


def test_an_average_equal_to_one_companys_value_is_not_quoted() -> None:
    # the mean of 42,810,700,000 and 84,810,700,000 is Rastou Bank's 63,810,700,000
    rows = _rows()
    rows[0].values["annual_revenue"] = 63810700000.0
    rows.append(Row(table="companies", values={"name": "Kessel", "annual_revenue":
                                               84810700000.0},
                    provenance=Provenance(chunk_id="d12#0")))
    table = _run("SELECT AVG(annual_revenue) FROM companies WHERE name <> 'Rastou Bank' "
                 "UNION ALL SELECT MAX(annual_revenue) FROM companies "
                 "WHERE name = 'Rastou Bank'", rows=rows)
    assert table.rows == [[63810700000.0], [63810700000.0]]
    assert table.stated == []


COUNTED = Schema(tables=[Table(name="firm", columns=[
    Column(name="name"), Column(name="offices", type="INT"),
    Column(name="employees", type="INT"), Column(name="rating", type="INT")],
    primary_key=["name"])])


@pytest.mark.parametrize("column,text,quote", [
    ("rating", "Brin grew 3% last year. Brin's rating is 3.", None),  # written two ways
    # a count of offices is no measure (Riandgiax's revenue read as offices, head-set2)
    ("offices", "Brin grew 3% last year. Brin has 3 offices.", "3 offices"),
    ("offices", "Brin has 3 offices.", "3 offices"),
    ("employees", "Brin grew 3% last year.", None),        # a headcount is not a measure
    ("employees", "Brin grew 3% last year. Brin has 3 employees.", "3 employees"),
])
def test_a_number_written_as_what_the_column_cannot_hold_is_no_quote(column, text,
                                                                       quote) -> None:
    rows = [Row(table="firm", values={"name": "Brin", column: 3},
                provenance=Provenance(chunk_id="b#0"))]
    table = _run(f"SELECT MAX({column}) FROM firm", rows=rows, schema=COUNTED,
                 chunks={"b#0": Chunk(id="b#0", text=text)})
    assert [s.quote for s in table.stated] == ([quote] if quote else [])


def test_a_negative_number_is_not_quoted_by_its_size() -> None:
    rows = [Row(table="firm", values={"name": "Brin", "offices": -3},
                provenance=Provenance(chunk_id="b#0"))]
    table = _run("SELECT offices FROM firm", rows=rows, schema=COUNTED,
                 chunks={"b#0": Chunk(id="b#0", text="Brin has 3 offices.")})
    assert table.stated == []


def test_arithmetic_is_not_quoted_even_where_it_equals_a_stated_value() -> None:
    assert [s.quote for s in _run("SELECT MAX(area) AS y FROM companies").stated] == [
        "283 square kilometres"]
    # 283 is Olvenmark's area; computed from the area or the founding year, it is not stated
    for sql in ("SELECT MAX(area) + 0 * MAX(founded) AS y FROM companies",
                "SELECT MAX(founded) - 1684 AS y FROM companies"):
        table = _run(sql)
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


def test_the_number_extraction_read_the_scale_from_is_the_one_quoted() -> None:
    text = "Rastou Bank reported USD 63907.4M, that is $63,907,400,000."
    row = Row(table="companies", values={"name": "Rastou Bank",
                                         "annual_revenue": 63907400000.0},
              provenance=Provenance(chunk_id="r#0"))
    chunks = {"r#0": Chunk(id="r#0", text=text)}
    # written two ways and no reading recorded: no quote
    assert _run("SELECT MAX(annual_revenue) FROM companies", rows=[row],
                chunks=chunks).stated == []
    row.provenance.corrections.append(Correction(
        column="annual_revenue", old=63907.4, new=63907400000.0, reason="scale",
        by="as-stated", evidence_quote="63907.4M"))
    (s,) = _run("SELECT MAX(annual_revenue) FROM companies", rows=[row],
                chunks=chunks).stated
    assert s.quote == "USD 63907.4M"


def test_a_huge_result_cell_is_shown_cut_with_what_was_left_out():
    """A query's cell of any size went into the answer prompt whole (review 15)."""
    from quaderno.methods.docsage.records import ResultTable
    from quaderno.methods.docsage.synthesis import MAX_SHOWN_CELL

    table = ResultTable(columns=["name", "note"], rows=[["Acme", "x" * 5000]])
    shown = numbered(table, 10).splitlines()[1]
    assert shown.startswith('[1] "Acme" | "' + "x" * (MAX_SHOWN_CELL - 1))
    assert shown.endswith("\u2026 (4502 more characters)")
    assert len(shown) < MAX_SHOWN_CELL + 60
    small = ResultTable(columns=["n"], rows=[[3]])
    assert numbered(small, 10) == "n\n[1] 3"
