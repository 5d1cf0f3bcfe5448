"""An entity's one value of a single-valued column is written on each of its rows of a table
with a row per value (entity_values.py). At f8d275e the benchmark's Riandgiax Systems was two
rows of ``companies``, one with its sector and commission and one with its 269 offices, and
the average offices of the commission's energy companies left it out."""

from __future__ import annotations

import asyncio
import json

import duckdb

from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.methods.docsage.clear import ClearConfig, run_clear
from quaderno.methods.docsage.entity_values import share_entity_values
from quaderno.methods.docsage.rows import Correction, Provenance, Row, load_rows, value_chunk
from quaderno.methods.docsage.schema import Schema

DMC, SOPAEL = "Drournlia Markets Commission", "Sopael Markets Commission"
SCHEMA = Schema.model_validate({"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [{"name": "company_name"}, {"name": "sector", "single_valued": False},
                 {"name": "commission_name", "single_valued": False},
                 {"name": "offices", "type": "INT"}, {"name": "employees", "type": "INT"}]}]})
# a single-valued reference to a table of names: rows naming different commissions are
# namesakes (namesakes.py)
NAMESAKES = Schema.model_validate({"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [{"name": "company_name"}, {"name": "sector", "single_valued": False},
                 {"name": "commission_name"}, {"name": "offices", "type": "INT"}],
     "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                       "ref_cols": ["commission_name"]}]},
    {"name": "commissions", "primary_key": ["commission_name"],
     "columns": [{"name": "commission_name"}]}]})
AVERAGE = ("SELECT AVG(offices) FROM companies WHERE commission_name = "
           f"'{DMC}' AND sector = 'energy'")


def _row(chunk: str, name: str = "Riandgiax Systems", **values) -> Row:
    return Row(table="companies", values={"company_name": name, **values},
               provenance=Provenance(chunk_id=chunk, confidence={
                   k: 0.9 for k, v in values.items() if v is not None}))


def _average(rows: list[Row]) -> float | None:
    conn = duckdb.connect()
    load_rows(conn, SCHEMA, rows)
    return conn.execute(AVERAGE).fetchone()[0]


def test_the_offices_one_row_holds_reach_the_row_with_the_sector_and_commission() -> None:
    rows = [_row("d20#0", sector="energy", commission_name=DMC),
            _row("d50#0", sector="Power from Krildyr", offices=269),
            _row("d19#0", "Roustoustus Systems", sector="energy", commission_name=DMC,
                 offices=120)]
    assert _average(rows) == 120       # without the fill, Riandgiax's offices are not read
    shared, filled = share_entity_values(SCHEMA, rows)
    assert filled == 1
    assert [r.values.get("offices") for r in shared] == [269, 269, 120]
    assert _average(shared) == (269 + 120) / 2
    # the filled cell leads back to the chunk that states it, with its confidence
    fill = shared[0]
    assert fill.provenance.chunk_id == "d20#0"
    assert value_chunk(fill.provenance.chunk_id, fill.provenance.corrections,
                       "offices") == "d50#0"
    assert fill.provenance.corrections[-1].reason == "entity-value"
    assert fill.provenance.confidence["offices"] == 0.9
    assert rows[0].values.get("offices") is None          # the input rows are not changed


def test_two_values_of_a_single_valued_column_are_a_conflict_not_copied() -> None:
    rows = [_row("d1#0", sector="energy", offices=269),
            _row("d2#0", sector="banking", offices=300),
            _row("d3#0", sector="telecom")]
    shared, filled = share_entity_values(SCHEMA, rows)
    assert filled == 0
    assert [r.values.get("offices") for r in shared] == [269, 300, None]


def test_values_of_one_entity_only_and_only_into_empty_cells() -> None:
    rows = [_row("d1#0", sector="energy", employees=50),
            _row("d2#0", sector="banking", employees=50, offices=7),
            _row("d3#0", "Bryskound Holdings", sector="energy")]
    shared, filled = share_entity_values(SCHEMA, rows)
    assert filled == 1
    assert shared[0].values["offices"] == 7 and shared[0].values["employees"] == 50
    assert shared[2].values.get("offices") is None
    assert [c.column for c in shared[0].provenance.corrections] == ["offices"]


