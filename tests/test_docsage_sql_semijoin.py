"""A column the query only filters on, from a table it does not read, becomes an IN test
(``semijoin.py``). The Set1 Statistics question without CLEAR: the model filtered
``laureates`` by ``award_name`` three times, and the join was refused for the average because
a research grant misread into ``stedrurial_medal`` repeats Zouzand Grialforn
(``after-no-clear-set1``)."""

from __future__ import annotations

import json

import pytest
import sqlglot
from docsage_fakes import reason_over
from quaderno.errors import SQLRefusedError
from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.reason import answers_nothing
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.semijoin import rejects_null

SCHEMA = Schema.model_validate({"tables": [
    {"name": "stedrurial_medal",
     "columns": [{"name": "award_name"}, {"name": "year", "type": "INT"},
                 {"name": "laureate_name"}],
     "foreign_keys": [{"cols": ["laureate_name"], "ref_table": "laureates",
                       "ref_cols": ["name"]}]},
    {"name": "laureates",
     "columns": [{"name": "name"}, {"name": "nationality"},
                 {"name": "birth_year", "type": "INT"}],
     "primary_key": ["name"]},
]})
MEDALS = [("Stedrurial Medal", 2024, "Dyrte Fourzixze"),
          ("Stedrurial Medal", 2015, "Systhou Vhyrnbraex"),
          ("Stedrurial Medal", 2004, "Zouzand Grialforn"),
          ("research grant", 2016, "Zouzand Grialforn"),      # the misread row
          ("Stedrurial Medal", 2018, "Touslian Brultiathgus"),
          ("Viandbround Medal", 1990, "Dontaen Dromae")]
LAUREATES = [("Dyrte Fourzixze", "Kraxryndia", 1962), ("Systhou Vhyrnbraex", "Kraxryndia", 1970),
             ("Zouzand Grialforn", "Kraxryndia", 1964),
             ("Touslian Brultiathgus", "Starnnirnia", 1954),
             ("Dontaen Dromae", "Kraxryndia", 1930)]   # a laureate of another medal
# the Stedrurial Medal's laureates, each once, by name
MEDALLISTS = [["Dyrte Fourzixze"], ["Systhou Vhyrnbraex"], ["Touslian Brultiathgus"],
              ["Zouzand Grialforn"]]
ASKED = ("SELECT avg(birth_year) FROM laureates WHERE nationality = 'Kraxryndia' "
         "AND award_name = 'Stedrurial Medal'")


def _rows() -> list[Row]:
    rows = [Row(table="stedrurial_medal", provenance=Provenance(chunk_id=f"m-{i}"),
                values={"award_name": a, "year": y, "laureate_name": n})
            for i, (a, y, n) in enumerate(MEDALS)]
    rows += [Row(table="laureates", provenance=Provenance(chunk_id=f"l-{i}"),
                 values={"name": n, "nationality": c, "birth_year": b})
             for i, (n, c, b) in enumerate(LAUREATES)]
    return rows


@pytest.fixture(scope="module")
def sb():
    with SQLSandbox(SCHEMA, _rows()) as sandbox:
        yield sandbox


def test_the_set1_average_is_answered_once_per_laureate(sb: SQLSandbox) -> None:
    assert not sb.unique("stedrurial_medal", ["laureate_name"])   # why no join was added
    checked = sb.check(ASKED)
    assert checked.joined == [
        "WHERE laureates.name IN (SELECT stedrurial_medal.laureate_name FROM stedrurial_medal "
        "WHERE stedrurial_medal.award_name = 'Stedrurial Medal') (for award_name)"]
    traced = run_with_lineage(sb, ASKED)
    assert round(traced.result.rows[0][0], 2) == 1965.33   # a join would give 1965.0
    # the average traces to the three laureates, and the medal rows that admitted them
    # support it: not Touslian's medal, nor Grialforn's grant (in_support.py)
    (row,) = traced.lineage
    assert {s.chunk_id for s in row.sources} == {"l-0", "l-1", "l-2", "m-0", "m-1", "m-2"}


