"""DocSage CLEAR Level B: each constraint catches its planted violation and passes clean data;
alias merging before FD/FK; ASK's uncertainty helpers fire on crafted rows, stay silent on
clean ones."""

from __future__ import annotations

import asyncio
import json

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.aliases import alias_map, canonicalize, domains, merge_entities
from quaderno.methods.docsage.anomalies import (alignment_conflicts, fk_matches, null_rates,
                                                value_anomalies)
from quaderno.methods.docsage.clear import ClearConfig, run_clear
from quaderno.methods.docsage.constraints import check, staged_order
from quaderno.methods.docsage.normalize import normalize_entity
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.spellings import column_word, same_case

SCHEMA = Schema.model_validate({
    "tables": [
        {"name": "city", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "country"}]},
        {"name": "company", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "founded", "type": "INT"},
                     {"name": "dissolved", "type": "INT"},
                     {"name": "staff", "type": "INT", "description": "number of employees"},
                     {"name": "product", "single_valued": False},
                     {"name": "city"}],
         "foreign_keys": [{"cols": ["city"], "ref_table": "city", "ref_cols": ["name"]}]},
        {"name": "office", "columns": [{"name": "company"}, {"name": "town"},
                                       {"name": "region"}]},
    ],
    "constraints": [
        {"kind": "temporal", "table": "company", "before": "founded", "after": "dissolved",
         "strict": True},
        {"kind": "range", "table": "company", "column": "staff", "low": 0, "high": 1000000},
        {"kind": "fd", "table": "office", "lhs": ["town"], "rhs": "region"},
    ]})


def row(table: str, chunk: str = "c#0", **values) -> Row:
    return Row(table=table, values=values, provenance=Provenance(chunk_id=chunk))


def clean_rows() -> list[Row]:
    return [row("city", name="Zorn", country="Vel"),
            row("city", name="Pax", country="Vel"),
            row("company", name="Acme", founded=1874, dissolved=1990, staff=2300,
                product="toys", city="Zorn"),
            row("company", name="Bolt", founded=1901, dissolved=None, staff=40,
                product="nuts", city="Pax"),
            row("office", company="Acme", town="Zorn", region="North"),
            row("office", company="Bolt", town="Zorn", region="North")]


def kinds(rows: list[Row]) -> list[str]:
    return sorted(v.kind for v in check(SCHEMA, rows).violations)


def test_clean_data_passes_every_constraint() -> None:
    assert kinds(clean_rows()) == []


def test_functional_dependency_violation_is_caught() -> None:
    rows = clean_rows() + [row("office", company="Cog", town="zorn ", region="South")]
    result = check(SCHEMA, rows)
    assert [v.kind for v in result.violations] == ["fd"]
    v = result.violations[0]
    assert v.columns == ["town", "region"] and sorted(v.values) == ["North", "North", "South"]
    assert {result.by_tid()[t].values["company"] for t in v.tids} == {"Acme", "Bolt", "Cog"}


def test_key_implies_dependencies_of_single_valued_columns() -> None:
    rows = clean_rows() + [row("company", chunk="d9#0", name="Acme", founded=1876,
                               product="games")]
    result = check(SCHEMA, rows)
    fd = [v for v in result.violations if v.kind == "fd"]
    assert len(fd) == 1 and fd[0].columns == ["name", "founded"]
    assert sorted(fd[0].values) == [1874, 1876]
    # product is not single-valued: two products for Acme are no FD violation
    assert not any(v.columns[-1] == "product" for v in fd)
    # nor a duplicate key: a table with a multi-valued column is unique on (name, product),
    # so only the implied dependency sees the second founding year
    assert check(SCHEMA, rows, implied=False).counts() == {}


def test_temporal_order_violation_is_caught() -> None:
    rows = clean_rows()
    rows[3] = row("company", name="Bolt", founded=1901, dissolved=1901, city="Pax")
    result = check(SCHEMA, rows)
    assert [v.kind for v in result.violations] == ["temporal"]
    assert result.violations[0].values == [1901, 1901]   # strict: equal years break it


