"""A column qualified with the wrong table of its SELECT is moved to the one table in scope
that has it. The measuring model's Set3 query (``docsage-linkkey-set3``) selected
``T2.city_name`` with ``T2`` the city table; ``city_name`` is a column of the link table
``T1`` it had joined on ``T1.city_name = T2.name``, and the one repair the gate allows was
spent on it."""

from __future__ import annotations

import asyncio
import json

import pytest
from fake_retriever import ChunkListRetriever
from quaderno.errors import SQLRefusedError
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.reason import SQLReasoner
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.schema import Column, Schema, Table
from quaderno.methods.episode import Episode

SCHEMA = Schema(tables=[
    Table(name="league", columns=[Column(name="name")], primary_key=["name"]),
    Table(name="city", columns=[Column(name="name"), Column(name="country"),
                                Column(name="population", type="INT")],
          primary_key=["name"]),
    Table(name="league_city", columns=[Column(name="league_name"),
                                       Column(name="city_name")],
          primary_key=["league_name", "city_name"]),
    Table(name="office", columns=[Column(name="name"), Column(name="country")]),
])
LEAGUE = "League of Merounddian Cities"
CITIES = [("Gaenstas", "Thubroar", 210000), ("Gilyx", "Calyx", 3038000),
          ("Pakrun", "Thubroar", 1430000), ("Mergras", "Calyx", 150000)]
MEMBERS = ["Gaenstas", "Gilyx", "Pakrun"]           # Mergras is in no league here
SET3_SQL = ("SELECT T2.city_name FROM league_city AS T1 JOIN city AS T2 "
            f"ON T1.city_name = T2.name WHERE T1.league_name = '{LEAGUE}' "
            "ORDER BY T2.population ASC LIMIT 1")


def _rows() -> list[Row]:
    def row(table, chunk, **values):
        return Row(table=table, values=values, provenance=Provenance(chunk_id=chunk))
    return ([row("city", f"c-{n}", name=n, country=c, population=p) for n, c, p in CITIES]
            + [row("league_city", f"m-{n}", league_name=LEAGUE, city_name=n) for n in MEMBERS]
            + [row("league", "l", name=LEAGUE)])


@pytest.fixture(scope="module")
def sb():
    with SQLSandbox(SCHEMA, _rows()) as sandbox:
        yield sandbox


def test_the_set3_query_reads_the_link_tables_column(sb: SQLSandbox) -> None:
    checked = sb.check(SET3_SQL)
    assert checked.requalified == ["T2.city_name -> T1.city_name"]
    traced = run_with_lineage(sb, SET3_SQL)
    assert traced.result.rows == [["Gaenstas"]]
    assert traced.requalified == checked.requalified
    # the answer still traces to the membership and the city rows that chose it
    assert {s.chunk_id for s in traced.lineage[0].sources} >= {"m-Gaenstas", "c-Gaenstas"}
    # an alias is one name whatever its case, as in DuckDB
    lower = SET3_SQL.replace("T2.city_name", "t2.city_name")
    assert sb.check(lower).requalified == ["t2.city_name -> T1.city_name"]


def test_a_correct_query_is_left_as_written(sb: SQLSandbox) -> None:
    sql = SET3_SQL.replace("T2.city_name", "T1.city_name")
    assert sb.check(sql).requalified == []
    correlated = ("SELECT c.name FROM city c WHERE EXISTS (SELECT 1 FROM league_city m "
                  "WHERE m.city_name = c.name)")
    checked = sb.check(correlated)
    assert checked.requalified == []
    assert sorted(run_with_lineage(sb, correlated).result.rows) == [[n] for n in sorted(MEMBERS)]


def test_a_move_is_reported_once_however_often_the_column_appears(sb: SQLSandbox) -> None:
    sql = ("SELECT T2.city_name, count(*) FROM league_city AS T1 JOIN city AS T2 "
           "ON T1.city_name = T2.name GROUP BY T2.city_name ORDER BY T2.city_name")
    assert sb.check(sql).requalified == ["T2.city_name -> T1.city_name"]


