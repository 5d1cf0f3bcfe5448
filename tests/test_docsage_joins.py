"""A join path the question needs, repaired by code: the measuring model's Set3 draft had
``city`` and ``league`` with nothing between them, asked the documents what joins them, got
no answer, and its SQL filtered cities on ``country = 'League of ...'``."""

from __future__ import annotations

import asyncio

from docsage_fakes import DraftOnly, row, schema_of
from fake_retriever import ChunkListRetriever
from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.ask import SchemaDiscovery
from quaderno.methods.docsage.detect import detect_all, missing_relationships
from quaderno.methods.docsage.joins import declare, join_fix, named_references, reference_name
from quaderno.methods.docsage.patch import SchemaPatch, apply_patches
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.episode import Episode

# the measuring model's Set3 schema (benchmarks/results/docsage-synth-measuring/
# docsage-rekey-refs-set3)
SET3 = {"tables": [
    {"name": "city", "columns": [{"name": "name"}, {"name": "country"},
                                 {"name": "population", "type": "INT"}],
     "primary_key": ["name"]},
    {"name": "league", "columns": [{"name": "name"}], "primary_key": ["name"]}],
    "required_attributes": ["city.name", "city.population"], "join_path": ["city", "league"]}
TEXTS = {
    "d2": "Liathisgryl (LIAT) is a city of the League of Merounddian Cities. Thubroar serves "
          "as country for the city.",
    "d5": "Gilyx (GILYX) is a city of the League of Merounddian Cities. Tallies of "
          "inhabitants put Gilyx at 3038 thousand.",
    "d9": "The League of Merounddian Cities was founded by its member cities.",
}


CITY_ROWS = [row("city", "d2", name="Liathisgryl", country="Thubroar", population=None),
             row("city", "d5", name="Gilyx", country=None, population=3038000),
             row("league", "d9", name="League of Merounddian Cities")]


def test_the_many_side_gets_a_column_naming_the_other_entity() -> None:
    schema = schema_of(SET3)
    (signal,) = missing_relationships(schema, CITY_ROWS)
    fix = signal.fix
    assert (fix.op, fix.table, fix.column, fix.type) == ("add_column", "city", "league_name",
                                                         "TEXT")
    assert (fix.references_table, fix.references_column) == ("league", "name")
    assert "league.name" in fix.description
    repaired, notes = apply_patches(schema, [fix], reason="test")
    assert notes == []
    city = repaired.table("city")
    assert city.column_names == ["name", "country", "population", "league_name"]
    assert [(f.cols, f.ref_table, f.ref_cols) for f in city.foreign_keys] == [
        (["league_name"], "league", ["name"])]
    assert missing_relationships(repaired, CITY_ROWS) == []   # the tables are joined now


def test_with_more_league_rows_the_league_would_hold_the_reference() -> None:
    rows = [row("league", f"d{i}", name=f"L{i}") for i in range(3)] + CITY_ROWS[:1]
    fix = join_fix(schema_of(SET3), ["city"], ["league"], rows)
    assert (fix.table, fix.column, fix.references_table) == ("league", "city_name", "city")


def test_a_column_named_after_the_key_gets_its_foreign_key_declared() -> None:
    # the Set2 shape after the re-key: revenue names its company by companyname, undeclared
    schema = schema_of({"tables": [
        {"name": "companies", "columns": [{"name": "companyname"}],
         "primary_key": ["companyname"]},
        {"name": "revenue", "columns": [{"name": "companyname"},
                                        {"name": "year", "type": "INT"},
                                        {"name": "amount", "type": "DOUBLE"}],
         "primary_key": ["companyname", "year"]}],
        "join_path": ["companies", "revenue"]})
    (signal,) = missing_relationships(schema)
    assert (signal.fix.op, signal.fix.table, signal.fix.column) == (
        "add_foreign_key", "revenue", "companyname")
    repaired, _ = apply_patches(schema, [signal.fix])
    assert missing_relationships(repaired) == []
    # a column of another type is not that reference: a new one is added instead
    typed = schema_of({"tables": [
        {"name": "companies", "columns": [{"name": "company_id", "type": "INT"}],
         "primary_key": ["company_id"]},
        {"name": "revenue", "columns": [{"name": "company_id"}]}],
        "join_path": ["companies", "revenue"]})
    fix = join_fix(typed, ["companies"], ["revenue"])
    assert (fix.op, fix.table, fix.column, fix.type) == ("add_column", "revenue",
                                                         "company_id_2", "INT")