def test_numeric_range_violation_is_caught_on_both_sides() -> None:
    rows = clean_rows()
    rows[2] = row("company", name="Acme", staff=-5, city="Zorn")
    rows[3] = row("company", name="Bolt", staff=50_000_000, city="Pax")
    result = check(SCHEMA, rows)
    assert [v.kind for v in result.violations] == ["range", "range"]
    assert sorted(x for v in result.violations for x in v.values) == [-5, 50_000_000]


def test_foreign_key_violation_is_caught_by_anti_join() -> None:
    rows = clean_rows() + [row("company", name="Dyne", city="Nowhere")]
    result = check(SCHEMA, rows)
    assert [v.kind for v in result.violations] == ["fk"]
    assert result.violations[0].values == ["Nowhere"]
    assert result.by_tid()[result.violations[0].tids[0]].values["name"] == "Dyne"


def test_duplicate_key_is_caught() -> None:
    # company has a multi-valued column (product): its rows are unique on (name, product)
    rows = clean_rows() + [row("company", name="Acme", product="toys")]
    result = check(SCHEMA, rows)
    assert [v.kind for v in result.violations] == ["unique"]
    assert len(result.violations[0].tids) == 2
    assert result.violations[0].columns == ["name", "product"]
    assert kinds(clean_rows() + [row("company", name="Acme", product="games")]) == []


def test_values_never_enter_sql_text() -> None:
    hostile = "x'); DROP TABLE company; --"
    rows = clean_rows() + [row("city", name=hostile, country="'; SELECT 1; --")]
    assert kinds(rows) == []


def test_tids_map_back_to_the_rows_checked() -> None:
    rows = clean_rows()[::-1]
    result = check(SCHEMA, rows)
    for tid, i in result.index_of_tid.items():
        assert result.by_tid()[tid].values == rows[i].values
    assert sorted(staged_order(SCHEMA, rows)) == list(range(len(rows)))


# -- aliases ------------------------------------------------------------------------------------
def test_normalize_entity_folds_suffixes_case_and_university_of() -> None:
    assert normalize_entity("ACME, Inc.") == normalize_entity("Acme Inc") == "acme"
    assert normalize_entity("The University of Xandria") == "xandria university"
    assert normalize_entity("Xandria University") == "xandria university"
    assert normalize_entity("Société Générale S.A.") == "societe generale"
    assert normalize_entity("None") == ""
    assert normalize_entity("XU", {"xu": "xandria university"}) == "xandria university"


def test_acronym_joins_its_only_expansion() -> None:
    amap = alias_map(["Xandria University", "XU", "Pax Institute"])
    assert amap["xu"] == "xandria university"
    assert alias_map(["Xandria University", "Xeno Union", "XU"])["xu"] == "xu"   # ambiguous
    assert alias_map(["XU", "Xandria University"], acronyms=False)["xu"] == "xu"
    # the small words of a name are not part of its initials
    assert alias_map(["Kelvo and Varn Trading", "KVT"])["kvt"] == "kelvo and varn trading"
    assert alias_map(["Kelvo and Varn Trading", "KAVT"])["kavt"] == "kavt"
    # initials in any script: "É. Zola" is Émile Zola; "e. zola" is no dotted initial
    assert alias_map(["É. Zola", "Émile Zola"])["e zola"] == "emile zola"
    assert alias_map(["e. zola", "Émile Zola"])["e zola"] == "e zola"
    assert alias_map(["J. R. tolkien", "John Ronald tolkien"])["j r tolkien"] == \
        "john ronald tolkien"


def test_a_short_form_joins_its_only_longer_name() -> None:
    amap = alias_map(["University of Drusnuven", "Drusnuven Co.", "Pax College"])
    assert amap["drusnuven"] == "drusnuven university"
    two = alias_map(["Gyrvhae College", "Gyrvhae Institute", "Gyrvhae"])
    assert two["gyrvhae"] == "gyrvhae"                  # two candidates: no merge
    assert alias_map(["University", "Pax University"])["university"] == "university"


