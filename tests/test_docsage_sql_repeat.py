"""A repair that repeats a query which already failed is not run again: the model is asked
once more, sampled. The measuring model's 2Wiki run (``docsage-2wiki-measuring``, "Who was
born later, Greg Pipes or Ma Xiaolei?") had both birth dates in its tables, read ``date``
from the people table, and wrote the refused query again word for word when the gate named
the table that has it: greedy decoding gives the same reply to the same mistake. (The gate
now adds that join itself, ``test_docsage_sql_autojoin.py``; here the repeated query reads a
column no table has.)"""

from __future__ import annotations

import json

from docsage_fakes import reason_over
from quaderno.methods.docsage.reason import (RESAMPLE_TEMPERATURE, answers_nothing,
                                             empty_columns)
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Column, ForeignKey, Schema, Table

SCHEMA = Schema(tables=[
    Table(name="people", columns=[Column(name="name")], primary_key=["name"]),
    Table(name="birth_dates", columns=[Column(name="person_name"),
                                       Column(name="date", type="DATE")],
          primary_key=["person_name"],
          foreign_keys=[ForeignKey(cols=["person_name"], ref_table="people",
                                   ref_cols=["name"])]),
])
QUESTION = "Who was born later, Greg Pipes or Ma Xiaolei?"
WRONG = "SELECT name FROM people WHERE born > ( SELECT MAX(date) FROM birth_dates )"
RIGHT = ("SELECT p.name FROM people p JOIN birth_dates b ON b.person_name = p.name "
         "ORDER BY b.date DESC LIMIT 1")


def _rows() -> list[Row]:
    def row(table, chunk, **values):
        return Row(table=table, values=values, provenance=Provenance(chunk_id=chunk))
    return [row("people", "p1", name="Ma Xiaolei"), row("people", "p2", name="Greg Pipes"),
            row("birth_dates", "p1", person_name="Ma Xiaolei", date="1987-01-19"),
            row("birth_dates", "p2", person_name="Greg Pipes", date="August 4, 1946")]


def _run(replies_by_call):
    """The reasoner over a fake model answering the n-th compile with ``replies_by_call``
    (a greedy request gets the same reply as any earlier greedy request with its prompt);
    the result, the attempts, the requests and the trace's fallbacks."""
    requests = []

    def respond(request):
        user = request.messages[-1].content
        assert user.startswith("Write one DuckDB SELECT"), user[:60]
        requests.append(request)
        return json.dumps({"sql": replies_by_call(len(requests), request)})
    table, attempts, ep = reason_over(respond, SCHEMA, _rows(), QUESTION)
    return table, attempts, requests, ep.trace.fallbacks


def test_a_repeated_refused_query_is_asked_for_again_sampled() -> None:
    def reply(n, request):
        return RIGHT if request.temperature else WRONG      # greedy: the same mistake
    table, attempts, requests, fallbacks = _run(reply)
    assert [a.stage for a in attempts] == ["gate", "repeat", "ok"]
    assert table.rows == [["Ma Xiaolei"]]
    # the repeat was not run: its error is the first refusal's, quoted
    assert "the same as a query that failed" in attempts[1].error
    assert "born" in attempts[1].error and attempts[1].sql == WRONG
    # greedy twice (the query, its repair), then one sampled re-ask that says why
    assert [r.temperature for r in requests] == [0.0, 0.0, RESAMPLE_TEMPERATURE]
    assert requests[2].seed is not None
    assert "Do not write it again" in requests[2].messages[-1].content
    assert any("repeated a failed query word for word" in f for f in fallbacks)


def test_only_one_sampled_re_ask_then_no_result() -> None:
    table, attempts, requests, fallbacks = _run(lambda n, r: "  " + WRONG.lower() + " ")
    assert [a.stage for a in attempts] == ["gate", "repeat", "repeat"]
    assert table is None and len(requests) == 3
    assert any("repeated a failed one too; no result" in f for f in fallbacks)


def test_a_different_repair_is_run_as_before() -> None:
    table, attempts, requests, _ = _run(lambda n, r: WRONG if n == 1 else RIGHT)
    assert [a.stage for a in attempts] == ["gate", "ok"]
    assert table.rows == [["Ma Xiaolei"]]
    assert [r.temperature for r in requests] == [0.0, 0.0]


