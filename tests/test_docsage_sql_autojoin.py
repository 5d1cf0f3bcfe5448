"""The gate adds the one join a declared foreign key gives (``autojoin.py``). The measuring
model read ``date`` from ``people`` with the dates in ``births`` (2Wiki, 13 of 20 questions
ended in a repeated refusal) and ``birth_year`` from the Set1 nationality table with the
years in a sibling table; told the join, it wrote the same query again."""

from __future__ import annotations

import asyncio
import json
import datetime

import pytest
from fake_retriever import ChunkListRetriever
from quaderno.errors import SQLRefusedError
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.reason import SQLReasoner
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.autojoin import declared_unique, unresolved
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.sqlgate import check_sql
from quaderno.methods.episode import Episode

FK_PEOPLE = [{"cols": ["person_name"], "ref_table": "people", "ref_cols": ["name"]}]
FK_LAUREATES = [{"cols": ["laureate_name"], "ref_table": "laureates", "ref_cols": ["name"]}]
SCHEMA = Schema.model_validate({"tables": [
    {"name": "people", "columns": [{"name": "name"}, {"name": "id", "type": "INT"},
                                   {"name": "country"}], "primary_key": ["name"]},
    {"name": "births", "columns": [{"name": "person_name"}, {"name": "id", "type": "INT"},
                                   {"name": "date", "type": "DATE"}],
     "foreign_keys": FK_PEOPLE},
    {"name": "deaths", "columns": [{"name": "person_name"}, {"name": "died", "type": "DATE"}],
     "primary_key": ["person_name"], "foreign_keys": FK_PEOPLE},
    # a christening date per birth row: a key to births, none to people
    {"name": "baptisms", "columns": [{"name": "person_name"},
                                     {"name": "date", "type": "DATE"}],
     "foreign_keys": [{"cols": ["person_name"], "ref_table": "births",
                       "ref_cols": ["person_name"]}]},
    {"name": "laureates", "columns": [{"name": "name"}], "primary_key": ["name"]},
    {"name": "nationality", "columns": [{"name": "laureate_name"}, {"name": "nationality"}],
     "foreign_keys": FK_LAUREATES},
    {"name": "birth", "columns": [{"name": "laureate_name"},
                                  {"name": "birth_year", "type": "INT"}],
     "primary_key": ["laureate_name"], "foreign_keys": FK_LAUREATES},
    # has birth_year too, but nothing joins it to anything: not a reading
    {"name": "award", "columns": [{"name": "award_id", "type": "INT"},
                                  {"name": "birth_year", "type": "INT"}]},
]})
PEOPLE = [("Matt Guthmiller", 1, "US", "1990-03-01"), ("George Nevill", 2, "UK", "1407-01-01"),
          ("Ann Other", 3, "FR", "1950-06-06")]
LAUREATES = [("Dyrte", "Kraxryndia", 1960), ("Zouzand", "Kraxryndia", 1970),
             ("Skoustil", "Pouthpiund", 1940)]


def _rows() -> list[Row]:
    def row(table, chunk, **values):
        return Row(table=table, values=values, provenance=Provenance(chunk_id=chunk))
    rows = []
    for i, (name, pid, country, date) in enumerate(PEOPLE):
        rows.append(row("people", f"p-{i}", name=name, id=pid, country=country))
        # births numbers its rows its own way: births.id is not people.id
        rows.append(row("births", f"b-{i}", person_name=name, id=100 + pid, date=date))
    rows.append(row("deaths", "d-0", person_name="Matt Guthmiller", died="2021-01-01"))
    rows.append(row("baptisms", "x-1", person_name="George Nevill", date="2000-01-01"))
    for name, nat, year in LAUREATES:
        rows += [row("laureates", f"l-{name}", name=name),
                 row("nationality", f"n-{name}", laureate_name=name, nationality=nat),
                 row("birth", f"y-{name}", laureate_name=name, birth_year=year)]
    rows.append(row("award", "a-1", award_id=1, birth_year=1000))
    return rows


@pytest.fixture(scope="module")
def sb():
    with SQLSandbox(SCHEMA, _rows()) as sandbox:
        yield sandbox