def test_a_name_with_initials_joins_the_only_name_spelling_them_out() -> None:
    # as the measuring model extracted the Set1 laureates: "S. Vhyrnbraex" from a chunk
    # about the medal, "Systhou Vhyrnbraex" from the laureate's profile
    amap = alias_map(["Systhou Vhyrnbraex", "S. Vhyrnbraex", "T. Brultiathgus",
                      "Touslian Brultiathgus", "J.R. Tolkien", "John Ronald Tolkien"])
    assert amap["s vhyrnbraex"] == "systhou vhyrnbraex"
    assert amap["t brultiathgus"] == "touslian brultiathgus"
    assert amap["jr tolkien"] == "john ronald tolkien"
    # a capital letter without a dot is no initial: a league is not a person
    assert alias_map(["K League", "Kent League"])["k league"] == "k league"
    # two laureates with the initial and the surname: no guess
    two = alias_map(["Systhou Vhyrnbraex", "Sella Vhyrnbraex", "S. Vhyrnbraex"])
    assert two["s vhyrnbraex"] == "s vhyrnbraex"
    # another initial, another surname, or a given name that is not spelled out: no merge
    assert alias_map(["Systhou Vhyrnbraex", "T. Vhyrnbraex"])["t vhyrnbraex"] == "t vhyrnbraex"
    assert alias_map(["Systhou Vhyrnbraex", "S. Brultiathgus"])["s brultiathgus"] == \
        "s brultiathgus"
    assert alias_map(["Systhou Vhyrnbraex", "S. Vhyrnbraex"], acronyms=False)[
        "s vhyrnbraex"] == "s vhyrnbraex"


def test_initials_merge_a_laureates_rows_and_fill_the_missing_cell() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "laureates", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "nationality"},
                     {"name": "birth_year", "type": "INT"}]}]})
    rows = [row("laureates", "d07#0", name="Systhou Vhyrnbraex", nationality="Kraxryndia",
                birth_year=None),
            row("laureates", "d02#0", name="S. Vhyrnbraex", nationality=None, birth_year=1970)]
    canon, groups = canonicalize(schema, rows)
    assert [(g.canonical, g.spellings) for g in groups] == [
        ("Systhou Vhyrnbraex", ["S. Vhyrnbraex", "Systhou Vhyrnbraex"])]
    merged = merge_entities(schema, canon)
    assert [r.values for r in merged] == [
        {"name": "Systhou Vhyrnbraex", "nationality": "Kraxryndia", "birth_year": 1970}]
    filled = [c for c in merged[0].provenance.corrections if c.column == "birth_year"]
    assert [(c.new, c.evidence_chunk) for c in filled] == [(1970, "d02#0")]


PRIZES = Schema.model_validate({"tables": [
    {"name": "laureate", "primary_key": ["laureate_id", "award"],
     "columns": [{"name": "laureate_id", "type": "INT"}, {"name": "award"},
                 {"name": "name"}, {"name": "institution"}, {"name": "grant", "type": "INT"}]}]})
PRIZE_TEXTS = {"a#0": "Nendzu Rixtox won the Stedrurial Medal; her grant was 500.",
               "b#0": "A Stedrurial Medal went to a scholar of Xandria University.",
               "c#0": "Rixtox, N. works at Xandria University.",
               "d#0": "Laureate 7 of the Stedrurial Medal is Gryrnstu Pougryrn.",
               "e#0": "The Stedrurial Medal's laureate 7 works at Olvane College."}