def _laureates_run(respond):
    """Two Kraxryndia laureates (1962, 1970) and one ``stedrurial_medal`` row whose
    ``laureate_name`` is empty, as the measuring model's Set1 tables were; nothing links
    the medal to the laureates."""
    schema = Schema(tables=[
        Table(name="stedrurial_medal", columns=[Column(name="laureate_name"),
                                                Column(name="award_name")]),
        Table(name="laureates", columns=[Column(name="name"), Column(name="nationality"),
                                         Column(name="birth_year", type="INT")],
              primary_key=["name"])])
    rows = [Row(table="laureates", values={"name": n, "nationality": "Kraxryndia",
                                           "birth_year": y}, provenance=Provenance(chunk_id=c))
            for n, y, c in (("Dyrte Fourzixze", 1962, "d3"), ("Systhou Vhyrnbraex", 1970, "d7"))]
    rows.append(Row(table="stedrurial_medal", values={"laureate_name": None,
                                                      "award_name": "Stedrurial Medal"},
                    provenance=Provenance(chunk_id="d17")))
    table, attempts, _ = reason_over(respond, schema, rows)
    return table, attempts


def test_told_a_table_cannot_be_joined_the_repair_does_without_it() -> None:
    """abstain-docsage-set1: the model filtered laureates by a column of a table nothing
    links to them, was told only to "join stedrurial_medal", and wrote the same query
    twice more. The repair prompt now says the join cannot be made and the query must do
    without the column; a model that follows it gets its rows."""
    refused = ("SELECT avg(birth_year) FROM laureates WHERE nationality = 'Kraxryndia' AND "
               "award_name = 'Stedrurial Medal'")
    without = "SELECT avg(birth_year) FROM laureates WHERE nationality = 'Kraxryndia'"
    prompts = []

    def respond(request):
        prompts.append(request.messages[-1].content)
        told = "write the query without award_name" in prompts[-1]
        return json.dumps({"sql": without if told else refused})
    table, attempts = _laureates_run(respond)
    assert [a.stage for a in attempts] == ["gate", "ok"] and len(prompts) == 2
    assert "it cannot be joined" in attempts[0].error
    assert table.rows == [[1966.0]]


def test_an_aggregate_over_no_rows_is_an_empty_result_and_the_hint_names_empty_columns():
    """denied-docsage-set1: the measuring model joined laureates.name to
    stedrurial_medal.laureate_id, a column no row filled; AVG over nothing was one NULL
    row, taken as a result, and the answer was "not found" with no second try. (An id
    column no row fills is no longer shown, test_docsage_empty_ids.py: here the empty
    column is a name.)"""
    joined = ("SELECT AVG(T1.birth_year) FROM laureates AS T1 INNER JOIN stedrurial_medal AS "
              "T2 ON T1.name = T2.laureate_name WHERE T1.nationality = 'Kraxryndia' AND "
              "T2.award_name = 'Stedrurial Medal'")
    alone = "SELECT AVG(birth_year) FROM laureates WHERE nationality = 'Kraxryndia'"
    prompts = []

    def respond(request):
        prompts.append(request.messages[-1].content)
        told = "hold no value in any row: stedrurial_medal.laureate_name;" in prompts[-1]
        return json.dumps({"sql": alone if told else joined})
    table, attempts = _laureates_run(respond)
    assert [a.stage for a in attempts] == ["ok", "ok"] and len(prompts) == 2
    assert "returned only NULL: no row matched." in prompts[1]
    assert table.rows == [[1966.0]]
    # a model that writes the NULL query again is asked once more, sampled (empty-docsage-
    # set1); the NULL row stays the result, answering nothing
    requests = []

    def again(request):
        requests.append(request)
        return json.dumps({"sql": joined})
    table, attempts = _laureates_run(again)
    assert [a.stage for a in attempts] == ["ok", "repeat", "repeat"] and answers_nothing(table)
    assert [r.temperature for r in requests] == [0.0, 0.0, RESAMPLE_TEMPERATURE]
    assert "It failed: it returned only NULL: no row matched." in \
        requests[2].messages[-1].content
    assert not answers_nothing(table.model_copy(update={"rows": [[None, 0]]}))


