"""A query that finds nothing because it compares a value with a column that does not hold
it is told which columns do (value_places.py; a discovered schema's link table naming the
group, the case the oracle-tables run's query suggested)."""

from __future__ import annotations

import json

from docsage_fakes import first_row_answer, reason_over, row, schema_of
from quaderno.methods.docsage.value_places import value_places

MEDAL = "the Stedrurial Medal"
SCHEMA = schema_of({"tables": [
    {"name": "laureates", "primary_key": ["name"],
     "columns": [{"name": "name"}, {"name": "achievement"},
                 {"name": "birth_year", "type": "INT"}]},
    {"name": "membership", "primary_key": ["laureate", "award"],
     "columns": [{"name": "laureate"}, {"name": "award"}]}]})
ROWS = [row("laureates", "d1", name="Gryrnstu Pougryrn", achievement="the Dukous method",
            birth_year=1973),
        row("laureates", "d2", name="Touslian Brultiathgus", achievement="the Sykian theorem",
            birth_year=1954),
        row("membership", "d3", laureate="Gryrnstu Pougryrn", award="The Stedrurial Medal"),
        row("membership", "d4", laureate="Touslian Brultiathgus", award="Orvan Prize")]
WRONG = f"SELECT name FROM laureates WHERE achievement = '{MEDAL}' ORDER BY birth_year DESC"
RIGHT = ("SELECT l.name FROM laureates l JOIN membership m ON m.laureate = l.name "
         "WHERE m.award = 'The Stedrurial Medal' ORDER BY l.birth_year DESC LIMIT 1")


def test_a_value_no_row_of_the_compared_column_holds_is_placed() -> None:
    assert value_places(SCHEMA, ROWS, WRONG) == [
        f"'{MEDAL}' is in no row of laureates.achievement; it is written in "
        "membership.award (as 'The Stedrurial Medal')."]
    # IN lists, either side of =, qualified by an alias
    assert len(value_places(SCHEMA, ROWS, "SELECT name FROM laureates AS t WHERE "
                            f"'{MEDAL}' = t.achievement")) == 1
    assert len(value_places(SCHEMA, ROWS, "SELECT name FROM laureates WHERE achievement "
                            f"IN ('{MEDAL}', 'Orvan Prize')")) == 2


def test_nothing_is_said_of_a_value_held_where_compared_or_nowhere() -> None:
    assert value_places(SCHEMA, ROWS, RIGHT) == []
    assert value_places(SCHEMA, ROWS, "SELECT name FROM laureates WHERE achievement = "
                        "'the Zyx prize'") == []               # nowhere: nothing to say
    assert value_places(SCHEMA, ROWS, "SELECT name FROM laureates WHERE birth_year = 1954"
                        ) == []                                   # no text value
    assert value_places(SCHEMA, ROWS, "SELECT FROM WHERE (") == []   # does not parse


def test_the_recompiled_query_is_told_where_the_value_is() -> None:
    prompts: list[str] = []

    def respond(request):
        user = request.messages[-1].content
        if user.startswith("Write one DuckDB SELECT"):
            prompts.append(user)
            return json.dumps({"sql": RIGHT if "membership.award" in user else WRONG})
        return first_row_answer(user)
    table, attempts, _ = reason_over(respond, SCHEMA, ROWS, "Which laureate of the "
                                     "Stedrurial Medal has the latest birth year?")
    assert [a.rows for a in attempts] == [0, 1]
    assert table.rows == [["Gryrnstu Pougryrn"]]
    assert "it is written in membership.award" in prompts[1]


def test_the_same_query_written_again_after_the_hint_is_asked_for_sampled() -> None:
    """The oracle-tables run: told only that it found nothing, the model wrote the query
    again word for word; with its value placed, a repeat is a failure and is resampled."""
    temperatures: list[float] = []

    def respond(request):
        user = request.messages[-1].content
        if user.startswith("Write one DuckDB SELECT"):
            temperatures.append(request.temperature)
            return json.dumps({"sql": RIGHT if request.temperature else WRONG})
        return first_row_answer(user)
    table, attempts, _ = reason_over(respond, SCHEMA, ROWS, "Which laureate of the "
                                     "Stedrurial Medal has the latest birth year?")
    assert [a.stage for a in attempts] == ["ok", "repeat", "ok"]
    assert temperatures[:2] == [0.0, 0.0] and temperatures[2] > 0
    assert table.rows == [["Gryrnstu Pougryrn"]]