def test_rows_under_an_id_no_chunk_states_merge_only_under_one_name() -> None:
    """The measuring model numbered every Set1 laureate 1: a row without a name then joined
    the first laureate and gave her another's institution. An id neither row's chunk states
    aligns rows only by the entity's name; a stated id (7) aligns them as before, and
    without the chunks' texts the key alone decides, as it did."""
    rows = [row("laureate", "a#0", laureate_id=1, award="Stedrurial Medal",
                name="Nendzu Rixtox", grant=500),
            row("laureate", "b#0", laureate_id=1, award="Stedrurial Medal",
                institution="Xandria University"),
            row("laureate", "c#0", laureate_id=1, award="Stedrurial Medal",
                name="nendzu rixtox", institution="Xandria University"),
            row("laureate", "d#0", laureate_id=7, award="Stedrurial Medal",
                name="Gryrnstu Pougryrn"),
            row("laureate", "e#0", laureate_id=7, award="Stedrurial Medal",
                institution="Olvane College")]
    merged = merge_entities(PRIZES, rows, texts=PRIZE_TEXTS)
    assert [(r.values["laureate_id"], r.values.get("name"), r.values.get("institution"),
             r.provenance.chunk_id) for r in merged] == [
        (1, "Nendzu Rixtox", "Xandria University", "a#0"),   # a#0 and c#0: one name
        (1, None, "Xandria University", "b#0"),              # no name: stays apart
        (7, "Gryrnstu Pougryrn", "Olvane College", "d#0")]   # stated: one laureate
    # the texts are what decides: without them the id alone merges every row of 1
    assert len(merge_entities(PRIZES, rows)) == 2
    # a row whose chunk states the id ("laureate 1") aligns by it, whatever its name
    stated = {**PRIZE_TEXTS, "b#0": "Laureate 1 of the Stedrurial Medal: Xandria University."}
    assert [r.values.get("institution") for r in merge_entities(PRIZES, rows, texts=stated)
            if r.values["laureate_id"] == 1] == ["Xandria University"]


def test_only_an_id_is_judged_invented_and_a_name_in_the_key_aligns_its_rows() -> None:
    """A year the chunk writes as "this year" is no invented id, and a key that holds the
    name with the id aligns rows by it (the review of 20fe17b)."""
    by_name = Schema.model_validate({"tables": [
        {"name": "laureate", "primary_key": ["laureate_id", "name"],
         "columns": [{"name": "laureate_id", "type": "INT"}, {"name": "name"},
                     {"name": "grant", "type": "INT"}, {"name": "institution"}]}]})
    rows = [row("laureate", "a#0", laureate_id=1, name="Nendzu Rixtox", grant=500),
            row("laureate", "c#0", laureate_id=1, name="Nendzu Rixtox",
                institution="Xandria University")]
    assert len(merge_entities(by_name, rows, texts=PRIZE_TEXTS)) == 1
    yearly = Schema.model_validate({"tables": [
        {"name": "results", "primary_key": ["company_name", "year"],
         "columns": [{"name": "company_name"}, {"name": "year", "type": "INT"},
                     {"name": "revenue", "type": "INT"}, {"name": "staff", "type": "INT"}]}]})
    rows = [row("results", "a#0", company_name="Acme", year=2020, revenue=9),
            row("results", "b#0", company_name="Acme", year=2020, staff=40)]
    texts = {"a#0": "This year Acme earned 9.", "b#0": "Acme has 40 staff this year."}
    assert len(merge_entities(yearly, rows, texts=texts)) == 1


def test_an_invented_id_without_a_column_for_the_name_merges_nothing() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "clubs", "primary_key": ["club_id"],
         "columns": [{"name": "club_id", "type": "INT"}, {"name": "city"},
                     {"name": "founded", "type": "INT"}]}]})
    rows = [row("clubs", "a#0", club_id=1, city="Zorn"),
            row("clubs", "b#0", club_id=1, founded=1901)]
    texts = {"a#0": "The club plays in Zorn.", "b#0": "Founded in 1901, the club ..."}
    assert len(merge_entities(schema, rows, texts=texts)) == 2
    assert len(merge_entities(schema, rows)) == 1


