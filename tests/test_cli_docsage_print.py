"""`quaderno ask -m docsage` prints, beside the schema, SQL and rows, what the run left out or
replaced: numbers the answer or its explanation gave that the result does not hold, link
rows ended, and the stored tables the schema draft was offered."""

from __future__ import annotations

from quaderno.cli.ask_cmd import print_docsage
from quaderno.cli.common import console
from quaderno.methods.details import DocSageDetails
from quaderno.methods.docsage.records import AskLog, ResultTable

LINK = {"table": "members", "values": {"league": "Northern League", "city": "Oslo"},
        "chunk_id": "d2#0", "quote": "Former members: Oslo (left 2005).", "said_in": "d1#0"}


def printed(details: DocSageDetails) -> str:
    with console.capture() as cap:
        print_docsage(details)
    return " ".join(cap.get().split())


def test_an_answer_replaced_by_the_rows_and_the_ended_links_are_printed():
    d = DocSageDetails(variant="full", result=ResultTable(columns=["name"], rows=[["Oslo"]]),
                       ungrounded=["1.15"], from_rows=True, clear={"links_ended": [LINK] * 7})
    out = printed(d)
    assert ("the model's answer gave 1.15, which no result row holds; the answer is the "
            "result rows") in out
    assert ('left out as ended: members(Northern League, Oslo) in d2#0: "Former members: '
            'Oslo (left 2005)." (d1#0)') in out
    assert out.count("left out as ended:") == 5 and "... 2 more link rows" in out
    d.from_rows = False
    assert "asked once more, it answered from the result" in printed(d)
    assert "explanation" not in printed(d)
    d.explanation_ungrounded = ["639,074,000,000"]
    assert ("the model's explanation gave 639,074,000,000, which no result row holds; it is "
            "left out") in printed(d)


def test_rows_given_for_another_fault_than_a_number_say_why():
    """Review 1: the rows replaced an answer of "not found" from rows (or one naming no
    number of a one-number result) with nothing printed to say so."""
    why = "the answer again gave no number from a result of one value, 2300"
    d = DocSageDetails(variant="full", result=ResultTable(columns=["m"], rows=[[2300]]),
                       from_rows=True, from_rows_why=why)
    assert f"{why}; the answer is the result rows" in printed(d)
    d.from_rows_why = ""
    assert "not borne out by the result; the answer is the result rows" in printed(d)


def test_text_from_documents_is_printed_as_text():
    hostile = {**LINK, "quote": "Former members: [/bold][link=file:///etc]Oslo[/link]."}
    out = printed(DocSageDetails(variant="full", clear={"links_ended": [hostile]}))
    assert '"Former members: [/bold][link=file:///etc]Oslo[/link]."' in out


def test_ids_numbered_per_chunk_are_printed_as_text():
    note = ("company.id (and membership.[bold]company_id[/bold]): no chunk states it; 6 "
            "cell(s) from 3 chunk(s) numbered per chunk, so a join pairs only rows of one chunk")
    out = printed(DocSageDetails(variant="full", scoped_keys=[note]))
    assert f"ids numbered per chunk: {note}" in out


def test_a_plain_run_prints_neither():
    out = printed(DocSageDetails(variant="full",
                                 result=ResultTable(columns=["name"], rows=[["Oslo"]])))
    assert "no result row holds" not in out and "left out as ended" not in out
    assert "offered" not in out and "numbered per chunk" not in out


def test_the_stored_tables_the_draft_was_offered_are_printed():
    ask = AskLog(mode="active", offered=["city(name TEXT, population INT)",
                                         "league([b]x[/b] TEXT)"])
    out = printed(DocSageDetails(variant="full", ask=ask))
    assert ("schema draft offered 2 stored table(s): city(name TEXT, population INT); "
            "league([b]x[/b] TEXT)") in out


def test_a_tables_row_count_is_printed_whole():
    """--json keeps a table's first 20 rows; the count printed was theirs ("20+ rows")."""
    from quaderno.methods.docsage.schema import Column, Schema, Table
    schema = Schema(tables=[Table(name="cities", columns=[Column(name="name")])])
    d = DocSageDetails(variant="full", db_schema=schema,
                       tables={"cities": [{"name": f"c{i}"} for i in range(20)]},
                       table_sizes={"cities": 101})
    assert "table cities(name) — 101 rows" in printed(d)
    d.table_sizes = {}                         # a record made before the count was kept
    assert "table cities(name) — 20+ rows" in printed(d)
    d.table_sizes, d.tables = {"cities": 1}, {"cities": [{"name": "c0"}]}
    assert "table cities(name) — 1 row" in printed(d) and "1 rows" not in printed(d)
