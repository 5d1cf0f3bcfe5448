"""A drafted table keeping an offered table's name takes the stored wording (adopt.py): the
measuring model copied the offer's names and types and dropped the column descriptions it
was not shown, so the second question's tables matched no stored entry and read 12 chunks
again (``benchmarks/docsage_reuse.py``, 2026-11-29)."""

from __future__ import annotations

import asyncio
import json

from test_docsage_ask import Retriever, hits, trial

from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.adopt import adopt_offered
from quaderno.methods.docsage.detect import missing_relationships
from quaderno.methods.docsage.ask import SchemaDiscovery
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.episode import Episode

STORED = Table.model_validate({
    "name": "laureates", "description": "laureates of the prize",
    "columns": [{"name": "laureate_name", "description": "Name of the laureate"},
                {"name": "grant_amount", "type": "DOUBLE", "description": "research grant",
                 "unit": "EUR"},
                {"name": "field", "description": "field of study"}],
    "primary_key": ["laureate_name"]})


def _draft(*columns, description="", extra=()):
    return Schema.model_validate({"tables": [
        {"name": "laureates", "description": description, "columns": list(columns),
         "primary_key": ["laureate_name"]}, *extra]})


def test_a_copied_table_takes_the_stored_wording_and_its_signature():
    # what the offer shows, copied: names, types, the table's description
    draft = _draft({"name": "laureate_name"}, {"name": "grant_amount", "type": "DOUBLE"},
                   {"name": "field"}, description="laureates of the prize")
    schema, notes = adopt_offered(draft, [STORED])
    assert schema.tables[0].signature() == STORED.signature()
    assert notes == ["laureates: the stored table's wording taken for laureate_name, "
                     "grant_amount, field, so that its extracted tuples can be re-used"]


def test_the_tables_own_description_stays_the_drafts():
    """It says which records belong in the table, and the offer shows it: a draft that
    wrote another one (all laureates, where the stored table held the prize's) meant it."""
    draft = _draft({"name": "laureate_name"}, {"name": "grant_amount", "type": "DOUBLE"},
                   description="every laureate")
    schema, _ = adopt_offered(draft, [STORED])
    t = schema.tables[0]
    assert t.description == "every laureate"
    assert t.column("grant_amount").unit == "EUR"
    assert t.signature() != STORED.signature()


def test_only_columns_of_the_same_name_type_and_count_take_it():
    draft = _draft({"name": "laureate_name"}, {"name": "grant_amount", "type": "TEXT"},
                   {"name": "field", "single_valued": False},
                   {"name": "born", "type": "INT", "description": "year of birth"},
                   description="laureates of the prize",
                   extra=[{"name": "prizes", "columns": [{"name": "laureate_name"}]}])
    schema, notes = adopt_offered(draft, [STORED])
    t = schema.table("laureates")
    # another type, or several values per entity: something else, kept as drafted
    assert (t.column("grant_amount").description, t.column("grant_amount").unit) == ("", "")
    assert t.column("field").description == ""
    assert t.column("born").description == "year of birth"       # the draft's own column
    assert t.column("laureate_name").description == "Name of the laureate"
    assert schema.table("prizes") == draft.table("prizes")       # not offered: untouched
    assert notes == ["laureates: the stored table's wording taken for laureate_name, so "
                     "that its extracted tuples can be re-used"]


def test_nothing_changes_when_the_draft_already_agrees_or_names_another_table():
    same = Schema(tables=[STORED])
    assert adopt_offered(same, [STORED]) == (same, [])
    other = Schema(tables=[STORED.model_copy(update={"name": "winners"})])
    assert adopt_offered(other, [STORED]) == (other, [])


class CopiesTheOffer:
    """Drafts the offered table as the prompt shows it: names and types, no descriptions."""

    def __call__(self, request):
        user = request.messages[-1].content
        assert user.startswith("Design the smallest")
        assert "- laureates(laureate_name TEXT, grant_amount DOUBLE, field TEXT) -- laureates " \
               "of the prize" in user
        return json.dumps({"tables": [{"name": "laureates", "description": "laureates of the "
                                       "prize", "columns": [
            {"name": "laureate_name"}, {"name": "grant_amount", "type": "DOUBLE"},
            {"name": "field"}], "primary_key": ["laureate_name"]}]})