def test_a_value_written_in_several_cases_is_one_value() -> None:
    """docsage-repairs-set2 had sectors 'Energy' and 'energy': ``sector = 'energy'`` missed
    one. Names of entities are canonicalize's; keys and references stay as written here."""
    rows = [row("company", "a#0", name="Acme", product="Toys", city="Zorn"),
            row("company", "b#0", name="Bolt", product="toys", city="zorn"),
            row("company", "c#0", name="Crux", product="toys", city="Pax"),
            row("office", "d#0", company="ACME", town="Zorn", region="north"),
            row("office", "e#0", company="acme", town="zorn", region="North")]
    out = same_case(SCHEMA, rows)
    assert [r.values["product"] for r in out[:3]] == ["toys", "toys", "toys"]
    assert [r.values["city"] for r in out[:3]] == ["Zorn", "zorn", "Pax"]   # a reference
    # a tie: the lower-case spelling; office's first text column keys it, and stays
    assert [r.values["region"] for r in out[3:]] == ["north", "north"]
    assert [r.values["company"] for r in out[3:]] == ["ACME", "acme"]
    assert [(c.column, c.old, c.new, c.reason) for c in out[0].provenance.corrections] == [
        ("product", "Toys", "toys", "case")]
    assert same_case(SCHEMA, out) == out


def test_case_that_may_mean_something_and_joined_columns_keep_their_spelling() -> None:
    """Codes, symbols and units ("CO" and "Co", "MW" and "mW"), every key column, and a
    reference with what it points at are left as written (the review of 0d5d8d9)."""
    schema = Schema.model_validate({"tables": [
        {"name": "plant", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "unit"}, {"name": "formula"},
                     {"name": "sector"}]},
        {"name": "listing", "primary_key": ["ticker", "exchange"],
         "columns": [{"name": "ticker"}, {"name": "exchange"}]},
        {"name": "holding", "columns": [{"name": "holder"}, {"name": "ticker"},
                                        {"name": "exchange"}],
         "foreign_keys": [{"cols": ["ticker", "exchange"], "ref_table": "listing",
                           "ref_cols": ["ticker", "exchange"]}]}]})
    rows = [row("plant", "a#0", name="A", unit="MW", formula="CO", sector="Energy"),
            row("plant", "b#0", name="B", unit="MW", formula="CO", sector="energy"),
            row("plant", "c#0", name="C", unit="mW", formula="Co", sector="energy "),
            row("listing", "d#0", ticker="ABCD", exchange="Nyse"),
            row("listing", "e#0", ticker="abcd", exchange="nyse"),
            row("holding", "f#0", holder="Ann Lee", ticker="ABCD", exchange="NYSE")]
    out = same_case(schema, rows)
    assert [r.values["unit"] for r in out[:3]] == ["MW", "MW", "mW"]
    assert [r.values["formula"] for r in out[:3]] == ["CO", "CO", "Co"]
    # spaces around a value are no other spelling (loading strips them): one correction
    assert [r.values["sector"].strip() for r in out[:3]] == ["energy", "energy", "energy"]
    assert [len(r.provenance.corrections) for r in out[:3]] == [1, 0, 0]
    assert [r.values for r in out[3:]] == [r.values for r in rows[3:]]


