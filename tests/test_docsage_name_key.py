"""A table keyed by an invented id that names nothing gains its entity's name as its key.

On Set1's Statistics question ("average birth year of the laureates in the Stedrurial Medal
whose nationality is Kraxryndia", ``docsage-initials-set1``) the 1.5B measuring model drafted
``stedrurial_medal(laureate_id, award_name, year, nationality)``, numbered every chunk's
laureate 1, and gave no column for the laureate's name. The detector found the invented key
but had nothing to re-key by, so it asked "What are the different values of laureate_id?",
which no document answers; the four laureates stayed one row of four years and three
nationalities, and the answer was "not found"."""

from __future__ import annotations

import asyncio
import json

from docsage_fakes import row, schema_of
from fake_retriever import ChunkListRetriever
from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.ask import SchemaDiscovery
from quaderno.methods.docsage.detect import detect_all
from quaderno.methods.docsage.invented import invented_keys
from quaderno.methods.docsage.patch import apply_patches
from quaderno.methods.docsage.rekey import entity_of_key, name_to_add
from quaderno.methods.docsage.sqlgate import check_sql
from quaderno.methods.episode import Episode

# the run's draft, its two medal tables (the others repeat laureate_id in composite keys)
DRAFT = {"tables": [
    {"name": "stedrurial_medal", "columns": [
        {"name": "laureate_id", "type": "INT"}, {"name": "award_name"},
        {"name": "year", "type": "INT"}, {"name": "nationality"}],
     "primary_key": ["laureate_id"]},
    {"name": "stedrurial_medal_award_laureate_nationality", "columns": [
        {"name": "laureate_id", "type": "INT"}, {"name": "nationality"},
        {"name": "stedrurial_medal_laureate_id", "type": "INT"}],
     "primary_key": ["laureate_id", "nationality"],
     "foreign_keys": [{"column": "stedrurial_medal_laureate_id",
                       "references_table": "stedrurial_medal",
                       "references_column": "laureate_id"}]}],
    "entity_types": ["Stedrurial_Medal"], "join_path": ["stedrurial_medal"]}
# the collection's chunks (award-set1-s0), shortened
TEXTS = {
    "d02": "Skoustil Kelskyrn (S. Kelskyrn) is a laureate of the Stedrurial Medal. She "
           "received the Stedrurial Medal in 1990. As for nationality, S. Kelskyrn is "
           "recorded under Pouthpiund.",
    "d11": "Rialvhyth Stirnbrysbra (R. Stirnbrysbra) is a laureate of the Stedrurial Medal. "
           "R. Stirnbrysbra holds citizenship of Zesbiarynora. She became a member of the "
           "Stedrurial Medal in 2000.",
    "d18": "Zouzand Grialforn (Z. Grialforn) is a laureate of the Stedrurial Medal. Observers "
           "note that Zouzand Grialforn is a national of Kraxryndia. Born in 1964, Dr. "
           "Grialforn became a member of the Stedrurial Medal in 2004."}
QUESTION = ("What is the average birth year of the laureates in the Stedrurial Medal whose "
            "nationality is Kraxryndia?")
NATIONALITY = {"d02": "Pouthpiund", "d11": "Zesbiarynora", "d18": "Kraxryndia"}
YEAR = {"d02": 1990, "d11": 2000, "d18": 2004}


def numbered_rows():
    """What the model extracted: every chunk's laureate numbered 1."""
    return [row("stedrurial_medal", c, laureate_id=1, award_name="Stedrurial Medal",
                year=YEAR[c], nationality=NATIONALITY[c]) for c in TEXTS]


def test_the_entity_a_key_numbers_names_the_column_added():
    assert entity_of_key("stedrurial_medal", "laureate_id") == "laureate"
    assert entity_of_key("stedrurial_medal", "laureateid") == "laureate"
    assert entity_of_key("companies", "id") == "company"
    assert entity_of_key("companies", "companyid") == "company"
    assert entity_of_key("departments", "dept_id") == "department"   # a short form
    assert entity_of_key("departments", "manager_id") == "manager"
    assert name_to_add("cities", "city_id") == "city_name"
    # a whole word of the table's name is that word, not the table's entity
    assert entity_of_key("player_stats", "player_id") == "player"
    assert entity_of_key("company_financials", "company_id") == "company"
    assert entity_of_key("laureate_awards", "laureate_id") == "laureate"
    # a one- or two-letter id numbers the table's own entity
    assert entity_of_key("laureates", "p_id") == "laureate"
    assert name_to_add("people", "id") == "person_name"
    assert name_to_add("addresses", "id") == "address_name"