BIRTHS = "LEFT JOIN births ON births.person_name = people.name (for date)"
EARLIEST = ("SELECT name FROM people WHERE name IN ('Matt Guthmiller', 'George Nevill') "
            "ORDER BY date ASC LIMIT 1")


def test_the_2wiki_query_gets_its_join(sb: SQLSandbox) -> None:
    checked = sb.check(EARLIEST)
    assert checked.joined == [BIRTHS]
    assert checked.tables == ["births", "people"]
    traced = run_with_lineage(sb, EARLIEST)
    assert traced.result.rows == [["George Nevill"]]
    assert traced.joined == checked.joined
    # the answer traces to the person and to the birth row that ordered it
    assert {s.chunk_id for s in traced.lineage[0].sources} >= {"p-1", "b-1"}


def test_the_join_goes_either_way_round(sb: SQLSandbox) -> None:
    sql = "SELECT person_name, country FROM births WHERE id > 101"
    checked = sb.check(sql)
    assert checked.joined == ["LEFT JOIN people ON births.person_name = people.name (for country)"]
    assert run_with_lineage(sb, sql).result.rows == [["George Nevill", "UK"],
                                                     ["Ann Other", "FR"]]
    # a filter only: tested with IN the same way round (semijoin.py)
    sql = "SELECT person_name FROM births WHERE country = 'UK'"
    assert sb.check(sql).joined == ["WHERE births.person_name IN (SELECT people.name FROM "
                                    "people WHERE people.country = 'UK') (for country)"]
    assert run_with_lineage(sb, sql).result.rows == [["George Nevill"]]


def test_two_keys_to_one_table_join_siblings(sb: SQLSandbox) -> None:
    """The Set1 shape: nationality and birth year in two tables that both name the laureate
    (one birth row per laureate, its primary key); the third table with birth_year has no
    key to join by, so one reading is left."""
    sql = "SELECT avg(birth_year) FROM nationality WHERE nationality = 'Kraxryndia'"
    checked = sb.check(sql)
    assert checked.joined == [
        "LEFT JOIN birth ON birth.laureate_name = nationality.laureate_name (for birth_year)"]
    assert run_with_lineage(sb, sql).result.rows == [[1965.0]]


def test_a_column_qualified_with_an_unread_table(sb: SQLSandbox) -> None:
    sql = EARLIEST.replace("ORDER BY date", "ORDER BY births.date")
    assert sb.check(sql).joined == [BIRTHS]
    assert run_with_lineage(sb, sql).result.rows == [["George Nevill"]]


def test_the_join_goes_into_the_subquery_that_needs_it(sb: SQLSandbox) -> None:
    sql = ("SELECT country FROM people WHERE name = (SELECT name FROM people "
           "ORDER BY date DESC LIMIT 1)")
    checked = sb.check(sql)
    assert checked.joined == [BIRTHS]
    assert run_with_lineage(sb, sql).result.rows == [["US"]]


def test_other_columns_keep_the_table_that_gave_them(sb: SQLSandbox) -> None:
    """``id`` resolved to people.id before the join; births has an id too, and the join must
    not make it ambiguous or change it."""
    sql = "SELECT id FROM people ORDER BY date ASC LIMIT 1"
    assert sb.check(sql).joined
    assert run_with_lineage(sb, sql).result.rows == [[2]]        # people.id, not 102


def test_two_missing_columns_get_two_joins(sb: SQLSandbox) -> None:
    sql = "SELECT name FROM people WHERE date < '1500-01-01' OR died > '2000-01-01'"
    assert sb.check(sql).joined == [
        BIRTHS,
        "LEFT JOIN deaths ON deaths.person_name = people.name (for died)"]
    assert sorted(r[0] for r in run_with_lineage(sb, sql).result.rows) == \
        ["George Nevill", "Matt Guthmiller"]


def test_rows_without_the_value_do_not_win_an_ordering(sb: SQLSandbox) -> None:
    """The LEFT JOIN gives NULL to the two people with no death row; NULLs sort last either
    way round in DuckDB, so "who died last" is not a person who has not died."""
    for order in ("DESC", "ASC"):
        sql = f"SELECT name FROM people ORDER BY died {order} LIMIT 1"
        assert run_with_lineage(sb, sql).result.rows == [["Matt Guthmiller"]]
    assert run_with_lineage(sb, "SELECT count(*) FROM people WHERE died IS NULL"
                            ).result.rows == [[2]]