def test_a_value_restating_its_column_is_what_it_holds_where_others_write_it_so() -> None:
    """docsage-case-set2 wrote Roustoustus Systems' sector "energy sector", and
    ``sector = 'energy'`` left it out of the average. The column word goes only where
    another row writes the value bare; keys, references and names ending in a capitalized
    column word ("Mexico City", the review of 6438ff9) keep theirs."""
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "sector"}, {"name": "disease_type"},
                     {"name": "club"}, {"name": "city"}, {"name": "parent_company"}],
         "foreign_keys": [{"cols": ["parent_company"], "ref_table": "companies",
                           "ref_cols": ["company_name"]}]}]})
    rows = [row("companies", "a#0", company_name="Roustoustus Systems",
                sector="energy sector", disease_type="Type 2 diabetes", club="bridge club",
                city="Mexico City", parent_company="Zorn Company"),
            row("companies", "b#0", company_name="Riandgiax Systems", sector="energy",
                disease_type="type", club="Chess Club", city="Mexico"),
            row("companies", "c#0", company_name="Zorn", sector="The Telecom Sectors",
                club="bridge", city="the Kansas City"),
            row("companies", "d#0", company_name="Kriarngyrtia Company", sector="Telecom",
                city="Kansas"),
            row("companies", "e#0", company_name="Gouqin", sector="mining sector"),
            row("companies", "f#0", company_name="Hx", sector="sector"),
            row("companies", "g#0", company_name="Qx", sector="Energy Sector")]
    out = column_word(schema, rows)
    assert [r.values["sector"] for r in out] == [
        "energy", "energy", "Telecom", "Telecom", "mining sector", "sector", "Energy"]
    # "Type 2 diabetes" does not end in its column's word; "bridge" is written bare
    assert [r.values["club"] for r in out[:3]] == ["bridge", "Chess Club", "bridge"]
    assert out[0].values["disease_type"] == "Type 2 diabetes"
    # a name is no restated column, unless "the" leads
    assert [r.values["city"] for r in out[:3]] == ["Mexico City", "Mexico", "Kansas"]
    # a reference and a key keep theirs ("Zorn Company", "Kriarngyrtia Company")
    assert out[0].values["parent_company"] == "Zorn Company"
    assert out[3].values["company_name"] == "Kriarngyrtia Company"
    assert [(c.column, c.old, c.new, c.reason) for c in out[0].provenance.corrections] == [
        ("sector", "energy sector", "energy", "column word"),
        ("club", "bridge club", "bridge", "column word")]
    assert column_word(schema, out) == out


def test_alias_merge_removes_false_fd_and_fk_violations() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "company", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "founded", "type": "INT"}]},
        {"name": "person", "columns": [{"name": "name"}, {"name": "employer"}],
         "foreign_keys": [{"cols": ["employer"], "ref_table": "company", "ref_cols": ["name"]}]}],
        "constraints": [{"kind": "fd", "table": "person", "lhs": ["name"], "rhs": "employer"}]})
    rows = [row("company", "a#0", name="Acme Inc.", founded=1874),
            row("company", "b#0", name="ACME", founded=None),
            row("person", "b#0", name="Ann Lee", employer="Acme Inc."),
            row("person", "c#0", name="Ann Lee", employer="ACME Inc")]
    before = check(schema, rows).counts()
    assert before == {"fd": 1, "fk": 1}
    assert domains(schema)["company.name"] == [("company", "name"), ("person", "employer")]
    canon, groups = canonicalize(schema, rows)
    assert [g.canonical for g in groups] == ["Acme Inc."]
    assert {r.values.get("employer") for r in canon if r.table == "person"} == {"Acme Inc."}
    fixed = canon[3].provenance.corrections[0]
    assert (fixed.old, fixed.new, fixed.by) == ("ACME Inc", "Acme Inc.", "alias-merge")
    merged = merge_entities(schema, canon)
    assert check(schema, merged).counts() == {}
    assert len([r for r in merged if r.table == "company"]) == 1


def test_merge_fills_cells_from_other_chunks_and_keeps_contradictions_apart() -> None:
    table_rows = [row("company", "a#0", name="Acme", founded=1874, staff=None),
                  row("company", "b#0", name="Acme", founded=None, staff=2300),
                  row("company", "c#0", name="Acme", founded=1876, staff=None)]
    merged = merge_entities(SCHEMA, table_rows)
    assert [r.values.get("founded") for r in merged] == [1874, 1876]
    assert merged[0].values["staff"] == 2300
    note = merged[0].provenance.corrections[-1]
    assert (note.column, note.by, note.evidence_chunk) == ("staff", "alias-merge", "b#0")


