"""Multi-valued attributes: a column an entity has several values of (a company's products)
is declared ``single_valued: false`` in the model's draft and stays so through every schema
revision; its rows are one per value, unique on (key, value), never a conflict to settle."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from docsage_fakes import SYNTHESIS_PROMPT, first_row_answer
from fake_retriever import ChunkListRetriever
from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.offer import describe_tables
from quaderno.methods.docsage.confidence import agreement_rows
from quaderno.methods.docsage.constraints import check
from quaderno.methods.docsage.committee import tally
from quaderno.methods.docsage.extract import ExtractionSettings
from quaderno.methods.docsage.draft import SchemaDraft, from_schema, to_schema
from quaderno.methods.docsage.patch import SchemaPatch, apply_patches
from quaderno.methods.docsage.reason import render_tables
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Schema, Table, UniqueKey
from quaderno.methods.docsage.store import TupleStore
from quaderno.methods.registry import make_method

DRAFT = {"tables": [{"name": "company", "columns": [
    {"name": "name"}, {"name": "founded", "type": "INT"},
    {"name": "product", "description": "a product it makes", "single_valued": False}],
    "primary_key": ["name"]}],
    "required_attributes": ["company.name", "company.product"]}


def schema():
    s, notes = to_schema(SchemaDraft.model_validate(DRAFT))
    assert notes == []
    return s


def row(chunk, **values):
    return Row(table="company", values=values, provenance=Provenance(chunk_id=chunk))


def test_the_draft_declares_a_multi_valued_column_and_revisions_keep_it():
    s = schema()
    t = s.table("company")
    assert t.column("product").single_valued is False
    assert t.column("founded").single_valued is True
    # the prompt says so, for extraction and SQL
    assert "product TEXT -- a product it makes; several per entity, one row each" \
        in s.describe()
    assert "founded INT\n" in s.describe() + "\n"
    # F_update edits the draft form: a revision must not turn the column single-valued
    assert from_schema(s).tables[0].columns[2].single_valued is False
    new, notes = apply_patches(s, [SchemaPatch(op="add_column", table="company",
                                               column="city", type="TEXT"),
                                   SchemaPatch(op="add_column", table="company",
                                               column="brand", single_valued=False)])
    assert notes == [] and new.version == s.version + 1
    assert [(c.name, c.single_valued) for c in new.table("company").columns] == [
        ("name", True), ("founded", True), ("product", False), ("city", True),
        ("brand", False)]


def test_rows_are_unique_on_key_and_value_not_on_the_key_alone():
    s = schema()
    assert UniqueKey(table="company", cols=["name", "product"]) in s.all_constraints()
    two_products = [row("a#0", name="Acme", founded=1990, product="Widget"),
                    row("b#0", name="Acme", product="Gadget")]
    assert check(s, two_products).violations == []
    # the same product twice is a duplicate; two founding years are still a conflict
    again = check(s, [*two_products, row("c#0", name="Acme", product="Widget")])
    assert [(v.kind, v.values) for v in again.violations] == [("unique", ["Acme", "Widget"])]
    years = check(s, [*two_products, row("d#0", name="Acme", founded=1991)])
    assert [(v.kind, v.columns) for v in years.violations] == [("fd", ["name", "founded"])]


DOCS = [("acme1", "Acme Corp makes the Widget. Acme Corp was founded in 1990."),
        ("acme2", "Acme Corp also makes the Gadget. Acme Corp makes the Gizmo."),
        ("bolt", "Bolt Ltd makes the Sprocket. Bolt Ltd was founded in 2001.")]
CHUNKS = [Chunk(id=f"{d}#0", text=t, kb="cos", title=d) for d, t in DOCS]


class Model:
    """Drafts the schema above and extracts what each chunk states, a row per product."""

    def __init__(self) -> None:
        self.judged = 0

    def __call__(self, request):
        user = request.messages[-1].content
        if user.startswith(("Design the smallest", "Revise this relational schema")):
            return json.dumps(DRAFT)
        if user.startswith("Extract into the tables below"):
            text = user.split('"""')[1]
            rows = []
            for name, product in re.findall(r"(\w+ (?:Corp|Ltd)) (?:also )?makes the (\w+)",
                                            text):
                year = re.search(rf"{name} was founded in (\d{{4}})", text)
                rows.append({"name": name, "product": product,
                             "founded": int(year[1]) if year else None})
            return json.dumps({"company": rows})
        if "Documents disagree" in user:
            self.judged += 1
            return json.dumps({"value": None, "passage": 1, "quote": ""})
        if user.startswith("Write one DuckDB SELECT"):
            return json.dumps({"sql": "SELECT name, count(DISTINCT product) AS products "
                                      "FROM company GROUP BY name ORDER BY products DESC, "
                                      "name LIMIT 1"})
        if user.startswith(SYNTHESIS_PROMPT):
            return first_row_answer(user)
        raise AssertionError(f"unexpected prompt {user[:80]!r}")