def test_multi_valued_cells_stay_each_row_s_own() -> None:
    rows = [_row("d1#0", sector="energy", offices=5), _row("d2#0", commission_name=DMC)]
    shared, _ = share_entity_values(SCHEMA, rows)
    assert shared[0].values.get("commission_name") is None
    assert shared[1].values.get("sector") is None and shared[1].values["offices"] == 5


def test_a_cell_a_text_says_has_ended_is_not_filled() -> None:
    ended = _row("d2#0", sector="telecom")
    ended.provenance.corrections.append(Correction(column="offices", old=3, new=None,
                                                   reason="ended", by="ended"))
    shared, filled = share_entity_values(SCHEMA, [_row("d1#0", sector="energy", offices=9),
                                                  ended])
    assert filled == 0 and shared[1].values.get("offices") is None


def test_namesakes_do_not_share_values() -> None:
    """Rows naming different commissions through a single-valued reference to a names
    table are two companies (namesakes.py): the Sopael namesake does not take the
    Drournlia member's offices."""
    rows = [Row(table="companies", values={"company_name": "Kryslias Systems", **v},
                provenance=Provenance(chunk_id=c))
            for c, v in (("d1#0", {"sector": "energy", "commission_name": DMC, "offices": 143}),
                         ("d2#0", {"sector": "banking", "commission_name": SOPAEL}),
                         ("d3#0", {"sector": "telecom", "commission_name": DMC}))]
    shared, filled = share_entity_values(NAMESAKES, rows)
    assert filled == 1
    assert [r.values.get("offices") for r in shared] == [143, None, 143]


def test_keyless_tables_tables_without_multi_valued_columns_and_partial_keys_are_left() -> None:
    keyless = Schema.model_validate({"tables": [
        {"name": "companies", "columns": [{"name": "company_name"},
                                          {"name": "sector", "single_valued": False},
                                          {"name": "offices", "type": "INT"}]}]})
    rows = [Row(table="companies", values={"company_name": "A", **v},
                provenance=Provenance(chunk_id=c))
            for c, v in (("d1#0", {"sector": "x", "offices": 1}), ("d2#0", {"sector": "y"}))]
    assert share_entity_values(keyless, rows)[1] == 0
    single = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "sector"},
                     {"name": "offices", "type": "INT"}]}]})
    assert share_entity_values(single, rows)[1] == 0
    pair = Schema.model_validate({"tables": [
        {"name": "seasons", "primary_key": ["team", "year"],
         "columns": [{"name": "team"}, {"name": "year", "type": "INT"},
                     {"name": "coach", "single_valued": False},
                     {"name": "wins", "type": "INT"}]}]})
    rows = [Row(table="seasons", values={"team": "Oxen", "year": None, **v},
                provenance=Provenance(chunk_id=c))
            for c, v in (("d1#0", {"coach": "x", "wins": 9}), ("d2#0", {"coach": "y"}))]
    assert share_entity_values(pair, rows)[1] == 0