def test_each_row_cites_the_rows_that_admitted_it_and_nothing_admits_nothing(sb) -> None:
    """The review of 02baac0: every medal row supported every result row, so an average
    over no laureate cited four medals and did not count as finding nothing."""
    traced = run_with_lineage(sb, ASKED.replace("Kraxryndia", "Nowhere"))
    assert traced.result.rows == [[None]]
    assert traced.lineage[0].sources == [] and traced.lineage[0].support_tids == []
    table, _, _ = reason_over(lambda r: json.dumps({"sql": ASKED.replace(
        "Kraxryndia", "Nowhere")}), SCHEMA, _rows())
    assert answers_nothing(table)
    listed = run_with_lineage(sb, "SELECT name FROM laureates WHERE nationality IN "
                                  "('Starnnirnia', 'Kraxryndia') AND award_name = "
                                  "'Stedrurial Medal' ORDER BY name")
    cited = {r[0]: {s.chunk_id for s in lin.sources}
             for r, lin in zip(listed.result.rows, listed.lineage, strict=True)}
    assert cited == {"Dyrte Fourzixze": {"l-0", "m-0"}, "Systhou Vhyrnbraex": {"l-1", "m-1"},
                     "Touslian Brultiathgus": {"l-3", "m-4"},
                     "Zouzand Grialforn": {"l-2", "m-2"}}
    # NOT IN reads absence from every row of its subquery: all of it supports each row
    absent = run_with_lineage(sb, "SELECT name FROM laureates WHERE name NOT IN (SELECT "
                                  "laureate_name FROM stedrurial_medal WHERE award_name = "
                                  "'research grant') ORDER BY name")
    assert len(absent.result.rows) == 4
    assert all({s.chunk_id for s in lin.sources} >= {"m-3"} for lin in absent.lineage)


@pytest.mark.parametrize(("sql", "rows"), [
    # another column of the medal row is read outside the filter: one joined row gives both
    ("SELECT name FROM laureates WHERE award_name = 'Stedrurial Medal' AND "
     "year - birth_year > 50 ORDER BY name", [["Dyrte Fourzixze"], ["Touslian Brultiathgus"]]),
    ("SELECT name FROM laureates WHERE award_name = 'Stedrurial Medal' ORDER BY year DESC",
     [["Dyrte Fourzixze"], ["Touslian Brultiathgus"], ["Systhou Vhyrnbraex"],
      ["Zouzand Grialforn"]]),
    ("SELECT name FROM laureates WHERE award_name = 'Stedrurial Medal' AND "
     "laureates.name = laureate_name ORDER BY name", MEDALLISTS),
    ("SELECT name FROM laureates WHERE stedrurial_medal.award_name = 'Stedrurial Medal' "
     "AND laureates.name = stedrurial_medal.laureate_name ORDER BY name", MEDALLISTS),
    ("SELECT name FROM laureates WHERE stedrurial_medal.award_name = 'Stedrurial Medal' "
     "ORDER BY stedrurial_medal.year",
     [["Zouzand Grialforn"], ["Systhou Vhyrnbraex"], ["Touslian Brultiathgus"],
      ["Dyrte Fourzixze"]]),
])
def test_a_medal_row_read_beyond_the_filter_is_joined_not_tested(sb, sql, rows) -> None:
    checked = sb.check(sql)
    assert len(checked.joined) == 1 and checked.joined[0].startswith("LEFT JOIN")
    assert run_with_lineage(sb, sql).result.rows == rows


def test_an_output_named_like_a_medal_column_is_no_medal_column(sb: SQLSandbox) -> None:
    """The review of 8d70396: ORDER BY an output alias that a medal column shares a name with
    made the gate join instead of testing, which lists Grialforn twice or refuses a count."""
    sql = ("SELECT name AS laureate_name FROM laureates WHERE award_name = 'Stedrurial Medal' "
           "ORDER BY laureate_name")
    assert sb.check(sql).joined[0].startswith("WHERE laureates.name IN")
    assert len(run_with_lineage(sb, sql).result.rows) == 4
    sql = ("SELECT nationality, count(*) AS year FROM laureates WHERE award_name = "
           "'Stedrurial Medal' GROUP BY nationality ORDER BY year")
    assert run_with_lineage(sb, sql).result.rows == [["Starnnirnia", 1], ["Kraxryndia", 3]]


def test_an_in_test_inside_a_threshold_supports_every_row(sb: SQLSandbox) -> None:
    """A subquery whose value depends on every medal row (an average as a threshold) is no
    row's own: each result row keeps all the medal rows it read."""
    sql = ("SELECT name FROM laureates WHERE birth_year > (SELECT avg(birth_year) FROM "
           "laureates WHERE name IN (SELECT laureate_name FROM stedrurial_medal WHERE "
           "award_name = 'Stedrurial Medal')) ORDER BY name")
    traced = run_with_lineage(sb, sql)
    assert [r[0] for r in traced.result.rows] == ["Systhou Vhyrnbraex", "Zouzand Grialforn"]
    for lin in traced.lineage:
        assert {"m-0", "m-1", "m-2", "m-4"} <= {s.chunk_id for s in lin.sources}


def test_a_filter_in_parentheses_is_tested_too(sb: SQLSandbox) -> None:
    sql = ("SELECT avg(birth_year) FROM laureates WHERE (nationality = 'Kraxryndia' AND "
           "award_name = 'Stedrurial Medal')")
    assert sb.check(sql).joined[0].startswith("WHERE laureates.name IN (SELECT")
    assert round(run_with_lineage(sb, sql).result.rows[0][0], 2) == 1965.33


