"""The SRAG-style baseline (spec 002 §7, ``srag``): one table of the question's entities
drafted once (no ASK), extracted without CLEAR, one sandboxed SQL query."""

from __future__ import annotations

import json

import pytest

from quaderno.methods.docsage.ask import SchemaDiscovery
from quaderno.methods.registry import METHODS
from test_docsage_method import SCHEMA, Model, answer

TWO = {"tables": [
    {"name": "institution", "primary_key": ["name"],
     "columns": [{"name": "name"}, {"name": "founded", "type": "INT"},
                 {"name": "staff", "type": "INT"}, {"name": "city"}],
     "foreign_keys": [{"column": "city", "references_table": "cities",
                       "references_column": "city"}]},
    {"name": "cities", "primary_key": ["city"], "columns": [{"name": "city"}]}],
    "constraints": [{"kind": "range", "table": "institution", "columns": ["founded"],
                     "low": 1000, "high": 2027}],
    "entity_types": ["institution"],
    "required_attributes": ["institution.name", "cities.city"], "join_path": ["institution",
                                                                           "cities"]}


class OneTable(Model):
    """Answers the single-table prompt with ``draft``; any other schema prompt fails."""

    def __init__(self, draft=SCHEMA, **kw):
        super().__init__(**kw)
        self.draft = draft

    def __call__(self, request):
        user = request.messages[-1].content
        if user.startswith("Design ONE table"):
            self.prompts.append(user)
            self.calls["Design ONE table"] = self.calls.get("Design ONE table", 0) + 1
            return json.dumps(self.draft)
        if user.startswith(("Design the smallest", "Revise this relational schema")):
            raise AssertionError("srag discovers no schema")
        return super().__call__(request)


def test_srag_drafts_one_table_once_and_answers_from_sql_without_clear(tmp_path):
    model = OneTable()
    a = answer("srag", model, tmp_path)
    assert a.answer == "Varnholt University"
    d = a.details
    assert d.variant == "single table (SRAG-style)"
    assert d.ask.mode == "single" and d.ask.stop_reason == "single table: no discovery"
    assert d.ask.rounds == [] and model.calls["Design ONE table"] == 1
    assert [t.name for t in d.db_schema.tables] == ["institution"]
    assert d.sql[-1].stage == "ok" and [e.chunk_id for e in a.evidence] == ["varn#0"]
    # no CLEAR: no confidence threshold, no constraint checks, no correction
    assert d.clear["tau_low"] is None and d.clear["calibration"] == ""
    assert d.clear["corrections"] == {} and d.clear["rounds"] == 0
    prompt = next(p for p in model.prompts if p.startswith("Design ONE table"))
    assert "Which member institution is the oldest?" in prompt and "<data>" in prompt


def test_a_draft_of_several_tables_keeps_its_first_without_references(tmp_path):
    a = answer("srag", OneTable(draft=TWO), tmp_path)
    d = a.details
    assert [t.name for t in d.db_schema.tables] == ["institution"]
    table = d.db_schema.tables[0]
    assert "city" in [c.name for c in table.columns] and table.foreign_keys == []
    assert d.db_schema.requirements.join_path == ["institution"]
    assert d.db_schema.requirements.attributes == ["institution.name"]
    assert [c.kind for c in d.db_schema.constraints] == ["range"]
    note = "the single-table draft had 2 tables; kept institution, left out cities"
    assert note in d.ask.initial_notes
    assert any(note in f for f in a.trace.fallbacks)
    assert a.answer == "Varnholt University"


def test_the_kept_table_holds_most_required_attributes_and_is_no_link():
    """Review 2: the first table was kept, though it only linked the others or the question
    required nothing of it; entity types naming a dropped table stayed."""
    from quaderno.methods.docsage.single_table import one_table
    from quaderno.methods.docsage.draft import SchemaDraft, to_schema
    link = {"name": "located", "primary_key": ["name", "city"],
            "columns": [{"name": "name"}, {"name": "city"}],
            "foreign_keys": [
                {"column": "name", "references_table": "institution",
                 "references_column": "name"},
                {"column": "city", "references_table": "cities", "references_column": "city"}]}
    institution = {**TWO["tables"][0], "foreign_keys": []}
    cities = TWO["tables"][1]
    for tables, attributes in (
            ([link, cities, institution], ["cities.city"]),      # the link never
            ([cities, institution], ["institution.name", "institution.staff",
                                     "cities.city"]),
            ([institution, cities], ["cities.city", "institution.name"])):   # a tie: first
        draft = SchemaDraft.model_validate({
            **TWO, "tables": tables, "required_attributes": attributes,
            "entity_types": ["institution", "cities"]})
        schema, _ = to_schema(draft)
        one, note = one_table(schema)
        expected = "cities" if tables[0] is link else "institution"
        assert [t.name for t in one.tables] == [expected], [t["name"] for t in tables]
        assert one.requirements.entity_types == [
            e for e in ("institution", "cities") if e == expected]
        assert all(a.startswith(f"{expected}.") for a in one.requirements.attributes)
        assert note.startswith(f"the single-table draft had {len(tables)} tables; kept "
                               f"{expected}, left out ")
        assert expected not in note.split("left out ")[1].split(", ")
    # review 1: a link with a column of its own is what the question may need, and entity
    # types are compared as table names are ("Cities" for cities)
    membership = {**link, "name": "membership",
                  "columns": [*link["columns"], {"name": "joined_year", "type": "INT"}]}
    draft = SchemaDraft.model_validate({
        **TWO, "tables": [institution, cities, membership],
        "required_attributes": ["membership.joined_year", "membership.name"],
        "entity_types": ["Institution", "Cities", "membership"]})
    one, _ = one_table(to_schema(draft)[0])
    assert [t.name for t in one.tables] == ["membership"]
    assert one.requirements.attributes == ["membership.joined_year", "membership.name"]
    assert one.requirements.entity_types == ["membership"]


def test_a_single_table_with_clear_is_named_by_all_its_switches(tmp_path):
    """Review 2: ``srag`` with CLEAR on was named docsage-single-table but still called
    itself the SRAG-style baseline; a combination of switches names each of them."""
    a = answer("srag", OneTable(), tmp_path / "clear", clear=True)
    assert a.method == "docsage-single-table"
    assert a.details.variant == "single table"
    assert a.details.clear["tau_low"] is not None
    both = answer("docsage-passive", Model(), tmp_path / "both", clear=False,
                  reasoning="tables")
    assert both.method == "docsage-passive-no-clear-no-sql"
    assert both.details.variant == "passive schema discovery, w/o CLEAR, w/o SQL reasoning"


def test_srag_is_registered_with_its_switches_and_a_bad_mode_is_named():
    spec = METHODS["srag"]
    assert spec.defaults == {"ask": "single", "clear": False}
    with pytest.raises(ValueError, match="'active', 'passive' or 'single', got 'one'"):
        SchemaDiscovery(mode="one")


def test_srag_records_no_offered_tables_its_prompt_never_showed(tmp_path):
    """Review 2 of f19cdf9: after a docsage question on the same store, srag's log named
    the stored table as offered though the single-table prompt shows none."""
    from test_docsage_method import Model as Full
    answer("docsage", Full(), tmp_path)
    model = OneTable()
    a = answer("srag", model, tmp_path)
    assert a.details.ask.offered == []