def test_a_table_of_facts_about_named_entities_gains_no_name():
    # the award rows differ by laureate: keying them by an added award_name (one medal in
    # every row) would merge the laureates; asked about instead
    draft = {"tables": [{"name": "awards", "columns": [
        {"name": "award_id", "type": "INT"}, {"name": "laureate_name"},
        {"name": "year", "type": "INT"}], "primary_key": ["award_id"]}]}
    names = {"d02": "Skoustil Kelskyrn", "d11": "Rialvhyth Stirnbrysbra",
             "d18": "Zouzand Grialforn"}
    rows = [row("awards", c, award_id=1, laureate_name=names[c], year=YEAR[c]) for c in TEXTS]
    [signal] = invented_keys(schema_of(draft), rows, TEXTS)
    assert signal.fix is None
    # a person's full name is the name: the table is keyed by it, not given another
    draft["tables"][0] = {"name": "laureates", "columns": [
        {"name": "laureate_id", "type": "INT"}, {"name": "full_name"},
        {"name": "year", "type": "INT"}], "primary_key": ["laureate_id"]}
    rows = [row("laureates", c, laureate_id=1, full_name=names[c], year=YEAR[c])
            for c in TEXTS]
    [signal] = invented_keys(schema_of(draft), rows, TEXTS)
    assert signal.fix.column == "full_name"


def test_an_invented_key_naming_nothing_is_replaced_by_the_name_the_chunks_state():
    schema = schema_of(DRAFT)
    [signal] = invented_keys(schema, numbered_rows(), TEXTS)
    assert (signal.table, signal.column, signal.fix.op, signal.fix.column) == (
        "stedrurial_medal", "laureate_id", "rekey", "laureate_name")
    assert "no column names the laureate" in signal.detail
    assert signal.fix.description == ("the name of the laureate the row is about, as the "
                                      "documents write it")
    new, notes = apply_patches(schema, [signal.fix])
    medal = new.table("stedrurial_medal")
    assert notes == [] and medal.primary_key == ["laureate_name"]
    assert medal.column_names == ["laureate_name", "award_name", "year", "nationality"]
    assert medal.column("laureate_name").description == signal.fix.description
    # the reference follows, holding the name now
    link = new.table("stedrurial_medal_award_laureate_nationality")
    assert "stedrurial_medal_laureate_name" in link.column_names
    assert link.column("stedrurial_medal_laureate_name").type == "TEXT"
    check_sql("SELECT laureate_name FROM stedrurial_medal WHERE nationality = 'Kraxryndia'",
              new)
    # the one-row-of-three-nationalities conflict was the invented key's consequence
    found = detect_all(schema, numbered_rows(), TEXTS)
    assert [(s.table, s.column) for s in found if s.kind == "alignment_conflict"] == [
        ("stedrurial_medal", "laureate_id")]


class Model:
    """Drafts DRAFT; any other prompt fails the test: the repair is made by code."""

    def __call__(self, request) -> str:
        user = request.messages[-1].content
        if user.startswith("Design the smallest"):
            return json.dumps(DRAFT)
        raise AssertionError(f"unexpected prompt {user[:80]!r}")


def test_ask_gives_the_table_a_name_instead_of_asking_for_ids():
    chunks = [Chunk(id=c, text=t, kb="award") for c, t in TEXTS.items()]
    ep = Episode(QUESTION, method="docsage", lm=LM(FakeLLM(respond=Model())),
                 retriever=ChunkListRetriever(chunks))
    probe = ChunkListRetriever(chunks).retrieve("", 3)
    seen = []

    async def trial(schema, hits):
        seen.append(schema)
        if schema.version == 0:
            return numbered_rows()
        # the re-keyed schema: each laureate is a row of their own, by the name the chunk
        # states
        names = {"d02": "Skoustil Kelskyrn", "d11": "Rialvhyth Stirnbrysbra",
                 "d18": "Zouzand Grialforn"}
        return [row("stedrurial_medal", c, laureate_name=names[c], award_name="Stedrurial "
                    "Medal", year=YEAR[c], nationality=NATIONALITY[c]) for c in TEXTS]

    schema, log = asyncio.run(SchemaDiscovery(mode="active", max_iters=2).run(
        ep, probe, probe, extract=trial, detect=lambda s, r: detect_all(s, r, TEXTS)))
    first = log.rounds[0]
    assert [(p["op"], p["table"], p["column"], p["by"]) for p in first.patches] == [
        ("rekey", "stedrurial_medal", "laureate_name", "detector")]
    assert first.clarifications == []
    assert seen[1].table("stedrurial_medal").primary_key == ["laureate_name"]
    # the second trial aligns three laureates: no conflict and no invented key is left
    assert log.rounds[1].signals == [] and log.rounds[1].repairs == []
    assert schema.table("stedrurial_medal").primary_key == ["laureate_name"]


def test_plurals_in_ies_and_a_works_title():
    from quaderno.methods.docsage.rekey import mislabeled_names, singular
    assert [singular(w) for w in ("cities", "companies", "movies", "tv_series", "species",
                                  "leagues", "film_cookies", "top movies", "tv series",
                                  "news", "addresses", "people", "class", "bus")] == [
        "city", "company", "movie", "tv_series", "species", "league", "film_cookie",
        "top movie", "tv series", "news", "address", "person", "class", "bus"]
    # a film's or book's title is its name: marked multi-valued, it is mislabeled; a job's
    # title is not, nor that of a film's crew member or a paper's author
    assert "title" in mislabeled_names("movies") and "title" in mislabeled_names("books")
    assert "title" in mislabeled_names("film_releases")
    for table in ("employees", "film_crew", "paper_authors", "employee_work_history",
                  "game_players"):
        assert "title" not in mislabeled_names(table), table
    assert "movie_title" in mislabeled_names("movies")