def test_each_select_is_judged_by_its_own_tables(sb: SQLSandbox) -> None:
    sql = ("SELECT name FROM city WHERE name IN (SELECT c.city_name FROM league_city m, "
           "league c WHERE c.name = m.league_name)")
    checked = sb.check(sql)
    assert checked.requalified == ["c.city_name -> m.city_name"]
    assert sorted(run_with_lineage(sb, sql).result.rows) == [[n] for n in sorted(MEMBERS)]


@pytest.mark.parametrize(("sql", "why"), [
    # no table of the query has it: refused, with the hint to join the table that does
    ("SELECT c.league_name FROM city c", "league_name is a column of league_city"),
    # moved, the join would compare the link table's column with itself and match everything
    ("SELECT T2.name FROM league_city AS T1 JOIN city AS T2 ON T1.city_name = T2.city_name",
     "city_name is a column of league_city"),
    # a derived table of the SELECT gives the name too: two readings
    ("SELECT c.city_name FROM (SELECT name AS city_name FROM city) s, city c, league_city m",
     "city_name"),
    # ... or gives columns nobody can list
    ("SELECT c.city_name FROM (SELECT * FROM city) s, city c, league_city m", "city_name"),
    # an enclosing query's column: the subquery's own link table has it too
    ("SELECT (SELECT max(c.city_name) FROM league_city m2) FROM city c, league_city m",
     "city_name"),
    # two tables of the query have it: which one was meant is not guessed
    ("SELECT m.country FROM league_city m JOIN city c ON m.city_name = c.name "
     "JOIN office o ON o.country = c.country",
     "country is a column of city and office: qualify it with that table's name or alias"),
])
def test_what_has_no_single_reading_is_still_refused(sb: SQLSandbox, sql, why) -> None:
    with pytest.raises(SQLRefusedError) as info:
        sb.check(sql)
    assert info.value.reason == "unknown-column" and why in str(info.value)


def test_the_move_is_recorded_in_the_trace() -> None:
    def respond(request):
        user = request.messages[-1].content
        if user.startswith("Write one DuckDB SELECT"):
            return json.dumps({"sql": SET3_SQL})
        raise AssertionError(f"unexpected prompt {user[:60]!r}")
    ep = Episode("Which city of the League of Merounddian Cities has the lowest population?",
                 method="docsage", lm=LM(FakeLLM(respond=respond)),
                 retriever=ChunkListRetriever([]))
    table, attempts = asyncio.run(SQLReasoner().run(ep, SCHEMA, _rows()))
    assert table.rows == [["Gaenstas"]]
    assert [a.stage for a in attempts] == ["ok"]               # no repair spent
    assert any("T2.city_name -> T1.city_name" in f for f in ep.trace.fallbacks)


def test_a_moved_query_that_fails_says_what_ran() -> None:
    """The gate passes a query it repaired; when that query then fails in the database, the
    model's repair prompt and the trace both say what was moved, since the database error
    quotes the query the gate ran, not the one the model wrote."""
    failing = ("SELECT T2.city_name FROM league_city AS T1 JOIN city AS T2 "
               "ON T1.city_name = T2.name WHERE CAST(T2.country AS INT) > 0")
    prompts: list[str] = []

    def respond(request):
        user = request.messages[-1].content
        assert user.startswith("Write one DuckDB SELECT"), user[:60]
        prompts.append(user)
        return json.dumps({"sql": failing if len(prompts) == 1 else SET3_SQL})
    ep = Episode("Which city of the League of Merounddian Cities has the lowest population?",
                 method="docsage", lm=LM(FakeLLM(respond=respond)),
                 retriever=ChunkListRetriever([]))
    table, attempts = asyncio.run(SQLReasoner().run(ep, SCHEMA, _rows()))
    assert [a.stage for a in attempts] == ["execute", "ok"]
    assert table.rows == [["Gaenstas"]]
    error = attempts[0].error
    assert "Conversion" in error and "T2.city_name -> T1.city_name" in error
    assert "ran with columns (or a table) moved" in error
    assert "T2.city_name -> T1.city_name" in prompts[1]       # the repair is told
    assert any("failed anyway" in f and "T2.city_name -> T1.city_name" in f
               for f in ep.trace.fallbacks)