def test_without_a_single_column_key_there_is_no_repair_and_the_signal_is_asked() -> None:
    schema = schema_of({"tables": [
        {"name": "city", "columns": [{"name": "name"}, {"name": "year", "type": "INT"}],
         "primary_key": ["name", "year"]},
        {"name": "league", "columns": [{"name": "name"}, {"name": "season", "type": "INT"}],
         "primary_key": ["name", "season"]}],
        "join_path": ["city", "league"]})
    (signal,) = missing_relationships(schema)
    assert signal.kind == "missing_relationship" and signal.fix is None


def test_a_table_not_yet_keyed_is_referred_to_by_the_name_column_it_will_be_keyed_by() -> None:
    """resample-docsage-set1: the 1.5B model's draft left both tables keyless; ASK's join
    repair needed a key, which own_key.py gives only after the rounds, so the signal was
    asked, unanswered, and stedrurial_medal stayed unjoined to laureates: the SQL could not
    say "in the Stedrurial Medal"."""
    schema = schema_of({"tables": [
        {"name": "stedrurial_medal", "columns": [{"name": "award_name"},
                                                 {"name": "year", "type": "INT"}]},
        {"name": "laureates", "columns": [{"name": "name"}, {"name": "nationality"},
                                          {"name": "birth_year", "type": "INT"}]}],
        "join_path": ["stedrurial_medal", "laureates"]})
    (signal,) = missing_relationships(schema)
    fix = signal.fix
    assert (fix.op, fix.table, fix.column, fix.references_table, fix.references_column) == (
        "add_column", "stedrurial_medal", "laureate_name", "laureates", "name")
    new, notes = apply_patches(schema, [fix], reason="ask round 1: detector")
    assert notes == [] and new.table("stedrurial_medal").foreign_keys[0].ref_cols == ["name"]
    # a column that names that key already is declared, not added again (review of
    # f41297c: awards got an empty laureate_name_2)
    link = schema_of({"tables": [
        {"name": "awards", "columns": [{"name": "laureate_name"}, {"name": "medal_name"}]},
        {"name": "laureates", "columns": [{"name": "name"}, {"name": "nationality"},
                                          {"name": "birth_year", "type": "INT"}]}],
        "join_path": ["awards", "laureates"]})
    (signal,) = missing_relationships(link)
    assert (signal.fix.op, signal.fix.table, signal.fix.column) == (
        "add_foreign_key", "awards", "laureate_name")


def test_reference_names_do_not_clash() -> None:
    schema = schema_of({"tables": [
        {"name": "leagues", "columns": [{"name": "leaguename"}], "primary_key": ["leaguename"]},
        {"name": "cities", "columns": [{"name": "name"}, {"name": "leaguename", "type": "INT"}],
         "primary_key": ["name"]}]})
    leagues, cities = schema.table("leagues"), schema.table("cities")
    assert reference_name(cities, leagues, "leaguename") == "leaguename_2"
    assert reference_name(leagues, cities, "name") == "city_name"


