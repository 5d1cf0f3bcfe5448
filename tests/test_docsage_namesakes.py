"""Namesakes: two rows of one key naming different entities they belong to (the benchmark's
Kryslias Systems of the Sopael Markets Commission beside the Drournlia member) are two
entities, each settled among its own rows, never one judged value for both."""

from __future__ import annotations

import asyncio
import json

from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.methods.docsage.clear import ClearConfig, run_clear
from quaderno.methods.docsage.misplaced import name_references
from quaderno.methods.docsage.namesakes import entity_groups
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Schema

SCHEMA = Schema.model_validate({"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [{"name": "company_name"}, {"name": "offices", "type": "INT"},
                 {"name": "commission_name"}],
     "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                       "ref_cols": ["commission_name"]}]},
    {"name": "commissions", "primary_key": ["commission_name"],
     "columns": [{"name": "commission_name"}]}]})
COMPANIES = SCHEMA.tables[0]
DMC, SOPAEL = "Drournlia Markets Commission", "Sopael Markets Commission"
CHUNKS = [
    Chunk(id="d1#0", text=f"Kryslias Systems is a company of the {DMC}. Some 143 offices "
                          "are associated with Kryslias Systems."),
    Chunk(id="d2#0", text=f"Kryslias Systems is a company of the {SOPAEL}. Kryslias Systems "
                          "counts 161 offices."),
    Chunk(id="d3#0", text=f"Kryslias Systems, of the {DMC}, lists 150 offices in 2019 and "
                          "143 offices in 2024."),
]
READ = {"d1#0": (143, DMC), "d2#0": (161, SOPAEL), "d3#0": (150, DMC)}


def _row(chunk: str, offices, commission) -> Row:
    return Row(table="companies", values={"company_name": "Kryslias Systems",
                                          "offices": offices, "commission_name": commission},
               provenance=Provenance(chunk_id=chunk))


def test_rows_naming_two_entities_split_a_row_naming_none_joins_the_most_named() -> None:
    rows = [_row("d1#0", 143, DMC), _row("d2#0", 161, SOPAEL), _row("d3#0", 150, DMC),
            _row("d4#0", 170, None)]
    assert entity_groups(SCHEMA, COMPANIES, ["company_name"], rows) == [
        (("drournlia markets commission",), [0, 2, 3]), (("sopael markets commission",), [1])]
    # the schema's references, read once by CLEAR, split the same way; none, not at all
    assert entity_groups(SCHEMA, COMPANIES, ["company_name"], rows,
                         references=name_references(SCHEMA)) == \
        entity_groups(SCHEMA, COMPANIES, ["company_name"], rows)
    assert entity_groups(SCHEMA, COMPANIES, ["company_name"], rows, references={}) == [
        ((), [0, 1, 2, 3])]


def test_a_row_naming_none_is_left_out_when_no_entity_is_named_most() -> None:
    """The review of 969a49d: whose are 150 offices, when one row names each commission?"""
    rows = [_row("d1#0", 143, DMC), _row("d2#0", 161, SOPAEL), _row("d4#0", 150, None)]
    assert entity_groups(SCHEMA, COMPANIES, ["company_name"], rows) == [
        (("drournlia markets commission",), [0]), (("sopael markets commission",), [1])]


def test_rows_naming_one_entity_or_none_stay_one_group() -> None:
    rows = [_row("d1#0", 143, DMC), _row("d3#0", 150, "drournlia markets commission"),
            _row("d4#0", 170, None)]
    assert entity_groups(SCHEMA, COMPANIES, ["company_name"], rows) == [((), [0, 1, 2])]


def test_a_reference_to_a_table_with_more_to_say_does_not_split() -> None:
    """A company's city read two ways is a conflict to settle, not two companies (the review
    of 969a49d: a misread city kept 97,040 and 9,704 employees apart)."""
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "employees", "type": "INT"},
                     {"name": "city_name"}],
         "foreign_keys": [{"cols": ["city_name"], "ref_table": "cities",
                           "ref_cols": ["city_name"]}]},
        {"name": "cities", "primary_key": ["city_name"],
         "columns": [{"name": "city_name"}, {"name": "population", "type": "INT"}]}]})
    rows = [Row(table="companies", values={"company_name": "Rastou Bank", "employees": n,
                                           "city_name": city},
                provenance=Provenance(chunk_id=f"d{n}#0"))
            for n, city in ((97040, "Paris"), (9704, "Lyon"))]
    assert entity_groups(schema, schema.tables[0], ["company_name"], rows) == [((), [0, 1])]


def test_clear_settles_each_namesake_among_its_own_rows() -> None:
    judged: list[str] = []

    def respond(request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        if "Documents disagree" in prompt:
            judged.append(prompt)
            return json.dumps({"value": "143", "passage": 2,
                               "quote": "143 offices in 2024"})
        for chunk in CHUNKS:
            if chunk.text in prompt:
                offices, commission = READ[chunk.id]
                return json.dumps({
                    "companies": [{"company_name": "Kryslias Systems", "offices": offices,
                                   "commission_name": commission}],
                    "commissions": [{"commission_name": commission}]})
        raise AssertionError(prompt[:200])

    async def search(query: str, k: int):
        return [CHUNKS[2]]
    result = asyncio.run(run_clear(LM(FakeLLM(respond=respond)), SCHEMA, CHUNKS,
                                   config=ClearConfig(level_a=False), retrieve=search))
    companies = {(r.values["commission_name"], r.values["offices"]) for r in result.rows
                 if r.table == "companies"}
    # the Drournlia rows' conflict was judged among themselves; the namesake kept its own
    assert companies == {(DMC, 143), (SOPAEL, 161)}
    assert len(judged) == 1 and "150" in judged[0] and "161" not in judged[0]


def test_rows_filling_one_of_two_references_still_split() -> None:
    """The review of e1d6802: with a second names-table reference no row filled, no group
    was formed and CLEAR crashed on an empty list."""
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "offices", "type": "INT"},
                     {"name": "commission_name"}, {"name": "country_name"}],
         "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                           "ref_cols": ["commission_name"]},
                          {"cols": ["country_name"], "ref_table": "countries",
                           "ref_cols": ["country_name"]}]},
        {"name": "commissions", "primary_key": ["commission_name"],
         "columns": [{"name": "commission_name"}]},
        {"name": "countries", "primary_key": ["country_name"],
         "columns": [{"name": "country_name"}]}]})
    rows = [_row("d1#0", 143, DMC), _row("d2#0", 161, SOPAEL)]
    assert entity_groups(schema, schema.tables[0], ["company_name"], rows) == [
        (("drournlia markets commission", ""), [0]), (("sopael markets commission", ""), [1])]
