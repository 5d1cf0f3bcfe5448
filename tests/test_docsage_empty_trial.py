"""ASK does not take an empty trial extraction for a schema without problems. On 2Wiki
(``docsage-2wiki-measuring``, "Are both movies, Law Of The Barbary Coast and My Piece Of The
Pie, from the same country?") the 1.5B model drafted ``movies(id, title, country_id)`` and
``countries(id, name)``, extracted nothing from the two film articles, and ASK stopped on
round 1 with "no uncertainty signal"; the answer was "not found"."""

from __future__ import annotations

import asyncio
import json

from docsage_fakes import row, schema_of
from fake_retriever import ChunkListRetriever
from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.ask import SchemaDiscovery
from quaderno.methods.docsage.detect import detect_all, empty_tables
from quaderno.methods.episode import Episode

DRAFT = {"tables": [
    {"name": "movies", "columns": [{"name": "id", "type": "INT"},
                                   {"name": "title", "single_valued": False},
                                   {"name": "country_id", "type": "INT"}],
     "primary_key": ["id"],
     "foreign_keys": [{"column": "country_id", "references_table": "countries",
                       "references_column": "id"}]},
    {"name": "countries", "columns": [{"name": "id", "type": "INT"},
                                      {"name": "name", "single_valued": False}],
     "primary_key": ["id"]}],
    "entity_types": ["movies", "countries"], "required_attributes": ["movies.country_id"],
    "join_path": ["movies", "countries"]}
TEXTS = {"barbary#0": "Law of the Barbary Coast is a 1949 American adventure film.",
         "pie#0": "My Piece of the Pie is a 2011 French comedy film."}
QUESTION = ("Are both movies, Law Of The Barbary Coast and My Piece Of The Pie, from the "
            "same country?")


def test_a_needed_table_with_no_trial_row_is_a_missing_relationship() -> None:
    schema = schema_of(DRAFT)
    found = {s.table: s for s in empty_tables(schema, [], TEXTS)}
    assert set(found) == {"movies", "countries"}
    assert all(s.kind == "missing_relationship" and "no movies row" in found["movies"].detail
               for s in found.values())
    assert found["countries"].chunk_ids == ["barbary#0", "pie#0"]
    # countries is keyed by an id no text states and has its name: re-keyed by it, which
    # makes movies' reference its name; movies by their title, which the model marked
    # multi-valued: a film's title is its name (a job title would be asked about)
    assert found["countries"].fix.model_dump(include={"op", "column"}) == {
        "op": "rekey", "column": "name"}
    assert found["movies"].fix.model_dump(include={"op", "column"}) == {
        "op": "rekey", "column": "title"}
    jobs = schema_of({"tables": [{"name": "jobs", "columns": [
        {"name": "id", "type": "INT"}, {"name": "title", "single_valued": False}],
        "primary_key": ["id"]}]})
    assert empty_tables(jobs, [], TEXTS)[0].fix is None
    # a table with a trial row is not empty; without the probe's texts nothing is known
    assert [s.table for s in empty_tables(schema, [row("movies", "pie#0", title="x")],
                                          TEXTS)] == ["countries"]
    assert empty_tables(schema, [], {}) == []
    # with a movie row but no country: the re-key's signal names the key, so the movie's
    # country_id, which moves with it, is not asked about as an unmatched reference too
    one = detect_all(schema, [row("movies", "pie#0", id=1, title="x", country_id=1)], TEXTS)
    assert [(s.table, s.column) for s in one if s.fix is not None] == [("countries", "id")]
    assert not [s for s in one if s.kind == "alignment_conflict" and s.column == "country_id"]
    assert {s.table for s in detect_all(schema, [], TEXTS, QUESTION)
            if "trial extraction found no" in s.detail} == {"movies", "countries"}


def test_a_schema_naming_no_requirement_counts_every_table() -> None:
    bare = {k: v for k, v in DRAFT.items() if k == "tables"}
    assert {s.table for s in empty_tables(schema_of(bare), [], TEXTS)} == {
        "movies", "countries"}


class Model:
    """Drafts DRAFT; asks one clarification and answers it from the documents; its update
    gives the films a country as the articles write it."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, request) -> str:
        user = request.messages[-1].content
        if user.startswith("Design the smallest"):
            return json.dumps(DRAFT)
        if user.startswith("A schema was built"):
            self.asked.append(user)
            return json.dumps({"questions": ["Which country is each film from?"]})
        if user.startswith("Answer the question from these documents only"):
            return json.dumps({"answered": True, "answer": "American; French", "cited": [1]})
        if user.startswith("Update the relational schema"):
            return json.dumps({"patches": [
                {"op": "add_column", "table": "movies", "column": "country", "type": "TEXT",
                 "description": "the country the film is from, as the article writes it"}]})
        raise AssertionError(f"unexpected prompt {user[:80]!r}")


def test_ask_repairs_then_asks_instead_of_stopping_on_an_empty_trial() -> None:
    chunks = [Chunk(id=c, text=t, kb="w") for c, t in TEXTS.items()]
    model = Model()
    ep = Episode(QUESTION, method="docsage", lm=LM(FakeLLM(respond=model)),
                 retriever=ChunkListRetriever(chunks))
    probe = ChunkListRetriever(chunks).retrieve("", 2)
    seen = []

    async def trial(schema, hits):
        seen.append(schema)
        return []                                   # the model extracts nothing, every time

    schema, log = asyncio.run(SchemaDiscovery(mode="active", max_iters=2).run(
        ep, probe, probe, extract=trial,
        detect=lambda s, r: detect_all(s, r, TEXTS, QUESTION)))
    first, second = log.rounds[0], log.rounds[1]
    # round 1: movies re-keyed by their title, countries by their name (no question
    # spent); round 2, both tables still empty, asks about them
    assert [(p["op"], p["table"], p["column"]) for p in first.patches] == [
        ("rekey", "movies", "title"), ("rekey", "countries", "name")]
    assert seen[1].table("movies").column_names == ["title", "country_name"]
    assert seen[1].table("movies").column("title").single_valued
    assert sorted(s.table for s in second.signals) == ["countries", "movies"]
    assert len(model.asked) == 1 and "no movies row in 2 probe chunk" in model.asked[0]
    assert "key countries by" not in model.asked[0]          # the repaired one is not asked
    assert second.clarifications[0].answered
    assert "country" in schema.table("movies").column_names
    assert log.stop_reason == "max_iters=2 reached"