def test_an_invented_key_is_re_keyed_first_and_the_join_judged_after() -> None:
    schema = schema_of({"tables": [
        {"name": "companies", "columns": [{"name": "companyid", "type": "INT"},
                                          {"name": "companyname"}],
         "primary_key": ["companyid"]},
        {"name": "revenue", "columns": [{"name": "companyid", "type": "INT"},
                                        {"name": "amount", "type": "DOUBLE"}]}],
        "join_path": ["companies", "revenue"]})
    rows = [row("companies", c, companyid=1, companyname=n)
            for c, n in (("c1", "Acme"), ("c2", "Bolt"), ("c3", "Cog"))]
    texts = {"c1": "Acme earns.", "c2": "Bolt earns.", "c3": "Cog earns."}
    found = detect_all(schema, rows, texts)
    join = [s for s in found if s.kind == "missing_relationship"]
    assert join and all(s.fix is None for s in join)
    assert [s.fix.op for s in found if s.fix is not None] == ["rekey"]


def test_ask_adds_the_membership_column_without_asking_and_the_next_trial_fills_it() -> None:
    seen = []

    async def trial(schema, probe):
        seen.append(schema)
        if "league_name" not in schema.table("city").column_names:
            return CITY_ROWS
        return [row("city", c, name=n, population=p, league_name="League of Merounddian Cities")
                for c, n, p in (("d2", "Liathisgryl", 812000), ("d5", "Gilyx", 3038000))
                ] + CITY_ROWS[2:]

    chunks = [Chunk(id=c, text=t, kb="c") for c, t in TEXTS.items()]
    script = DraftOnly(SET3)
    ep = Episode("Which city of the League of Merounddian Cities has the lowest population?",
                 method="docsage", lm=LM(FakeLLM(respond=script)),
                 retriever=ChunkListRetriever(chunks))
    probe = ChunkListRetriever(chunks).retrieve("", 3)
    schema, log = asyncio.run(SchemaDiscovery(mode="active").run(
        ep, probe, probe, extract=trial, detect=lambda s, r: detect_all(s, r, TEXTS)))
    first = log.rounds[0]
    assert [(p["op"], p["table"], p["column"], p["by"]) for p in first.patches] == [
        ("add_column", "city", "league_name", "detector")]
    assert first.clarifications == []
    assert "league_name" in seen[1].table("city").column_names
    assert [(f.cols, f.ref_table) for f in schema.table("city").foreign_keys] == [
        (["league_name"], "league")]
    assert log.stop_reason == "no uncertainty signal"
    assert len(script.prompts) == 1                  # the draft, and nothing asked


# the measuring model's second Set3 draft (docsage-units-set3): a link table, ids everywhere
LINKED = {"tables": [
    {"name": "league", "columns": [{"name": "id", "type": "INT"}, {"name": "name"}],
     "primary_key": ["id"]},
    {"name": "city", "columns": [{"name": "id", "type": "INT"}, {"name": "name"},
                                 {"name": "population", "type": "INT"}],
     "primary_key": ["id"]},
    {"name": "league_city", "columns": [{"name": "id", "type": "INT"},
                                        {"name": "league_id", "type": "INT"},
                                        {"name": "city_id", "type": "INT"}],
     "primary_key": ["id"],
     "foreign_keys": [{"column": "league_id", "references_table": "league",
                       "references_column": "id"},
                      {"column": "city_id", "references_table": "city",
                       "references_column": "id"}]}],
    "join_path": ["league", "league_city", "city"]}
LINK_TEXTS = {"m1": "Gilyx and Mergras are cities of the League of Merounddian Cities.",
              "m2": "Pakrun is a city of the League of Merounddian Cities."}


def test_a_link_table_is_re_keyed_by_both_references_not_one() -> None:
    from quaderno.methods.docsage.invented import invented_keys
    schema = schema_of(LINKED)
    rows = [row("league_city", "m1", id=1, league_id=1, city_id=1),
            row("league_city", "m1", id=2, league_id=1, city_id=2),
            row("league_city", "m2", id=1, league_id=1, city_id=1)]
    (signal,) = [s for s in invented_keys(schema, rows, LINK_TEXTS) if s.table == "league_city"]
    assert (signal.fix.column, signal.fix.key_with) == ("league_id", ["city_id"])
    assert "key league_city by (league_id, city_id)" in signal.detail
    linked, notes = apply_patches(schema, [signal.fix])
    assert notes == [] and linked.table("league_city").primary_key == ["league_id", "city_id"]
    # the entities' own re-keys by name follow into the composite key
    named, notes = apply_patches(linked, [
        SchemaPatch(op="rekey", table="league", column="name"),
        SchemaPatch(op="rekey", table="city", column="name")])
    assert notes == []
    assert named.table("league_city").primary_key == ["league_name", "city_name"]