def test_a_column_two_tables_could_give_is_not_joined(sb: SQLSandbox) -> None:
    """After birth is joined for birth_year, ``name`` is a column of laureates, which both
    read tables have a key to: two joins, so none, and the model is told, with the join the
    gate had added (the error's position is in that query, not the one it wrote)."""
    sql = "SELECT laureate_name, birth_year FROM nationality WHERE name IS NOT NULL"
    with pytest.raises(SQLRefusedError) as info:
        sb.check(sql)
    assert "Column 'name' could not be resolved" in str(info.value)
    assert str(info.value).endswith(
        "(the gate had added LEFT JOIN birth ON birth.laureate_name = "
        "nationality.laureate_name (for birth_year); the position above is in that query)")


@pytest.mark.parametrize(("sql", "why"), [
    # no table has it: nothing to join
    ("SELECT name FROM people ORDER BY buried", "No table has buried"),
    # the column's only owner has no foreign key to what is read
    ("SELECT name FROM laureates WHERE award_id = 1", "award_id is a column of award"),
    # a derived table in the SELECT: its columns are not the schema's to reason about
    ("SELECT name FROM (SELECT name FROM people) p ORDER BY date",
     "date is a column of births and baptisms, which the query does not read"),
    # a qualifier that is no table of the schema: nothing but the schema's tables is joined
    ("SELECT name FROM people ORDER BY duckdb_tables.date", "could not be resolved"),
    ("SELECT name FROM people ORDER BY read_csv.date", "could not be resolved"),
    # the table the column needs is hidden by a CTE of that name
    ("WITH births AS (SELECT name FROM people) SELECT name FROM people ORDER BY date",
     "Column 'date' could not be resolved"),
])
def test_no_single_join_is_still_refused(sb: SQLSandbox, sql: str, why: str) -> None:
    with pytest.raises(SQLRefusedError) as info:
        sb.check(sql)
    assert info.value.reason == "unknown-column" and why in str(info.value)


def test_no_join_is_added_for_a_column_an_on_condition_reads(sb: SQLSandbox) -> None:
    """The join would come after the one whose ON reads it, which DuckDB cannot bind
    (review 21): refused with the hint, bare or given to the wrong table."""
    # the held-out Set2 query replayed at 7466608: T2 lacked both the column it selected
    # and the one its ON read; the join added for the first bound the second to a table
    # joined after that ON, and DuckDB failed to bind the query
    sql = ("SELECT T2.date FROM people AS T1 JOIN laureates AS T2 "
           "ON T1.name = T2.person_name")
    with pytest.raises(SQLRefusedError) as info:
        sb.check(sql)
    assert info.value.reason == "unknown-column" and "person_name" in str(info.value)
    # a subquery in an ON naming a table of its own like the query's later join is no read
    # ahead: the join for ``date`` is added (review 22)
    sql = ("SELECT T1.name, date FROM people AS T1 JOIN deaths AS T2 ON T2.person_name = "
           "T1.name AND T1.name IN (SELECT T3.name FROM people AS T3) "
           "JOIN laureates AS T3 ON T3.name = 'Dyrte'")
    assert sb.check(sql).joined == [
        "LEFT JOIN births ON births.person_name = t1.name (for date)"]
    assert run_with_lineage(sb, sql).result.rows == [["Matt Guthmiller",
                                                      datetime.date(1990, 3, 1)]]
    for col in ("birth_year", "T2.birth_year"):
        sql = (f"SELECT T1.name FROM laureates AS T1 JOIN nationality AS T2 "
               f"ON T1.name = T2.laureate_name AND {col} > 1950")
        with pytest.raises(SQLRefusedError) as info:
            sb.check(sql)
        assert info.value.reason == "unknown-column", col


