"""A table ASK leaves without a primary key is keyed by the column naming its entity, so
CLEAR checks its duplicate keys and dependencies (``docsage-head-set2``: two Raextaendnas
Bank rows with 75,440 and 78 employees reached the SQL unchecked); a roster of pairs and an
ambiguous table stay keyless."""

from __future__ import annotations

import asyncio

import pytest
from docsage_fakes import drafts_and_reads_nothing

from quaderno.corpus.chunk import Chunk
from quaderno.index.hits import Hit
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.ask import SchemaDiscovery
from quaderno.methods.docsage.constraints import check
from quaderno.methods.docsage.own_key import own_keys
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.episode import Episode

# the Set2 shape the measuring model drafts: no primary key anywhere
SET2 = {"tables": [
    {"name": "commissions", "columns": [{"name": "commission_name"}, {"name": "company_name"}]},
    {"name": "companies",
     "columns": [{"name": "company_name"}, {"name": "sector"},
                 {"name": "employees", "type": "INT"}, {"name": "commission_name"}],
     "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                       "ref_cols": ["commission_name"]}]}]}


def test_the_entity_table_is_keyed_by_its_name_the_roster_of_pairs_is_not() -> None:
    schema, notes = own_keys(Schema.model_validate(SET2))
    assert schema.table("companies").primary_key == ["company_name"]
    assert schema.table("commissions").primary_key == []   # company_name names another
    assert notes == ["table 'companies' had no primary key: keyed by company_name, the "
                     "column naming its entity"]
    assert schema.history[-1]["reason"] == notes[0] and schema.version == 0


def test_keyed_the_conflicting_rows_of_one_company_are_a_violation() -> None:
    rows = [Row(table="companies", values={"company_name": "Raextaendnas Bank",
                                           "employees": n},
                provenance=Provenance(chunk_id=f"d{i}#0"))
            for i, n in enumerate((75440, 78))]
    before = check(Schema.model_validate(SET2), rows)
    after = check(own_keys(Schema.model_validate(SET2))[0], rows)
    assert before.violations == []
    assert {(v.kind, v.table) for v in after.violations} >= {("fd", "companies")}


@pytest.mark.parametrize("table", [
    # a declared key stays
    {"name": "companies", "columns": [{"name": "id", "type": "INT"}, {"name": "company_name"}],
     "primary_key": ["id"]},
    # two columns name the entity
    {"name": "companies", "columns": [{"name": "name"}, {"name": "company_name"}]},
    # the name column is marked multi-valued
    {"name": "companies", "columns": [{"name": "company_name", "single_valued": False},
                                      {"name": "sector"}]},
    # no column names the entity
    {"name": "companies", "columns": [{"name": "label"}, {"name": "sector"}]},
    # a number is no name
    {"name": "companies", "columns": [{"name": "company_name", "type": "INT"}]},
    # several rows per name, one per year or date (the review of own_key)
    {"name": "tournaments", "columns": [{"name": "tournament_name"},
                                        {"name": "year", "type": "INT"}, {"name": "winner"}]},
    {"name": "movies", "columns": [{"name": "title"}, {"name": "release_date", "type": "DATE"},
                                   {"name": "director"}]},
    {"name": "companies", "columns": [{"name": "company_name"}, {"name": "fiscal_year"},
                                      {"name": "revenue", "type": "DOUBLE"}]},
    # a roster: a name and one text beside it
    {"name": "teams", "columns": [{"name": "team_name"}, {"name": "player"}]},
])
def test_a_table_without_one_clear_name_column_stays_as_it_is(table) -> None:
    schema = Schema.model_validate({"tables": [table]})
    assert own_keys(schema) == (schema, [])


def test_a_date_of_the_entity_itself_is_an_attribute() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "columns": [{"name": "company_name"},
                                          {"name": "founded_year", "type": "INT"},
                                          {"name": "headquarters"}]}]})
    assert own_keys(schema)[0].table("companies").primary_key == ["company_name"]


def test_a_roster_declaring_its_member_as_a_reference_stays_keyless() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "employees", "type": "INT"}]},
        {"name": "commissions",
         "columns": [{"name": "commission_name"}, {"name": "company_name"}],
         "foreign_keys": [{"cols": ["company_name"], "ref_table": "companies",
                           "ref_cols": ["company_name"]}]}]})
    assert own_keys(schema) == (schema, [])


def test_a_table_another_refers_to_by_another_column_stays_keyless() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "cities", "columns": [{"name": "name"}, {"name": "code"}]},
        {"name": "people", "columns": [{"name": "person_name"}, {"name": "city_code"}],
         "primary_key": ["person_name"],
         "foreign_keys": [{"cols": ["city_code"], "ref_table": "cities",
                           "ref_cols": ["code"]}]}]})
    assert own_keys(schema)[0].table("cities").primary_key == []


def test_an_undeclared_id_of_another_table_is_a_link_too() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "columns": [{"name": "company_name"},
                                          {"name": "employees", "type": "INT"}]},
        {"name": "offices", "columns": [{"name": "office_name"}, {"name": "company_id",
                                                                  "type": "INT"}]}]})
    keyed, _ = own_keys(schema)
    assert keyed.table("offices").primary_key == []
    assert keyed.table("companies").primary_key == ["company_name"]


def test_ask_keys_the_table_it_ends_with_and_logs_it() -> None:
    """Both variants: it is code after the rounds, not discovery."""
    draft = {"tables": [{"name": "companies", "columns": [
        {"name": "company_name"}, {"name": "employees", "type": "INT"}]}],
        "required_attributes": ["companies.employees"], "join_path": ["companies"]}

    hits = [Hit(chunk=Chunk(id="d1#0", text="Rastou Bank employs 97,040 people."),
                score=1.0, rank=1, retriever="kw")]
    for mode in ("active", "passive"):
        ep = Episode("Which company has the most employees?", method="docsage",
                     lm=LM(FakeLLM(respond=drafts_and_reads_nothing(draft))), retriever=None)

        async def nothing(schema, probe):
            return []
        schema, log = asyncio.run(SchemaDiscovery(mode=mode).run(
            ep, hits, hits, extract=nothing, detect=lambda schema, rows: []))
        assert schema.table("companies").primary_key == ["company_name"]
        assert log.keyed == ["table 'companies' had no primary key: keyed by company_name, "
                             "the column naming its entity"]
        assert any("keyed by company_name" in f for f in ep.trace.fallbacks)


@pytest.mark.parametrize(("column", "kind", "dated"), [
    ("year", "INT", True), ("season", "TEXT", True), ("fiscal_year", "INT", True),
    ("start_date", "DATE", True), ("award_year", "INT", True),
    # the review of 9af73b4: dates of the entity itself, and words that only end in "time"
    ("date_of_birth", "DATE", False), ("dob", "DATE", False), ("year_founded", "INT", False),
    ("updated_at", "DATE", False), ("debut_year", "INT", False),
    ("running_time", "INT", False), ("funding_round", "TEXT", False),
    ("notice_period", "TEXT", False), ("headquarters", "TEXT", False),
])
def test_a_column_saying_when_a_row_holds_is_told_from_a_date_of_the_entity(column, kind,
                                                                           dated) -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "columns": [{"name": "company_name"},
                                          {"name": "employees", "type": "INT"},
                                          {"name": column, "type": kind}]}]})
    keyed = own_keys(schema)[0].table("companies").primary_key
    assert keyed == ([] if dated else ["company_name"])