def test_a_composite_rekey_names_columns_of_the_table() -> None:
    schema = schema_of(LINKED)
    bad = SchemaPatch(op="rekey", table="league_city", column="league_id", key_with=["nope"])
    same, notes = apply_patches(schema, [bad])
    assert same is schema and "not all other columns" in notes[0]


def test_named_references_are_every_undeclared_key_a_name_implies() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "laureates", "columns": [{"name": "name"}], "primary_key": ["name"]},
        {"name": "medal", "columns": [{"name": "laureates_name"},
                                      {"name": "year", "type": "INT"}]},
        # declared already: not again
        {"name": "prize", "columns": [{"name": "laureates_name"}],
         "foreign_keys": [{"cols": ["laureates_name"], "ref_table": "laureates",
                           "ref_cols": ["name"]}]},
        # named after the key but of another type: not a reference
        {"name": "grant", "columns": [{"name": "laureates_name", "type": "INT"}]},
        # the Set1 shape: the table's name with the key's name
        {"name": "stedrurial_medal", "columns": [{"name": "laureate_name"}],
         "primary_key": ["laureate_name"]},
        {"name": "stedrurial_medal_award", "columns": [
            {"name": "stedrurial_medal_laureate_name"}, {"name": "birth_year", "type": "INT"}]}]})
    found = [(p.table, p.column, p.references_table, p.references_column)
             for p in named_references(schema)]
    assert found == [("medal", "laureates_name", "laureates", "name"),
                     # its key names a laureate too: one medal row per laureate
                     ("stedrurial_medal", "laureate_name", "laureates", "name"),
                     ("stedrurial_medal_award", "stedrurial_medal_laureate_name",
                      "stedrurial_medal", "laureate_name")]


def test_two_tables_keyed_by_one_id_do_not_point_at_each_other() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "columns": [{"name": "companyid", "type": "INT"}],
         "primary_key": ["companyid"]},
        {"name": "company", "columns": [{"name": "companyid", "type": "INT"}],
         "primary_key": ["companyid"]}]})
    assert [(p.table, p.references_table) for p in named_references(schema)] == [
        ("companies", "company")]


def test_declaring_keeps_what_the_drafts_limits_would_cut() -> None:
    """ASK's rounds may grow a schema past the draft's caps (4 tables, 12 columns); the
    declared keys are added as they are, cutting nothing."""
    wide = [{"name": f"c{i}", "type": "INT"} for i in range(12)] + [{"name": "annual_revenue"}]
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "columns": [{"name": "companyid", "type": "INT"}, *wide],
         "primary_key": ["companyid"]},
        *({"name": f"t{i}", "columns": [{"name": "x"}]} for i in range(3)),
        {"name": "ceos", "columns": [{"name": "name"}, {"name": "companyid", "type": "INT"}]}],
        "version": 4})
    patches = named_references(schema)
    assert [(p.table, p.column) for p in patches] == [("ceos", "companyid")]
    new = declare(schema, patches, "test")
    assert [t.name for t in new.tables] == [t.name for t in schema.tables]
    assert new.table("companies").column_names == schema.table("companies").column_names
    assert new.table("ceos").foreign_keys[0].ref_table == "companies"
    assert new.version == 5 and new.history[-1]["reason"] == "test"
    # the draft route cannot give this schema (why declare() does not take it)
    drafted, _ = apply_patches(schema, patches)
    assert not (len(drafted.tables) == 5 and drafted.table("ceos").foreign_keys
                and len(drafted.table("companies").columns) == 14)