def test_the_join_is_added_where_the_column_is_missing(sb: SQLSandbox) -> None:
    """The subquery reads births.date itself; only the outer query lacks a date, and the
    join there must not touch the subquery (nor go into it: baptisms has a date too)."""
    sql = ("SELECT name FROM people WHERE name IN (SELECT person_name FROM births "
           "WHERE date < '1950-01-01') ORDER BY date")
    # births is a name the subquery uses: the new table gets one of its own
    assert sb.check(sql).joined == [
        "LEFT JOIN births AS births_2 ON births_2.person_name = people.name (for date)"]
    assert run_with_lineage(sb, sql).result.rows == [["George Nevill"]]
    # a subquery that has the column does not stop the outer query's repair
    sql = "SELECT name FROM people WHERE date < (SELECT max(date) FROM births) ORDER BY name"
    assert sb.check(sql).joined[0].startswith("LEFT JOIN births AS births_2 ON")
    assert run_with_lineage(sb, sql).result.rows == [["Ann Other"], ["George Nevill"]]


def test_a_correlated_column_keeps_its_outer_table(sb: SQLSandbox) -> None:
    """``country`` inside EXISTS is the outer person's; the join goes into the second
    branch of the UNION, which has no country, and leaves the EXISTS bound to people."""
    sql = ("SELECT name FROM people WHERE EXISTS (SELECT 1 FROM deaths WHERE person_name = "
           "name AND country = 'US') UNION SELECT person_name FROM births WHERE country = 'UK'")
    checked = sb.check(sql)
    assert checked.joined == ["WHERE births.person_name IN (SELECT people_2.name FROM people "
                              "AS people_2 WHERE people_2.country = 'UK') (for country)"]
    assert sorted(run_with_lineage(sb, sql).result.rows) == [["George Nevill"],
                                                            ["Matt Guthmiller"]]


def test_select_star_keeps_the_tables_own_columns(sb: SQLSandbox) -> None:
    alone = run_with_lineage(sb, "SELECT * FROM people WHERE id = 2").result
    joined = run_with_lineage(sb, "SELECT * FROM people WHERE date < '1500-01-01'").result
    assert joined.columns == alone.columns and "date" not in joined.columns
    assert joined.rows == alone.rows


def test_the_new_table_gets_an_alias_nobody_uses(sb: SQLSandbox) -> None:
    sql = "SELECT births.name FROM people AS births ORDER BY date LIMIT 1"
    assert sb.check(sql).joined == [
        "LEFT JOIN births AS births_2 ON births_2.person_name = births.name (for date)"]
    assert run_with_lineage(sb, sql).result.rows == [["George Nevill"]]
    with_cte = ("WITH uk AS (SELECT name FROM people WHERE country = 'UK') "
                "SELECT name FROM people WHERE name IN (SELECT name FROM uk) ORDER BY date")
    assert sb.check(with_cte).joined == [BIRTHS]
    assert run_with_lineage(sb, with_cte).result.rows == [["George Nevill"]]


@pytest.fixture(scope="module")
def twice():
    """The rows with a second birth row for Ann Other (two chunks gave two dates)."""
    rows = _rows() + [Row(table="births", values={"person_name": "Ann Other", "id": 9,
                                                  "date": "1951-01-01"},
                          provenance=Provenance(chunk_id="b-dup"))]
    with SQLSandbox(SCHEMA, rows) as sandbox:
        yield sandbox


def test_several_matching_rows_are_listed_not_counted(twice: SQLSandbox) -> None:
    listed = run_with_lineage(twice, "SELECT name, date FROM people WHERE date > '1900-01-01' "
                                     "ORDER BY name, date")
    assert [r[0] for r in listed.result.rows] == ["Ann Other", "Ann Other", "Matt Guthmiller"]
    # filtered only, each person once: an IN test, not a join (semijoin.py)
    listed = run_with_lineage(twice, "SELECT name FROM people WHERE date > '1900-01-01' "
                                     "ORDER BY name")
    assert listed.result.rows == [["Ann Other"], ["Matt Guthmiller"]]
    # tested with IN, a repeated row changes nothing
    sql = ("SELECT country FROM people WHERE name IN (SELECT name FROM people "
           "WHERE date > '1900-01-01') ORDER BY country")
    assert run_with_lineage(twice, sql).result.rows == [["FR"], ["US"]]
    # the key's own side is unique: a count over deaths is joined
    assert run_with_lineage(twice, "SELECT count(*) FROM people WHERE died IS NULL"
                            ).result.rows == [[2]]


