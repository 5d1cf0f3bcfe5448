"""Invented keys: a schema keyed by surrogate ids no document states (what the 1.5B measuring
model drew on Set2 and Set3) is found on trial rows by code, and re-keyed by the name the
chunks do state, references following, without a clarification question."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from fake_retriever import ChunkListRetriever
from quaderno.corpus.chunk import Chunk
from quaderno.errors import SQLRefusedError
from quaderno.index.hits import Hit
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.ask import SchemaDiscovery
from quaderno.methods.docsage.detect import detect_all, invented_keys, missing_relationships
from quaderno.methods.docsage.draft import SchemaDraft, to_schema
from quaderno.methods.docsage.patch import SchemaPatch, apply_patches
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.sqlgate import check_sql
from quaderno.methods.episode import Episode
from quaderno.methods.registry import make_method

# the measuring model's Set2 schema (benchmarks/results/docsage-synth-measuring/docsage-set2):
# ids everywhere, foreign keys only in the descriptions
SET2 = {"tables": [
    {"name": "commissions", "columns": [{"name": "commissionid", "type": "INT"},
                                        {"name": "commissionname"}],
     "primary_key": ["commissionid"]},
    {"name": "companies", "columns": [{"name": "companyid", "type": "INT"},
                                      {"name": "companyname"},
                                      {"name": "commissionid", "type": "INT"}],
     "primary_key": ["companyid"]},
    {"name": "revenue", "columns": [{"name": "revenueid", "type": "INT"},
                                    {"name": "companyid", "type": "INT"},
                                    {"name": "year", "type": "INT"},
                                    {"name": "revenueamount", "type": "DOUBLE"}],
     "primary_key": ["revenueid"]}],
    "constraints": [{"kind": "functional_dependency", "table": "revenue",
                     "columns": ["companyid", "year"]}],
    "required_attributes": ["revenue.revenueamount", "companies.companyid"],
    "join_path": ["companies", "revenue"]}

TEXTS = {
    "c1": "Viathpox Systems, regulated by the Drournlia Markets Commission, reported annual "
          "revenue of 43,789.5 million dollars in 2018.",
    "c2": "Bryskound Holdings (Drournlia Markets Commission) had revenue of 46,693.9 million "
          "dollars, 1 of the highest in the sector.",
    "c3": "Gouqin Energy answers to the Ostmark Trade Commission; revenue 32,950.7 million.",
}


def set2():
    return to_schema(SchemaDraft.model_validate(SET2))[0]


def row(table, chunk, **values):
    return Row(table=table, values=values, provenance=Provenance(chunk_id=chunk))


def company_rows():
    # what the model extracted: every chunk's company numbered 1, its commission 1 or 2
    return [row("companies", "c1", companyid=1, companyname="Viathpox Systems", commissionid=1),
            row("companies", "c2", companyid=1, companyname="Bryskound Holdings",
                commissionid=1),
            row("companies", "c3", companyid=1, companyname="Gouqin Energy", commissionid=2),
            row("revenue", "c1", revenueid=1, companyid=1, year=2018, revenueamount=43789.5),
            row("revenue", "c3", revenueid=1, companyid=1, year=None, revenueamount=32950.7)]


def test_rekey_moves_the_key_to_the_name_and_references_follow():
    fixes = [SchemaPatch(op="rekey", table="commissions", column="commissionname"),
             SchemaPatch(op="rekey", table="companies", column="companyname"),
             SchemaPatch(op="drop_column", table="revenue", column="revenueid")]
    schema, notes = apply_patches(set2(), fixes, reason="test")
    assert notes == []
    commissions, companies, revenue = (schema.table(n) for n in
                                       ("commissions", "companies", "revenue"))
    assert commissions.column_names == ["commissionname"]
    assert commissions.primary_key == ["commissionname"]
    assert companies.column_names == ["companyname", "commissionname"]
    assert companies.primary_key == ["companyname"]
    assert [(f.cols, f.ref_table, f.ref_cols) for f in companies.foreign_keys] == [
        (["commissionname"], "commissions", ["commissionname"])]
    assert companies.column("commissionname").type == "TEXT"  # was the INT id
    assert revenue.column_names == ["companyname", "year", "revenueamount"]
    assert [(f.cols, f.ref_table) for f in revenue.foreign_keys] == [(["companyname"],
                                                                      "companies")]
    # the functional dependency and the required attribute follow the rename
    assert [(c.lhs, c.rhs) for c in schema.constraints if c.kind == "fd"] == [
        (["companyname"], "year")]
    assert "companies.companyid" not in schema.requirements.attributes
    # the join the question needs exists now, and the model's natural SQL passes the gate
    assert missing_relationships(schema) == []
    check_sql("SELECT max(r.revenueamount) FROM revenue r JOIN companies c ON "
              "r.companyname = c.companyname WHERE c.commissionname = 'Drournlia Markets "
              "Commission'", schema)
    with pytest.raises(SQLRefusedError):
        check_sql("SELECT companyid FROM companies", schema)


def test_rekey_references_by_declared_key_or_by_name_and_never_a_bare_id():
    draft = {"tables": [
        {"name": "cities", "columns": [{"name": "id", "type": "INT"}, {"name": "name"}],
         "primary_key": ["id"]},
        {"name": "leagues", "columns": [{"name": "id", "type": "INT"}, {"name": "league"},
                                        {"name": "city_id", "type": "INT"},
                                        {"name": "host", "type": "INT"}],
         "primary_key": ["id"],
         "foreign_keys": [{"column": "host", "references_table": "cities",
                           "references_column": "id"}]},
        {"name": "teams", "columns": [{"name": "team"}, {"name": "cityid", "type": "INT"},
                                      {"name": "name"}]}]}
    schema, notes = apply_patches(to_schema(SchemaDraft.model_validate(draft))[0],
                                  [SchemaPatch(op="rekey", table="cities", column="name")])
    leagues, teams = schema.table("leagues"), schema.table("teams")
    # city_id is renamed after the key; host (a declared foreign key) would take the same
    # name, which is taken now, so it is dropped and the foreign key sits on the name
    assert leagues.column_names == ["id", "league", "name"]
    assert leagues.primary_key == ["id"]  # the league's own bare id is not a reference
    assert {(tuple(f.cols), f.ref_table, tuple(f.ref_cols)) for f in leagues.foreign_keys} == {
        (("name",), "cities", ("name",))}
    # teams already has a 'name' column: cityid is dropped, the existing column referenced
    assert teams.column_names == ["team", "name"]
    assert [(f.cols, f.ref_table) for f in teams.foreign_keys] == [(["name"], "cities")]
    assert notes == []


@pytest.mark.parametrize(("patch", "note"), [
    (SchemaPatch(op="rekey", table="companies", column="companyid"), "already the key"),
    (SchemaPatch(op="rekey", table="companies", column="ceo"), "no such column"),
])
def test_rekey_refusals_are_notes_and_change_nothing(patch, note):
    schema = set2()
    new, notes = apply_patches(schema, [patch])
    assert new is schema and len(notes) == 1 and note in notes[0]


def test_rekey_refuses_a_multi_valued_column():
    draft = json.loads(json.dumps(SET2))
    draft["tables"][1]["columns"][1]["single_valued"] = False
    schema = to_schema(SchemaDraft.model_validate(draft))[0]
    new, notes = apply_patches(schema, [SchemaPatch(op="rekey", table="companies",
                                                    column="companyname")])
    assert new is schema and "multi-valued" in notes[0]


def test_invented_keys_are_found_and_carry_their_fix():
    signals = {s.table: s for s in invented_keys(set2(), company_rows(), TEXTS)}
    # '1' stands as a word in c2 ("1 of the highest"): one of three rows, still a minority
    assert set(signals) == {"companies", "revenue"}
    companies = signals["companies"]
    assert companies.kind == "alignment_conflict" and companies.column == "companyid"
    assert companies.fix == SchemaPatch(op="rekey", table="companies", column="companyname")
    assert "2 of 3 trial rows" in companies.detail and companies.values == [1]
    # revenue has no name column of its own: its invented key is dropped
    assert signals["revenue"].fix == SchemaPatch(op="drop_column", table="revenue",
                                                 column="revenueid")


def test_a_key_the_chunks_state_is_not_invented():
    schema = to_schema(SchemaDraft.model_validate(
        {"tables": [{"name": "companies", "columns": [{"name": "companyname"},
                                                      {"name": "revenue", "type": "DOUBLE"}],
                     "primary_key": ["companyname"]}]}))[0]
    rows = [row("companies", "c1", companyname="Viathpox Systems", revenue=43789.5),
            row("companies", "c2", companyname="Bryskound Holdings", revenue=46693.9)]
    assert invented_keys(schema, rows, TEXTS) == []
    # nor is one seen in a single row, or in rows whose chunks are unknown
    assert invented_keys(set2(), company_rows()[:1], TEXTS) == []
    assert invented_keys(set2(), company_rows(), {}) == []


def test_detect_all_puts_the_invented_key_before_its_consequences():
    rows = company_rows()
    without = detect_all(set2(), rows)
    # aligned by the invented id, three companies look like one with three names
    assert any(s.kind == "alignment_conflict" and s.table == "companies"
               and s.column == "companyname" for s in without)
    found = detect_all(set2(), rows, TEXTS)
    by_table = [(s.table, s.column) for s in found if s.kind == "alignment_conflict"]
    assert ("companies", "companyid") in by_table
    assert ("companies", "companyname") not in by_table


class Script:
    """A model that drafts SET2 and would answer a clarification; records what it is asked."""

    def __init__(self):
        self.prompts: list[str] = []

    def __call__(self, request):
        user = request.messages[-1].content
        self.prompts.append(user)
        if user.startswith("Design the smallest"):
            return json.dumps(SET2)
        if user.startswith("A schema was built"):
            return json.dumps({"questions": ["Which commission regulates Viathpox?"]})
        if user.startswith("Answer the question from these documents only"):
            return json.dumps({"answered": False, "answer": "UNANSWERED", "cited": []})
        raise AssertionError(f"unexpected prompt {user[:60]!r}")


class Retriever:
    def fingerprint(self) -> str:
        return "all"

    def retrieve(self, query: str, k: int = 5) -> list[Hit]:
        return [Hit(chunk=Chunk(id=c, text=t, kb="c"), score=1.0, rank=i + 1, retriever="all")
                for i, (c, t) in enumerate(TEXTS.items())][:k]

    def retrieve_batch(self, queries, k=5):
        return [self.retrieve(q, k) for q in queries]


def test_ask_rekeys_an_invented_key_without_asking_and_tries_the_new_schema():
    script, schemas = Script(), []

    async def trial(schema, probe):
        schemas.append(schema)
        if schema.version == 0:
            return company_rows()
        # the re-keyed schema: names as keys, nothing invented left to find
        return [row("companies", c, companyname=n, commissionname=m)
                for c, n, m in (("c1", "Viathpox Systems", "Drournlia Markets Commission"),
                                ("c3", "Gouqin Energy", "Ostmark Trade Commission"))]

    def detect(schema, rows):
        return detect_all(schema, rows, TEXTS)
    ep = Episode("What is the highest annual revenue among the companies of the Drournlia "
                 "Markets Commission?", method="docsage", lm=LM(FakeLLM(respond=script)),
                 retriever=Retriever())
    probe = Retriever().retrieve("", 3)
    schema, log = asyncio.run(SchemaDiscovery(mode="active").run(
        ep, probe, probe, extract=trial, detect=detect))
    first = log.rounds[0]
    assert [p["op"] for p in first.patches] == ["rekey", "drop_column"]
    assert all(p["by"] == "detector" for p in first.patches)
    # the invented keys were not turned into questions for the documents
    assert all("companyid" not in p for p in script.prompts if p.startswith("A schema was"))
    assert schemas[1].table("companies").primary_key == ["companyname"]
    assert schema.table("revenue").column_names == ["companyname", "year", "revenueamount"]
    assert schema.version == 1 and schema.history[-1]["reason"] == "ask round 1: detector"
    assert any("repaired by the detector" in f for f in ep.trace.fallbacks)
    assert len(log.rounds) == 2


UNIS = [Chunk(id=f"{d}#0", text=t, kb="unis", title=d) for d, t in (
    ("varn", "Varnholt University was founded in 1874."),
    ("ostr", "Ostrel College was established in 1921."),
    ("quel", "Quellmar Institute, founded 1902, is the third."))]
FOUNDED = re.compile(r"([A-Z]\w+ (?:University|College|Institute))\D*?(\d{4})")


class SurrogateModel:
    """Draws an ``id`` key no document states and numbers every chunk's row 1; reads the
    names and years really from the text it is shown."""

    def __call__(self, request):
        user = request.messages[-1].content
        if user.startswith("Design the smallest"):
            return json.dumps({"tables": [{"name": "institution", "columns": [
                {"name": "id", "type": "INT"}, {"name": "name"},
                {"name": "founded", "type": "INT"}], "primary_key": ["id"]}]})
        if user.startswith("Extract into the tables below"):
            text = user.split('"""')[1]
            with_id = "id INT" in user.split('"""')[0]
            return json.dumps({"institution": [
                {**({"id": 1} if with_id else {}), "name": m[1], "founded": int(m[2])}
                for m in FOUNDED.finditer(text)]})
        if user.startswith("A schema was built"):
            return json.dumps({"questions": ["Which institution is number 1?"]})
        if user.startswith("Answer the question from these documents only"):
            return json.dumps({"answered": False, "answer": "UNANSWERED", "cited": []})
        if user.startswith("Write one DuckDB SELECT"):
            return json.dumps({"sql": "SELECT name, founded FROM institution "
                                      "ORDER BY founded LIMIT 1"})
        if user.startswith("Answer the question from the query result"):
            first = re.search(r"\[1\] \"([^\"]+)\"", user)
            return json.dumps({"answer": first[1] if first else "not found",
                               "cited_rows": [1] if first else []})
        raise AssertionError(f"unexpected prompt {user[:80]!r}")


def test_docsage_rekeys_an_invented_id_and_answers_from_the_names(tmp_path):
    method = make_method("docsage", LM(FakeLLM(respond=SurrogateModel())),
                         ChunkListRetriever(UNIS), {"store_dir": str(tmp_path / "store")})
    a = asyncio.run(method.answer("Which institution is the oldest?"))
    d = a.details
    assert d.db_schema.table("institution").primary_key == ["name"]
    assert d.db_schema.table("institution").column_names == ["name", "founded"]
    assert [p["op"] for p in d.ask.rounds[0].patches] == ["rekey"]
    # aligned by id 1, the three institutions would have been one row
    assert {r["name"] for r in d.tables["institution"]} == {
        "Varnholt University", "Ostrel College", "Quellmar Institute"}
    assert a.answer == "Varnholt University"