@pytest.mark.parametrize("confidence", ["auto", "samples"])
def test_docsage_keeps_every_value_of_a_multi_valued_attribute(tmp_path, confidence):
    model = Model()
    method = make_method("docsage", LM(FakeLLM(respond=model)), ChunkListRetriever(CHUNKS),
                         {"store_dir": str(tmp_path / "store"), "confidence": confidence})
    a = asyncio.run(method.answer("Which company makes the most products?"))
    d = a.details
    # both of Acme's products survive CLEAR: nothing was settled, nothing set to NULL; its
    # one founding year is on each of its rows (entity_values.py)
    assert model.judged == 0 and d.clear["corrections"] == {"entity-value": 2}
    assert sorted((r["name"], r["product"], r["founded"]) for r in d.tables["company"]) == [
        ("Acme Corp", "Gadget", 1990), ("Acme Corp", "Gizmo", 1990),
        ("Acme Corp", "Widget", 1990), ("Bolt Ltd", "Sprocket", 2001)]
    assert d.result.rows == [["Acme Corp", 3]]
    assert a.answer == "Acme Corp"
    # the count cites both chunks that name a product
    assert {s.chunk_id for s in d.result.sources[0]} == {"acme1#0", "acme2#0"}


def test_tuples_extracted_one_per_entity_are_not_reused_for_a_row_per_value(tmp_path):
    """Extraction under "one product per company" keeps one product; a table that wants a
    row per product must extract again, not assemble its column from those rows."""
    multi = schema().table("company")
    single = Table.model_validate({**multi.model_dump(), "columns": [
        {**c.model_dump(), "single_valued": True} for c in multi.columns]})
    assert single.signature() != multi.signature()
    # a single-valued column's definition (so stored tuples' keys) is as it always was
    assert single.column("product").definition() == ["product", "TEXT", "", "a product it makes"]
    store, none = TupleStore(tmp_path), ExtractionSettings(confidence="none")
    chunk = CHUNKS[0]
    store.put(chunk, single, "m", none, [row(chunk.id, name="Acme Corp", founded=1990,
                                             product="Widget")])
    assert store.get(chunk, multi, "m", none) is None
    # nor assembled column by column (founded has one definition in both tables, but a row
    # per entity is not a row per product)
    assert store.cover(chunk, multi, "m", none) is None


# -- every place that tells one row from another ------------------------------------------------
PRODUCTS = [{"name": "Acme Corp", "product": p} for p in ("Widget", "Gadget", "Gizmo")]


def test_sample_agreement_keeps_a_row_per_value():
    agreed = agreement_rows([PRODUCTS, PRODUCTS[::-1], PRODUCTS[:2]], schema().table("company"))
    assert sorted(a.values["product"] for a in agreed) == ["Gadget", "Gizmo", "Widget"]
    gizmo = next(a for a in agreed if a.values["product"] == "Gizmo")
    assert gizmo.confidence["product"] == 2 / 3        # one sample of three lacks it


def test_a_committee_vote_never_turns_one_value_into_another():
    table = schema().table("company")
    gadget = {"name": "Acme Corp", "founded": 1990, "product": "Gadget"}
    ballots = [[{**r, "founded": 1990} for r in PRODUCTS]] * 2 + [[PRODUCTS[0]]]
    vote = tally(ballots, table, gadget, ["product", "founded"])
    assert (vote["product"].value, vote["product"].share) == ("Gadget", 2 / 3)
    assert vote["founded"].value == 1990 and vote["founded"].majority
    # a value no voter finds is voted NULL, not replaced by the entity's other value
    vote = tally([[PRODUCTS[0]]] * 3, table, gadget, ["product"])
    assert vote["product"].value is None and vote["product"].share == 1.0


def test_ask_can_mark_a_column_multi_valued_and_sees_it_in_known_tables():
    single = Table.model_validate({"name": "company", "primary_key": ["name"], "columns": [
        {"name": "name"}, {"name": "product"}]})
    s = Schema(tables=[single])
    new, notes = apply_patches(s, [SchemaPatch(op="mark_multi_valued", table="company",
                                               column="product"),
                                   SchemaPatch(op="mark_multi_valued", table="company",
                                               column="name")])
    assert notes == ["mark_multi_valued company.name: a primary-key column"]
    assert new.table("company").column("product").single_valued is False
    assert describe_tables(new.tables) == "- company(name TEXT, product TEXT multi-valued)"
    assert "(0 rows; one row per name, product)" in render_tables(new, [])