@pytest.mark.parametrize("sql", [
    "SELECT count(*) FROM people WHERE date IS NOT NULL",
    # a count of the rows a derived table or a CTE gives, in any query that reads them
    "SELECT count(*) FROM (SELECT name, date FROM people WHERE date > '1900-01-01') AS t",
    "WITH t AS (SELECT name FROM people WHERE date > '1900-01-01' OR country = 'UK'), "
    "u AS (SELECT count(*) AS c FROM t) SELECT c FROM u",
    # a window, in the SELECT list or QUALIFY
    "SELECT name, row_number() OVER (ORDER BY name) FROM people WHERE date IS NOT NULL",
    "SELECT name FROM people WHERE coalesce(date, '2000-01-01') > '1900-01-01' "
    "QUALIFY row_number() OVER (ORDER BY name) <= 2",
    # the top two: a repeated row would push the second one out
    "SELECT name FROM people ORDER BY date DESC LIMIT 2",
    # a subquery used as a value: two rows are an error
    "SELECT name, (SELECT date FROM people AS p2 WHERE p2.name = people.name) AS d "
    "FROM people",
])
def test_rows_a_join_would_repeat_are_not_joined_where_they_count(twice: SQLSandbox,
                                                                  sb: SQLSandbox, sql) -> None:
    with pytest.raises(SQLRefusedError) as info:
        twice.check(sql)
    assert "Column 'date' could not be resolved" in str(info.value)
    # the same query over the rows with one birth row per person is joined
    assert sb.check(sql).joined


def test_one_row_per_key_in_the_data_lets_a_count_join(sb: SQLSandbox,
                                                       twice: SQLSandbox) -> None:
    """births declares no key, but holds one row per person here: the count is joined."""
    assert sb.unique("births", ["person_name"]) and not twice.unique("births", ["person_name"])
    assert not sb.unique("births", ["no_such"]) and not sb.unique("nowhere", ["name"])
    assert run_with_lineage(sb, "SELECT count(*) FROM people WHERE date < '1950-01-01'"
                            ).result.rows == [[1]]
    assert run_with_lineage(sb, "SELECT name FROM people ORDER BY date LIMIT 1"
                            ).result.rows == [["George Nevill"]]


def test_without_the_data_the_schema_must_say_one_row_per_key() -> None:
    """check_sql alone (no rows): a primary key, with no column holding a row per value."""
    assert declared_unique(SCHEMA.table("deaths"), ["person_name"])
    assert not declared_unique(SCHEMA.table("births"), ["person_name"])
    prized = Schema.model_validate({"tables": [
        SCHEMA.table("people").model_dump(),
        {"name": "deaths", "columns": [{"name": "person_name"}, {"name": "died"},
                                       {"name": "prize", "single_valued": False}],
         "primary_key": ["person_name"], "foreign_keys": FK_PEOPLE}]})
    assert not declared_unique(prized.table("deaths"), ["person_name"])
    count = "SELECT count(*) FROM people WHERE died IS NULL"
    assert check_sql(count, SCHEMA).joined
    with pytest.raises(SQLRefusedError):
        check_sql(count, prized)
    assert check_sql("SELECT name FROM people WHERE died IS NULL", prized).joined


def test_the_new_table_does_not_hide_a_derived_tables_alias(sb: SQLSandbox) -> None:
    """``births`` here is the outer derived table of death rows; the join inside EXISTS gets
    a name of its own, and the correlated ``births.person_name`` stays the outer one."""
    sql = ("SELECT births.person_name FROM (SELECT person_name FROM deaths) AS births "
           "WHERE EXISTS (SELECT 1 FROM people WHERE people.name = births.person_name "
           "AND date < '1950-01-01')")
    assert sb.check(sql).joined == [
        "WHERE people.name IN (SELECT births_2.person_name FROM births AS births_2 "
        "WHERE births_2.date < '1950-01-01') (for date)"]
    assert run_with_lineage(sb, sql).result.rows == []        # Matt was born in 1990