def test_clear_writes_the_entity_s_value_on_each_row_and_counts_it() -> None:
    chunks = [Chunk(id="d20#0", text=f"Riandgiax Systems, an energy company, is a member of "
                                     f"the {DMC}."),
              Chunk(id="d50#0", text="Riandgiax Systems is active in the power sector. A "
                                     "total of 269 offices was recorded for Riandgiax "
                                     "Systems.")]
    # two sectors keep the rows apart (a slogan read as one no longer does: labelled.py)
    reads = {"d20#0": {"sector": "energy", "commission_name": DMC},
             "d50#0": {"sector": "power", "offices": 269}}

    def respond(request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        for chunk in chunks:
            if chunk.text in prompt:
                return json.dumps({"companies": [{"company_name": "Riandgiax Systems",
                                                  **reads[chunk.id]}]})
        raise AssertionError(prompt[:200])

    result = asyncio.run(run_clear(LM(FakeLLM(respond=respond)), SCHEMA, chunks,
                                   config=ClearConfig(level_a=False)))
    assert sorted((r.values["sector"], r.values["offices"]) for r in result.rows) == [
        ("energy", 269), ("power", 269)]
    assert result.report.corrections["entity-value"] == 1
    assert _average(result.rows) == 269


def test_among_namesakes_a_row_naming_none_neither_gives_nor_takes() -> None:
    """The review of 38f2db8: a row naming no commission is only guessed to be the member
    most rows name; its 161 offices were copied into the member's row (and the reference
    into it), and the commission's maximum became 161."""
    rows = [Row(table="companies", values={"company_name": "Kryslias Systems", **v},
                provenance=Provenance(chunk_id=c))
            for c, v in (("d1#0", {"sector": "energy", "commission_name": DMC}),
                         ("d2#0", {"sector": "mining", "commission_name": DMC}),
                         ("d3#0", {"sector": "banking", "commission_name": SOPAEL}),
                         ("d4#0", {"sector": "telecom", "offices": 161}))]
    shared, filled = share_entity_values(NAMESAKES, rows)
    assert filled == 0
    assert shared[3].values.get("commission_name") is None
    assert [r.values.get("offices") for r in shared] == [None, None, None, 161]


def test_a_column_describing_the_row_s_value_is_not_the_entity_s() -> None:
    """The review of 38f2db8: a laureate's Stedrurial Medal year was copied onto its Krill
    Prize row; the prize's money is the prize's too."""
    schema = Schema.model_validate({"tables": [
        {"name": "laureates", "primary_key": ["laureate_name"],
         "columns": [{"name": "laureate_name"}, {"name": "prize", "single_valued": False},
                     {"name": "year", "type": "INT"}, {"name": "prize_money", "type": "INT"},
                     {"name": "birth_year", "type": "INT"}]}]})
    rows = [Row(table="laureates", values={"laureate_name": "Dyrte Fourzixze", **v},
                provenance=Provenance(chunk_id=c))
            for c, v in (("d1#0", {"prize": "Stedrurial Medal", "year": 1990,
                                   "prize_money": 5000, "birth_year": 1950}),
                         ("d2#0", {"prize": "Krill Prize"}))]
    shared, filled = share_entity_values(schema, rows)
    assert filled == 1
    assert shared[1].values == {"laureate_name": "Dyrte Fourzixze", "prize": "Krill Prize",
                                "birth_year": 1950}


def test_attributes_of_the_entity_are_shared_whatever_words_they_share() -> None:
    """The review of 3fd935d: ``home_institution_name`` shares only the generic "name" with
    the multi-valued ``prize_name``, and a year of incorporation dates the entity itself."""
    schema = Schema.model_validate({"tables": [
        {"name": "laureates", "primary_key": ["laureate_name"],
         "columns": [{"name": "laureate_name"}, {"name": "prize_name", "single_valued": False},
                     {"name": "home_institution_name"}]},
        {"name": "firms", "primary_key": ["title"],
         "columns": [{"name": "title"}, {"name": "genre", "single_valued": False},
                     {"name": "incorporation_year", "type": "INT"}]}]})
    rows = [Row(table=t, values=v, provenance=Provenance(chunk_id=c)) for t, c, v in (
        ("laureates", "d1#0", {"laureate_name": "Dyrte", "prize_name": "Stedrurial Medal",
                               "home_institution_name": "Vhithfun Institute"}),
        ("laureates", "d2#0", {"laureate_name": "Dyrte", "prize_name": "Krill Prize"}),
        ("firms", "d3#0", {"title": "Zorn", "genre": "banking", "incorporation_year": 1971}),
        ("firms", "d4#0", {"title": "Zorn", "genre": "insurance"}))]
    shared, filled = share_entity_values(schema, rows)
    assert filled == 2
    assert shared[1].values["home_institution_name"] == "Vhithfun Institute"
    assert shared[3].values["incorporation_year"] == 1971