# -- ASK's uncertainty helpers --------------------------------------------------------------------
def test_alignment_conflicts_fire_on_conflicting_values_and_not_on_clean_rows() -> None:
    assert alignment_conflicts(SCHEMA, clean_rows()) == []
    rows = clean_rows() + [row("company", "z#1", name="ACME Inc.", founded=1876,
                               staff="2,300", product="games")]
    found = alignment_conflicts(SCHEMA, rows)
    assert [(c.entity, c.column) for c in found] == [(("acme",), "founded")]
    assert sorted(found[0].values) == [1874, 1876] and "z#1" in found[0].chunks


def test_fk_matches_report_missing_and_ambiguous_parents() -> None:
    assert fk_matches(SCHEMA, clean_rows()) == []
    rows = clean_rows() + [row("city", name="Pax Minor", country="Vel"),
                           row("company", name="Dyne", city="Nowhere"),
                           row("company", name="Eon", city="Pax"),
                           row("company", name="Fum", city="Zorn City")]
    found = {m.value: m for m in fk_matches(SCHEMA, rows)}
    assert set(found) == {"Nowhere"}                     # "Zorn City" names only Zorn
    assert found["Nowhere"].kind == "missing"
    rows.append(row("company", name="Gus", city="Minor"))
    rows.append(row("city", name="Lux Minor", country="Vel"))
    amb = {m.value: m for m in fk_matches(SCHEMA, rows)}["Minor"]
    assert amb.kind == "ambiguous" and amb.parents == ["lux minor", "pax minor"]


def test_value_anomalies_fire_on_each_kind_and_not_on_clean_rows() -> None:
    assert value_anomalies(SCHEMA, clean_rows(), current_year=2026) == []
    base = [row("company", name=f"C{i}", founded=1900 + i, staff=100 + i) for i in range(8)]
    rows = base + [row("company", name="Old", founded=180, staff=101),
                   row("company", name="Neg", founded=1950, staff=-3),
                   row("company", name="Big", founded=1951, staff=90000)]
    found = {(a.kind, a.column): a for a in value_anomalies(SCHEMA, rows, current_year=2026)}
    assert found[("implausible_year", "founded")].values == [180]
    assert found[("negative_count", "staff")].values == [-3]
    assert 90000 in found[("outlier", "staff")].values
    unreadable = base + [row("company", name=f"U{i}", founded="long ago") for i in range(3)]
    fail = [a for a in value_anomalies(SCHEMA, unreadable, current_year=2026)
            if a.kind == "parse_failure"]
    assert len(fail) == 1 and fail[0].column == "founded" and len(fail[0].rows) == 3


def test_null_rates_per_column() -> None:
    rates = null_rates(SCHEMA, clean_rows())
    assert rates["company.dissolved"] == pytest.approx(0.5)
    assert rates["company.name"] == 0.0 and "city.name" in rates


def test_clear_reads_a_restated_column_word_before_the_merge() -> None:
    """Through run_clear: "energy sector" read from one chunk is "energy" as another chunk's
    company has it, so both rows answer ``sector = 'energy'``."""
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "sector"}]}]})
    chunks = [Chunk(id="a#0", text="Roustoustus Systems is active in the energy sector."),
              Chunk(id="b#0", text="Riandgiax Systems works in energy.")]
    sectors = {"Roustoustus": "energy sector", "Riandgiax": "energy"}

    def reply(request) -> str:
        text = request.messages[-1].content
        name = next(n for n in sectors if n in text)
        return json.dumps({"companies": [{"company_name": f"{name} Systems",
                                          "sector": sectors[name]}]})
    result = asyncio.run(run_clear(LM(FakeLLM(respond=reply)), schema, chunks,
                                   config=ClearConfig(level_a=False, level_b=False)))
    assert sorted(r.values["sector"] for r in result.rows) == ["energy", "energy"]