def test_a_choice_is_not_made_by_which_join_may_repeat_rows() -> None:
    """Two tables could give ``date``; under a count only the one with a row per person
    could be joined, but that is no reason to think the query meant it: refused."""
    schema = Schema.model_validate({"tables": [
        SCHEMA.table("people").model_dump(), SCHEMA.table("births").model_dump(),
        {"name": "baptisms", "columns": [{"name": "person_name"},
                                         {"name": "date", "type": "DATE"}],
         "primary_key": ["person_name"], "foreign_keys": FK_PEOPLE}]})
    with pytest.raises(SQLRefusedError) as info:
        check_sql("SELECT count(*) FROM people WHERE date < '1950-01-01'", schema)
    assert "date is a column of births and baptisms" in str(info.value)


def test_two_possible_joins_are_not_guessed() -> None:
    schema = Schema.model_validate({"tables": [
        SCHEMA.table("people").model_dump(), SCHEMA.table("births").model_dump(),
        {"name": "baptisms", "columns": [{"name": "person_name"},
                                         {"name": "date", "type": "DATE"}],
         "foreign_keys": FK_PEOPLE}]})
    with SQLSandbox(schema, []) as sandbox, pytest.raises(SQLRefusedError) as info:
        sandbox.check(EARLIEST)
    assert "date is a column of births and baptisms" in str(info.value)


def test_the_join_is_recorded_in_the_trace() -> None:
    prompts: list[str] = []

    def respond(request):
        user = request.messages[-1].content
        assert user.startswith("Write one DuckDB SELECT"), user[:60]
        prompts.append(user)
        return json.dumps({"sql": EARLIEST})
    ep = Episode("Who was born first, Matt Guthmiller or George Nevill?", method="docsage",
                 lm=LM(FakeLLM(respond=respond)), retriever=ChunkListRetriever([]))
    table, attempts = asyncio.run(SQLReasoner().run(ep, SCHEMA, _rows()))
    assert table.rows == [["George Nevill"]]
    assert [a.stage for a in attempts] == ["ok"] and len(prompts) == 1   # no repair spent
    assert any("joined on its declared foreign key: LEFT JOIN births ON births.person_name" in f
               for f in ep.trace.fallbacks)


@pytest.mark.parametrize("error, read", [
    ("Column '\"c\".\"league_name\"' could not be resolved", ("league_name", "")),
    ("Column 'buried' could not be resolved for table: 'people'", ("buried", "people")),
    # qualify's word for a qualified column its table lacks, which the gate's hint reads too
    ("Unknown column: league_name", ("league_name", "")),
    ("Ambiguous column: name", None),
])
def test_one_reader_names_the_column_of_both_of_sqlglots_messages(error, read) -> None:
    assert unresolved(error) == read


# A column the query gave to a table it reads that lacks it, with no table of the query
# holding it: the measuring model's held-out Set2 query selected ``T2.chief_executive`` with
# T2 a membership table and the column in a sibling it did not read, and wrote the same
# query three times (``s13h-docsage-set2``). The qualifier is dropped and the join added.
MISREAD = ("SELECT T2.birth_year FROM laureates AS T1 JOIN nationality AS T2 "
           "ON T1.name = T2.laureate_name WHERE T2.nationality = 'Kraxryndia' "
           "ORDER BY T1.name LIMIT 1")