def test_schema_discovery_adopts_the_offered_wording_and_says_so():
    ep = Episode("Which laureate has the largest grant?", method="docsage",
                 lm=LM(FakeLLM(respond=CopiesTheOffer())), retriever=Retriever())
    discovery = SchemaDiscovery(mode="active")
    schema, notes = asyncio.run(discovery.initial(ep, hits("d1"), known=[STORED]))
    assert schema.tables[0].signature() == STORED.signature()
    assert any(n.startswith("laureates: the stored table's wording taken") for n in notes)
    # nothing offered, nothing adopted
    schema, notes = asyncio.run(discovery.initial(
        Episode("Which laureate has the largest grant?", method="docsage",
                lm=LM(FakeLLM(respond=lambda r: json.dumps({"tables": [
                    {"name": "laureates", "columns": [{"name": "laureate_name"}]}]}))),
                retriever=Retriever()), hits("d1")))
    assert schema.tables[0].columns[0].description == "" and not any(
        "wording taken" in n for n in notes)


def test_what_the_draft_wrote_itself_stays():
    """Review 19: a draft's own "year of birth" became the stored "year the grant was
    awarded", and its "USD" the stored "EUR"; only what it left empty is taken, and nothing
    of a column whose own wording says otherwise (review 20)."""
    stored = Table.model_validate({"name": "laureates", "columns": [
        {"name": "laureate_name"},
        {"name": "year", "type": "INT", "description": "year the grant was awarded"},
        {"name": "grant_amount", "type": "DOUBLE", "description": "research grant",
         "unit": "EUR"},
        {"name": "prize_money", "type": "DOUBLE", "description": "prize money", "unit": "EUR"}]})
    draft = _draft({"name": "laureate_name"},
                   {"name": "year", "type": "INT", "description": "year of birth"},
                   {"name": "grant_amount", "type": "DOUBLE", "unit": "USD"},
                   {"name": "prize_money", "type": "DOUBLE", "unit": "EUR"})
    schema, notes = adopt_offered(draft, [stored])
    t = schema.tables[0]
    assert t.column("year").description == "year of birth"
    assert (t.column("grant_amount").description, t.column("grant_amount").unit) == ("", "USD")
    # its unit agrees with the stored one: the description it left empty is taken
    assert (t.column("prize_money").description, t.column("prize_money").unit) == \
        ("prize money", "EUR")
    assert notes == ["laureates: the stored table's wording taken for prize_money, so that "
                     "its extracted tuples can be re-used"]


class RefinesWithoutWording(CopiesTheOffer):
    """The passive ablation's refine pass rewrites the table without its descriptions."""

    def __call__(self, request):
        user = request.messages[-1].content
        if user.startswith("Revise this relational schema"):
            return json.dumps({"tables": [{"name": "laureates", "description": "laureates of "
                                           "the prize", "columns": [
                {"name": "laureate_name"}, {"name": "grant_amount", "type": "DOUBLE"},
                {"name": "field"}], "primary_key": ["laureate_name"]}]})
        return super().__call__(request)


def test_the_passive_refine_keeps_the_stored_wording():
    """Review 19: the refine pass rebuilt the schema from its reply, and the table matched
    the stored one no more."""
    ep = Episode("Which laureate has the largest grant?", method="docsage",
                 lm=LM(FakeLLM(respond=RefinesWithoutWording())), retriever=Retriever())
    schema, log = asyncio.run(SchemaDiscovery(mode="passive").run(
        ep, hits("d1"), hits("d1", "d2"), extract=trial, detect=missing_relationships,
        known=[STORED]))
    assert log.stop_reason == "passive: one refine pass" and schema.version == 1
    assert schema.table("laureates").signature() == STORED.signature()
