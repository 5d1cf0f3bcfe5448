"""An id column no row fills is left out of the schema the SQL step sees.

resample-docsage-set1: ``laureate_id`` was NULL in every row of ``stedrurial_medal`` and
``laureates``; the measuring model joined ``laureates.name`` to it three times and the
question went unanswered, the three right birth years in the table."""

from __future__ import annotations

import json

from docsage_fakes import reason_over
from quaderno.methods.docsage.empty_ids import without_empty_ids
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Schema

SCHEMA = Schema.model_validate({"tables": [
    {"name": "stedrurial_medal", "columns": [{"name": "laureate_id", "type": "INT"},
                                             {"name": "award_name"},
                                             {"name": "year", "type": "INT"}],
     "foreign_keys": [{"cols": ["laureate_id"], "ref_table": "laureates",
                       "ref_cols": ["laureate_id"]}]},
    {"name": "laureates", "primary_key": ["name"],
     "columns": [{"name": "laureate_id", "type": "INT"}, {"name": "name"},
                 {"name": "nationality"}, {"name": "birth_year", "type": "INT"},
                 {"name": "gender"}]},
    {"name": "institutions", "columns": [{"name": "institution_id", "type": "INT"},
                                         {"name": "inst_name"}]}]})


def _row(table: str, chunk: str, **values) -> Row:
    return Row(table=table, values=values, provenance=Provenance(chunk_id=chunk))


ROWS = [_row("laureates", "d3", laureate_id=None, name="Dyrte Fourzixze",
             nationality="Kraxryndia", birth_year=1962, gender=None),
        _row("laureates", "d7", laureate_id=None, name="Systhou Vhyrnbraex",
             nationality="Kraxryndia", birth_year=1970, gender=None),
        _row("stedrurial_medal", "d17", laureate_id=None, award_name="Stedrurial Medal",
             year=2015)]


def test_only_empty_id_columns_of_read_tables_are_left_out() -> None:
    shown, hidden = without_empty_ids(SCHEMA, ROWS)
    assert hidden == ["stedrurial_medal.laureate_id", "laureates.laureate_id"]
    medal, laureates, institutions = shown.tables
    assert medal.column_names == ["award_name", "year"] and medal.foreign_keys == []
    # an empty column that is no id (gender) stays: a query may rightly find it NULL
    assert laureates.column_names == ["name", "nationality", "birth_year", "gender"]
    # a table with no row read is left as it is
    assert institutions.column_names == ["institution_id", "inst_name"]
    # the recorded schema is not changed
    assert "laureate_id" in SCHEMA.tables[0].column_names
    # one filled id keeps its column; a key's id part stays however empty
    filled = [*ROWS, _row("laureates", "d9", laureate_id=4, name="Zouzand Grialforn")]
    assert without_empty_ids(SCHEMA, filled)[1] == ["stedrurial_medal.laureate_id"]
    keyed = SCHEMA.model_copy(update={"tables": [
        SCHEMA.tables[0].model_copy(update={"primary_key": ["laureate_id", "award_name"]}),
        *SCHEMA.tables[1:]]})
    assert without_empty_ids(keyed, ROWS)[1] == ["laureates.laureate_id"]
    assert without_empty_ids(SCHEMA, [r for r in ROWS if r.table == "laureates"]
                             )[1] == ["laureates.laureate_id"]


def test_the_model_is_not_shown_the_id_it_joined_on() -> None:
    joined = ("SELECT AVG(T1.birth_year) FROM laureates AS T1 INNER JOIN stedrurial_medal AS "
              "T2 ON T1.name = T2.laureate_id WHERE T1.nationality = 'Kraxryndia'")
    alone = "SELECT AVG(birth_year) FROM laureates WHERE nationality = 'Kraxryndia'"
    prompts = []

    def respond(request):
        prompts.append(request.messages[-1].content)
        return json.dumps({"sql": joined if "laureate_id" in prompts[-1] else alone})
    table, attempts, ep = reason_over(respond, SCHEMA, ROWS)
    assert [a.stage for a in attempts] == ["ok"] and table.rows == [[1966.0]]
    assert any("left out of the schema the query is written for: "
               "stedrurial_medal.laureate_id, laureates.laureate_id" in f
               for f in ep.trace.fallbacks)
    # and a query naming it is refused as naming no column of the schema
    table, attempts, _ = reason_over(lambda r: json.dumps({"sql": joined}), SCHEMA, ROWS)
    assert attempts[0].stage == "gate" and table is None