def test_the_tuple_store_never_builds_one_shape_from_the_other(tmp_path):
    """The other way round: rows per product do not make a table of one row per company
    (Acme twice, with its founding year on neither)."""
    multi = schema().table("company")
    plain = Table.model_validate({"name": "company", "primary_key": ["name"], "columns": [
        {"name": "name"}, {"name": "founded", "type": "INT"}]})
    store, none = TupleStore(tmp_path), ExtractionSettings(confidence="none")
    chunk = CHUNKS[0]
    store.put(chunk, multi, "m", none, [row(chunk.id, name="Acme Corp", product=p)
                                        for p in ("Widget", "Gadget")])
    assert store.cover(chunk, plain, "m", none) is None
    # a table of the same shape (a column fewer) is still built from the entry
    fewer = Table.model_validate({**multi.model_dump(), "columns": [
        c.model_dump() for c in multi.columns if c.name != "founded"]})
    rows, missing = store.cover(chunk, fewer, "m", none)
    assert missing == [] and [r.values["product"] for r in rows] == ["Widget", "Gadget"]


def test_the_generic_table_keeps_every_fact_of_an_entity():
    """The w/o-schema-discovery ablation's entity-attribute-value table: before row
    identities, sample agreement aligned its rows by entity alone and kept one fact per
    entity and chunk, and a committee vote on a value read another attribute's row."""
    from quaderno.methods.docsage.schema import generic_schema
    table = generic_schema().tables[0]
    facts = [{"entity": "Acme", "entity_type": "company", "attribute": a, "value": v,
              "unit": None, "as_of": None}
             for a, v in (("founded", "1874"), ("staff", "2300"), ("city", "Zorn"))]
    agreed = agreement_rows([facts, facts, facts[1:]], table)
    assert [(a.values["attribute"], a.confidence["value"]) for a in agreed] == [
        ("founded", 2 / 3), ("staff", 1.0), ("city", 1.0)]
    vote = tally([facts] * 3, table, facts[1], ["value"])
    assert (vote["value"].value, vote["value"].share) == ("2300", 1.0)


def test_a_committee_fills_what_a_row_lacks_and_votes_single_values_per_entity():
    table = Schema.model_validate({"tables": [{"name": "company", "primary_key": ["name"],
                                               "columns": [
        {"name": "name"}, {"name": "hq"}, {"name": "founded", "type": "INT"},
        {"name": "product", "single_valued": False}]}]}).table("company")
    widget = [{"name": "Acme", "hq": "Paris", "founded": 1990, "product": "Widget"}]
    # a row without its product: the committee fills it, and the key is confirmed
    vote = tally([widget] * 3, table, {"name": "Acme", "hq": "Paris", "product": None},
                 ["hq", "name", "product"])
    assert {c: v.value for c, v in vote.items()} == {"hq": "Paris", "name": "Acme",
                                                     "product": "Widget"}
    # a single-valued cell depends on the entity alone: voters listing another product vote
    vote = tally([widget] * 3, table, {"name": "Acme", "founded": 1999, "product": "Gizmo"},
                 ["founded", "product"])
    assert vote["founded"].value == 1990 and vote["founded"].majority
    assert vote["product"].value is None        # no voter has Acme's Gizmo


def test_the_tuple_store_pairs_parts_row_by_row_of_the_same_value(tmp_path):
    table = Table.model_validate({"name": "company", "primary_key": ["name"], "columns": [
        {"name": "name"}, {"name": "product", "single_valued": False},
        {"name": "price", "type": "INT"}, {"name": "launched", "type": "INT"}]})
    def cut(drop):
        return Table.model_validate({**table.model_dump(), "columns": [
            c.model_dump() for c in table.columns if c.name != drop]})
    store, none = TupleStore(tmp_path), ExtractionSettings(confidence="none")
    chunk = CHUNKS[0]
    store.put(chunk, cut("launched"), "m", none,
              [row(chunk.id, name="Acme", product="Widget", price=10),
               row(chunk.id, name="Acme", product="Gadget", price=20)])
    store.put(chunk, cut("price"), "m", none,           # the other order
              [row(chunk.id, name="Acme", product="Gadget", launched=2015),
               row(chunk.id, name="Acme", product="Widget", launched=2001)])
    rows, missing = store.cover(chunk, table, "m", none)
    assert missing == []
    assert sorted((r.values["product"], r.values["price"], r.values["launched"])
                  for r in rows) == [("Gadget", 20, 2015), ("Widget", 10, 2001)]