def test_the_sql_step_answers_without_a_repair() -> None:
    prompts: list[str] = []

    def respond(request):
        prompts.append(request.messages[-1].content)
        return json.dumps({"sql": ASKED})
    table, attempts, ep = reason_over(respond, SCHEMA, _rows())
    assert [a.stage for a in attempts] == ["ok"] and len(prompts) == 1
    assert round(table.rows[0][0], 2) == 1965.33
    assert any("IN (SELECT stedrurial_medal.laureate_name" in f for f in ep.trace.fallbacks)


def test_conditions_on_one_row_stay_on_one_row(sb: SQLSandbox) -> None:
    """Both conditions are on the new table: one IN test, so they must hold of one medal row.
    Grialforn has a medal in 2004 and a grant in 2016, no grant before 2010."""
    sql = ("SELECT name FROM laureates WHERE award_name = 'research grant' AND year < 2010 "
           "ORDER BY name")
    checked = sb.check(sql)
    assert len(checked.joined) == 1 and "award_name = 'research grant' AND " \
        "stedrurial_medal.year < 2010" in checked.joined[0]
    assert run_with_lineage(sb, sql).result.rows == []
    sql = sql.replace("year < 2010", "year > 2010")
    assert run_with_lineage(sb, sql).result.rows == [["Zouzand Grialforn"]]


def test_a_filter_in_a_count_and_in_a_list(sb: SQLSandbox) -> None:
    count = ("SELECT count(*) FROM laureates WHERE nationality = 'Kraxryndia' AND "
             "(award_name LIKE 'Sted%' OR award_name = 'research grant')")
    assert run_with_lineage(sb, count).result.rows == [[3]]    # Grialforn once
    listed = ("SELECT name FROM laureates WHERE NOT award_name = 'Stedrurial Medal' "
              "ORDER BY name")
    assert run_with_lineage(sb, listed).result.rows == [["Dontaen Dromae"],
                                                        ["Zouzand Grialforn"]]


@pytest.mark.parametrize("sql", [
    # read outside the filter: in the SELECT list, in ORDER BY
    "SELECT avg(birth_year), max(award_name) FROM laureates WHERE award_name LIKE 'S%'",
    "SELECT count(*) FROM laureates WHERE award_name = 'Stedrurial Medal' "
    "GROUP BY award_name",
    # true for a laureate with no medal row: the LEFT JOIN keeps them, an IN test would not
    "SELECT avg(birth_year) FROM laureates WHERE award_name IS NULL",
    "SELECT avg(birth_year) FROM laureates WHERE coalesce(award_name, '') = ''",
    "SELECT avg(birth_year) FROM laureates WHERE award_name = 'x' OR 1 = 1",
    "SELECT avg(birth_year) FROM laureates WHERE award_name IS DISTINCT FROM 'x'",
    "SELECT avg(birth_year) FROM laureates WHERE NOT (award_name = 'x' AND year > 1)",
    # a condition that also reads the laureate: the test would be correlated
    "SELECT avg(birth_year) FROM laureates WHERE award_name = name",
    "SELECT avg(birth_year) FROM laureates WHERE award_name = 'x' OR nationality = 'y'",
    # a subquery inside the condition
    "SELECT avg(birth_year) FROM laureates WHERE award_name IN (SELECT nationality "
    "FROM laureates)",
])
def test_what_is_not_a_plain_filter_is_joined_or_refused_as_before(sb: SQLSandbox,
                                                                   sql: str) -> None:
    """Under an average the join would repeat Grialforn, so each is refused, as before."""
    with pytest.raises(SQLRefusedError) as info:
        sb.check(sql)
    assert "could not be resolved" in str(info.value)


def _where(condition: str) -> sqlglot.exp.Expression:
    return sqlglot.parse_one(f"SELECT 1 FROM t WHERE {condition}", read="duckdb"
                             ).args["where"].this


@pytest.mark.parametrize(("condition", "rejects"), [
    ("a = 'x'", True), ("'x' = a", True), ("a > 3 AND b < 2", True), ("a <> 1", True),
    ("a LIKE 'S%'", True), ("a ILIKE 's%'", True), ("a IN ('x', 'y')", True),
    ("a BETWEEN 1 AND 3", True), ("NOT a = 'x'", True), ("NOT (a LIKE 'x')", True),
    ("lower(a) = 'x'", True), ("CAST(a AS INT) > 1", True), ("(a = 1) OR (b = 2)", True),
    ("a = 1 AND 1 = 1", True),
    ("a = 1 OR 1 = 1", False), ("a IS NULL", False), ("NOT (a = 1 AND b = 2)", False),
    ("'x' IN (a, 'x')", False), ("1 = 1", False), ("a + 1 > 2", False),
    ("coalesce(a, 1) = 1", False), ("NOT NOT a = 1", False),
])
def test_which_conditions_are_false_for_a_missing_row(condition: str, rejects: bool) -> None:
    assert rejects_null(_where(condition)) is rejects