def test_a_column_given_to_a_read_table_that_lacks_it_gets_the_join(sb: SQLSandbox) -> None:
    checked = sb.check(MISREAD)
    assert checked.requalified == ["T2.birth_year -> the table joined for birth_year"]
    assert checked.joined == ["LEFT JOIN birth ON birth.laureate_name = t1.name "
                              "(for birth_year)"]
    traced = run_with_lineage(sb, MISREAD)
    assert traced.result.rows == [[1960]]                      # Dyrte's, from the birth table
    assert {s.chunk_id for s in traced.lineage[0].sources} >= {"y-Dyrte"}
    # the same through a key both tables share (deaths and births both name a person),
    # in an average and in a filter, which becomes an IN test
    sql = "SELECT d.person_name, d.date FROM deaths AS d"
    assert sb.check(sql).joined == [
        "LEFT JOIN births ON births.person_name = d.person_name (for date)"]
    assert run_with_lineage(sb, sql).result.rows == [["Matt Guthmiller", datetime.date(1990, 3, 1)]]
    assert run_with_lineage(sb, "SELECT avg(n.birth_year) FROM nationality AS n WHERE "
                            "n.nationality = 'Kraxryndia'").result.rows == [[1965.0]]
    sql = "SELECT count(*) FROM nationality AS n WHERE n.birth_year > 1950"
    assert sb.check(sql).joined[0].startswith("WHERE n.laureate_name IN (SELECT")
    assert run_with_lineage(sb, sql).result.rows == [[2]]
    # ordered by the output it names; two columns, two joins
    sql = MISREAD.replace("WHERE T2.nationality = 'Kraxryndia' ORDER BY T1.name LIMIT 1",
                          "ORDER BY T2.birth_year LIMIT 2")
    assert run_with_lineage(sb, sql).result.rows == [[1940], [1960]]
    sql = "SELECT n.name, n.birth_year FROM nationality AS n ORDER BY 2"
    assert len(sb.check(sql).joined) == 2
    assert run_with_lineage(sb, sql).result.rows == [["Skoustil", 1940], ["Dyrte", 1960],
                                                     ["Zouzand", 1970]]


@pytest.mark.parametrize(("sql", "why"), [
    # a table the query reads (in its subquery) has the column: dropping the qualifier
    # would bind ``d.date`` to the outer ``births.date``, another column
    ("SELECT person_name FROM births WHERE person_name IN (SELECT d.person_name FROM "
     "deaths AS d WHERE d.date > '1000-01-01')", "Unknown column: date"),
    # the column's only table has no key to anything the query reads
    ("SELECT T1.award_id FROM laureates AS T1", "award_id is a column of award"),
    # no table has it at all
    ("SELECT p.buried FROM people AS p", "Unknown column: buried"),
    # a derived table gives a column of that name: the bare column could bind to it
    ("SELECT d.date FROM deaths AS d, (SELECT 1 AS date) AS x", "Unknown column: date"),
    # so does an output named like it, in WHERE, ORDER BY, GROUP BY, HAVING and QUALIFY
    # (review 21: the filter ran on ``died``, the trace claimed a join never made)
    ("SELECT d.person_name, d.died AS date FROM deaths AS d WHERE d.date < '2000-01-01'",
     "Unknown column: date"),
    ("SELECT n.laureate_name AS birth_year FROM nationality AS n ORDER BY n.birth_year",
     "Unknown column: birth_year"),
    ("SELECT n.nationality AS birth_year, count(*) FROM nationality AS n "
     "GROUP BY n.birth_year", "Unknown column: birth_year"),
    ("SELECT count(*) AS birth_year FROM nationality AS n HAVING max(n.birth_year) > 1",
     "Unknown column: birth_year"),
    ("SELECT n.laureate_name AS birth_year FROM nationality AS n "
     "QUALIFY row_number() OVER (ORDER BY n.birth_year) = 1", "Unknown column: birth_year"),
    # one column joined, the other bound to an output: all or nothing
    ("SELECT d.person_name, d.country AS date FROM deaths AS d ORDER BY d.date",
     "Unknown column: country"),
    # the named table is optional in a row: a value joined from elsewhere would fill rows
    # it has none for
    ("SELECT T1.name, T2.birth_year FROM laureates AS T1 LEFT JOIN nationality AS T2 "
     "ON T1.name = T2.laureate_name AND T2.nationality = 'Pouthpiund'",
     "Unknown column: birth_year"),
    ("SELECT T1.name, T1.birth_year FROM nationality AS T1 RIGHT JOIN laureates AS T2 "
     "ON T1.laureate_name = T2.name", "Unknown column: birth_year"),
    # a schema or catalog part
    ("SELECT x.n.birth_year FROM nationality AS n", "Unknown column: birth_year"),
])
def test_a_column_no_single_join_gives_is_refused_as_written(sb: SQLSandbox, sql: str,
                                                             why: str) -> None:
    with pytest.raises(SQLRefusedError) as info:
        sb.check(sql)
    assert info.value.reason == "unknown-column" and why in str(info.value)
    assert "could not be resolved" not in str(info.value)   # the error of the query written