def test_a_null_read_from_a_matched_row_is_an_answer_not_an_empty_result() -> None:
    """Review of cf96790: Systhou Vhyrnbraex's unknown birth year, read from his row, was
    taken for "no row matched", and the hint asked for a looser query."""
    requests = []

    def respond(request):
        requests.append(request)
        return json.dumps({"sql": "SELECT birth_year FROM laureates WHERE name = "
                                  "'Nendzu Rixtox'"})
    schema = Schema(tables=[Table(name="laureates", primary_key=["name"], columns=[
        Column(name="name"), Column(name="birth_year", type="INT")])])
    rows = [Row(table="laureates", values={"name": "Nendzu Rixtox", "birth_year": None},
                provenance=Provenance(chunk_id="d4")),
            Row(table="laureates", values={"name": "Dyrte Fourzixze", "birth_year": 1962},
                provenance=Provenance(chunk_id="d3"))]
    table, attempts, _ = reason_over(respond, schema, rows, "When was Nendzu Rixtox born?")
    assert [a.stage for a in attempts] == ["ok"] and len(requests) == 1
    assert table.rows == [[None]] and [s.chunk_id for s in table.sources[0]] == ["d4"]
    assert not answers_nothing(table)
    assert answers_nothing(table.model_copy(update={"lineage": "partial"}))


def test_a_repeated_query_that_matches_nothing_is_the_models_answer_unless_it_reads_empty():
    """Review of 2fe1668: "Which laureates were born before 1900?" written twice is the
    model saying nothing matches; asking again, sampled, got a query without the filter
    and a wrong answer. Only a query reading a column no row fills is asked for again."""
    requests = []

    def respond(request):
        requests.append(request)
        sql = ("SELECT name FROM laureates WHERE birth_year < 1900" if not request.temperature
               else "SELECT name FROM laureates")
        return json.dumps({"sql": sql})
    table, attempts = _laureates_run(respond)
    assert [a.stage for a in attempts] == ["ok", "ok"] and table.rows == []
    assert [r.temperature for r in requests] == [0.0, 0.0]


def test_nulls_beside_a_left_join_on_an_empty_column_find_nothing():
    """Review of 23c5948: a LEFT JOIN on a column no row fills gives NULLs beside the rows
    lineage traces; they are no answer, and the hint names the column."""
    joined = ("SELECT m.award_name FROM laureates l LEFT JOIN stedrurial_medal m ON "
              "l.name = m.laureate_name WHERE l.name = 'Dyrte Fourzixze'")
    prompts = []

    def respond(request):
        prompts.append(request.messages[-1].content)
        return json.dumps({"sql": joined})
    table, attempts = _laureates_run(respond)
    assert table.rows == [[None]] and any(table.sources)
    assert [a.stage for a in attempts] == ["ok", "repeat", "repeat"]
    assert "stedrurial_medal.laureate_name; a join" in prompts[1]
    schema = Schema(tables=[Table(name="stedrurial_medal", columns=[
        Column(name="laureate_name"), Column(name="award_name")])])
    rows = [Row(table="stedrurial_medal", values={"laureate_name": None, "award_name": "S"},
                provenance=Provenance(chunk_id="d17"))]
    # a column read through a CTE or a derived table is still the table's
    for sql in ("WITH m AS (SELECT * FROM stedrurial_medal) SELECT x FROM m "
                "WHERE m.laureate_name = 'A'",
                "SELECT m.award_name FROM (SELECT * FROM stedrurial_medal) m "
                "WHERE m.laureate_name = 'A'"):
        assert empty_columns(schema, rows, sql) == ["stedrurial_medal.laureate_name"]


def test_an_alias_written_for_two_tables_loses_neither_of_them():
    """The review of 219fad4: the one alias map kept the last table an alias names, and an
    outer table written ``l`` beside a subquery's ``l`` lost its empty column."""
    schema = Schema.model_validate({"tables": [
        {"name": "laureates", "columns": [{"name": "name"}, {"name": "prize_year",
                                                             "type": "INT"}]},
        {"name": "membership", "columns": [{"name": "member"}]}]})
    rows = [Row(table="laureates", values={"name": "A", "prize_year": None},
                provenance=Provenance(chunk_id="c")),
            Row(table="membership", values={"member": "A"}, provenance=Provenance(chunk_id="c"))]
    sql = ("SELECT name FROM laureates l WHERE prize_year > 1 AND name IN "
           "(SELECT l.member FROM membership l)")
    assert empty_columns(schema, rows, sql) == ["laureates.prize_year"]
