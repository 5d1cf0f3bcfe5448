"""Tables the model drew one per entity, with the same columns, become one table of their
kind (the 1.5B measuring model's Set2 drafts: one table per company, so that extraction split
the companies over them and the SQL read the rows of one)."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.index.hits import Hit
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.ask import SchemaDiscovery, _drafted
from quaderno.methods.docsage.containers import container_kind
from quaderno.methods.docsage.draft import MAX_COLUMNS, SchemaDraft
from quaderno.methods.docsage.rekey import plural, singular
from quaderno.methods.docsage.siblings import merge_siblings, proper_names, siblings
from quaderno.methods.episode import Episode

COMPANY = [{"name": "id", "type": "INT", "description": "Primary key"},
           {"name": "company_name"}, {"name": "sector"}, {"name": "country"},
           {"name": "employees", "type": "INT"}, {"name": "revenue", "type": "DOUBLE"},
           {"name": "chief_executive"}]
NONSENSE_FK = [{"column": "chief_executive", "references_table": "DrournliaMarketsCommission",
                "references_column": "name"}]
# benchmarks/results/docsage-synth-measuring/docsage-set2, the Statistics question's draft
SET2_STAT = {"tables": [
    {"name": "DrournliaMarketsCommission", "columns": COMPANY, "primary_key": ["id"],
     "foreign_keys": NONSENSE_FK},
    {"name": "GrounlenkreEnergy", "columns": COMPANY, "primary_key": ["id"],
     "foreign_keys": NONSENSE_FK},
    {"name": "GouqinEnergy", "columns": COMPANY, "primary_key": ["id"],
     "foreign_keys": NONSENSE_FK},
    {"name": "ZuvhaernliaEnergy", "columns": COMPANY[:5]}]}
# ... and the Relationship question's, after the first's tables were offered to it
SET2_REL = {"tables": [
    {"name": "drournliamarketscommission", "columns": COMPANY, "primary_key": ["id"]},
    {"name": "grounlenkreenergy", "columns": [*COMPANY, {"name": "offices", "type": "DOUBLE"}],
     "primary_key": ["id"]}],
    "entity_types": ["drournliamarketscommission", "grounlenkreenergy"],
    "required_attributes": ["company_name", "sector", "country", "employees",
                            "chief_executive"],
    "join_path": ["drournliamarketscommission", "grounlenkreenergy"]}
STAT = ("What is the average number of offices of the companies in the Drournlia Markets "
        "Commission whose sector is energy?")
DOCS = ["Grounlenkre Energy\nGrounlenkre Energy (GE) is a company of the Drournlia Markets "
        "Commission. It has 48 offices.",
        "Gouqin Energy\nGouqin Energy names Touvha Vhathsiaxpux as chief executive.",
        "Zuvhaernlia Energy\nA total of 4,120 employees was recorded for Zuvhaernlia Energy."]


def draft(d: dict) -> SchemaDraft:
    return SchemaDraft.model_validate(d)


def test_the_set2_tables_one_per_company_merge_into_companies_referring_to_the_commission():
    schema, notes = _drafted(draft(SET2_STAT), question=STAT, texts=DOCS)
    # the companies the documents name make the table of their kind; the commission the
    # question names, drawn with the same columns, is what each company refers to
    assert [t.name for t in schema.tables] == ["companies", "commissions"]
    table = schema.tables[0]
    assert table.column_names == ["id", "company_name", "sector", "country", "employees",
                                  "revenue", "chief_executive", "commission_name"]
    assert table.primary_key == ["id"]
    assert notes[0] == ("tables 'GrounlenkreEnergy', 'GouqinEnergy', 'ZuvhaernliaEnergy' "
                        "merged into 'companies': the same columns, each table named after "
                        "one entity")
    assert notes[1].startswith("table 'DrournliaMarketsCommission' merged into 'companies'")
    # without the documents no table is named after an instance, and nothing is merged
    alone, notes = _drafted(draft(SET2_STAT), question=STAT)
    assert len(alone.tables) == 4 and not any("merged" in n for n in notes)


def test_without_a_container_the_companies_make_a_table_named_after_their_kind():
    d = draft({**SET2_STAT, "tables": SET2_STAT["tables"][1:]})
    question = "Which company has the most employees?"
    schema, _ = _drafted(d, question=question, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies"]
    assert schema.table("companies").column_names[:2] == ["id", "company_name"]


def test_the_merged_table_gains_the_columns_only_a_sibling_had_and_the_requirements_follow():
    schema, _ = _drafted(draft(SET2_REL), question=STAT, texts=DOCS)
    table = schema.tables[0]
    assert table.name == "companies" and "offices" in table.column_names
    r = schema.requirements
    assert r.entity_types == ["companies"]
    assert r.join_path == ["companies"]


def test_siblings_with_ordinary_names_are_different_kinds_and_stay_apart():
    person = [{"name": "name"}, {"name": "born", "type": "INT"}, {"name": "country"},
              {"name": "team"}, {"name": "salary", "type": "INT"}]
    d = draft({"tables": [{"name": "players", "columns": person, "primary_key": ["name"]},
                          {"name": "coaches", "columns": person, "primary_key": ["name"]}]})
    assert siblings(d.tables[0], d.tables[1])
    merged, notes = merge_siblings(d, "", ["Players and coaches of the Ostrel Rovers."])
    assert [t.name for t in merged.tables] == ["players", "coaches"] and notes == []
    # capitalized where a sentence starts, written in lower case elsewhere: not a name
    merged, notes = merge_siblings(d, "How many players and coaches were born in Vhaern?",
                                   ["Players of the Ostrel Rovers. Coaches are hired yearly."])
    assert [t.name for t in merged.tables] == ["players", "coaches"] and notes == []


def test_tables_of_different_kinds_sharing_generic_columns_are_not_one_group():
    """A bare name and two place columns do not make a person and a company one kind, and
    a team does not join them through one of them."""
    def cols(*names):
        return [{"name": n} for n in ("name", *names)]
    d = draft({"tables": [{"name": "Touvha Vhathsiaxpux",
                           "columns": cols("country", "city", "birth_year")},
                          {"name": "Gouqin Energy", "columns": cols("country", "city", "sector")},
                          {"name": "Ostrel Rovers",
                           "columns": cols("sector", "league", "stadium", "city")}]})
    merged, notes = merge_siblings(
        d, "", ["Touvha Vhathsiaxpux of Gouqin Energy owns the Ostrel Rovers."])
    assert len(merged.tables) == 3 and notes == []


def test_containers_the_question_names_are_never_merged():
    standings = [{"name": "team_name"}, {"name": "points", "type": "INT"},
                 {"name": "wins", "type": "INT"}, {"name": "losses", "type": "INT"}]
    d = draft({"tables": [
        {"name": "Ostrel League", "columns": standings, "primary_key": ["team_name"]},
        {"name": "Vhaern Cup", "columns": standings, "primary_key": ["team_name"]}],
        "required_attributes": ["Vhaern Cup.points"],
        "entity_types": ["Ostrel League", "Vhaern Cup"]})
    question = ("How many more points did the leader of the Vhaern Cup score than the "
                "leader of the Ostrel League?")
    merged, notes = merge_siblings(d, question, ["The Ostrel League table, 2024."])
    assert [t.name for t in merged.tables] == ["Ostrel League", "Vhaern Cup"] and notes == []


def test_identical_tables_leave_one_of_them():
    cols = [{"name": "sector"}, {"name": "country"}, {"name": "employees", "type": "INT"}]
    same = {"name": "Gouqin Energy", "columns": cols}
    d = draft({"tables": [same, same, {"name": "Zuvhaernlia Energy", "columns": cols},
                          {"name": "filings", "columns": [{"name": "filing_no"}]}]})
    merged, _ = merge_siblings(d, "", DOCS)
    assert [t.name for t in merged.tables] == ["Gouqin Energy", "filings"]


@pytest.mark.parametrize("columns,kind_name", [
    # a bare title names the film: director_name names another entity
    (["title", "director_name", "release_year", "genre", "budget"], None),
    (["full_name", "employer", "nationality", "birth_year"], None),
    (["person_name", "job_title", "employer", "nationality", "birth_year"], "people"),
])
def test_the_kind_is_read_from_the_name_column_of_the_rows_own_entity(columns, kind_name):
    d = draft({"tables": [{"name": "Gryrn Sky", "columns": [{"name": c} for c in columns]},
                          {"name": "Pougryrn Tide", "columns": [{"name": c} for c in columns]}]})
    texts = ["Gryrn Sky and Pougryrn Tide: a person, a director, a film, a job."]
    merged, _ = merge_siblings(d, "", texts)
    assert [t.name for t in merged.tables] == [kind_name or "Gryrn Sky"]


@pytest.mark.parametrize("kind_table", ["churches", "church", "historic_churches"])
def test_a_table_named_after_the_kind_takes_the_instances(kind_table):
    cols = [{"name": "church_name"}, {"name": "city"}, {"name": "founded"},
            {"name": "denomination"}]
    d = draft({"tables": [{"name": kind_table, "columns": cols},
                          {"name": "Olav Church", "columns": cols},
                          {"name": "Vhaern Church", "columns": cols}]})
    merged, _ = merge_siblings(d, "", ["Churches\nOlav Church and Vhaern Church, two "
                                       "churches of the city."])
    assert [t.name for t in merged.tables] == [kind_table]


def test_a_kind_table_written_as_a_heading_is_not_an_instance():
    d = draft({"tables": [
        {"name": "companies", "columns": COMPANY[1:], "primary_key": ["company_name"]},
        {"name": "Gouqin Energy", "columns": COMPANY, "primary_key": ["id"],
         "description": "Facts about Gouqin Energy"}]})
    schema, notes = _drafted(d, question="", texts=["Companies\nGouqin Energy is one of the "
                                                    "companies of the region.", *DOCS])
    assert [t.name for t in schema.tables] == ["companies"]
    assert schema.table("companies").primary_key == ["company_name"]


def test_descriptions_naming_a_merged_table_are_cleared():
    revenue = {"name": "revenue", "type": "DOUBLE", "description": "Gouqin Energy's revenue"}
    d = draft({"tables": [
        {"name": "Gouqin Energy", "description": "Facts about Gouqin Energy",
         "columns": [*COMPANY[:5], revenue]},
        {"name": "Zuvhaernlia Energy", "columns": COMPANY[:5]}]})
    schema, _ = _drafted(d, question="Which company has the most staff?", texts=DOCS)
    [t] = schema.tables
    assert t.name == "companies" and t.description == ""
    assert t.column("revenue").description == ""
    assert t.column("company_name").description == ""


def test_a_reference_to_a_merged_tables_key_points_at_the_merged_tables_key():
    d = draft({"tables": [
        {"name": "companies", "columns": COMPANY[1:], "primary_key": ["company_name"]},
        {"name": "Gouqin Energy", "columns": [*COMPANY, {"name": "offices"}],
         "primary_key": ["id"]},
        {"name": "filings", "columns": [{"name": "filing_no"}, {"name": "company_id"}],
         "foreign_keys": [{"column": "company_id", "references_table": "Gouqin Energy",
                           "references_column": "id"}]}],
        "join_path": ["filings", "Gouqin Energy"],
        "required_attributes": ["Gouqin Energy.id", "Gouqin Energy.offices"]})
    schema, _ = _drafted(d, question="", texts=DOCS)
    [fk] = schema.table("filings").foreign_keys
    assert (fk.ref_table, fk.ref_cols) == ("companies", ["company_name"])
    assert schema.requirements.join_path == ["filings", "companies"]
    # the merged table's id is gone, and so is the requirement naming it
    assert schema.requirements.attributes == ["companies.offices"]


def test_tables_sharing_fewer_columns_are_not_siblings():
    d = draft({"tables": [
        {"name": "Stedrurial Medal", "columns": [{"name": "laureate_id", "type": "INT"},
                                                  {"name": "award_name"}, {"name": "year"},
                                                  {"name": "nationality"}]},
        {"name": "Gryrnstu Pougryrn", "columns": [{"name": "laureate_id", "type": "INT"},
                                                   {"name": "award_name"}, {"name": "year"},
                                                   {"name": "birth_year", "type": "INT"}]}]})
    # ids and columns named after the table do not count: award_name and year are shared
    assert not siblings(d.tables[0], d.tables[1])
    merged, notes = merge_siblings(d, "", ["Gryrnstu Pougryrn received the Stedrurial Medal."])
    assert len(merged.tables) == 2 and notes == []


def test_an_instance_table_merges_into_the_kind_table_beside_it_and_references_follow():
    d = draft({"tables": [
        {"name": "companies", "columns": COMPANY[1:], "primary_key": ["company_name"]},
        {"name": "Gouqin Energy", "columns": [*COMPANY[1:], {"name": "offices", "type": "INT"}],
         "primary_key": ["company_name"]},
        {"name": "filings", "columns": [{"name": "filing_no"}, {"name": "company_name"}],
         "primary_key": ["filing_no"],
         "foreign_keys": [{"column": "company_name", "references_table": "Gouqin Energy",
                           "references_column": "company_name"}]}],
        "constraints": [{"kind": "range", "table": "Gouqin Energy", "columns": ["offices"],
                         "low": 0}],
        "required_attributes": ["Gouqin Energy.offices", "filings.filing_no"],
        "join_path": ["filings", "Gouqin Energy"]})
    schema, notes = _drafted(d, question="", texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "filings"]
    assert schema.table("companies").column_names[-1] == "offices"
    [fk] = schema.table("filings").foreign_keys
    assert (fk.ref_table, fk.ref_cols) == ("companies", ["company_name"])
    [rng] = schema.constraints
    assert (rng.table, rng.column) == ("companies", "offices")
    assert schema.requirements.attributes == ["companies.offices", "filings.filing_no"]
    assert schema.requirements.join_path == ["filings", "companies"]
    assert notes[0].startswith("tables 'Gouqin Energy' merged into 'companies'")


def test_without_a_free_kind_name_the_siblings_merge_into_the_one_the_question_needs():
    d = draft({"tables": [
        {"name": "companies", "columns": [{"name": "company_name"}, {"name": "founded"}]},
        {"name": "Gouqin Energy", "columns": COMPANY},
        {"name": "Grounlenkre Energy", "columns": COMPANY}],
        "join_path": ["Grounlenkre Energy"]})
    merged, _ = merge_siblings(d, "", DOCS)
    assert [t.name for t in merged.tables] == ["companies", "Grounlenkre Energy"]


def test_no_shared_name_column_keeps_the_first_sibling_by_name():
    cols = [{"name": "sector"}, {"name": "country"}, {"name": "employees", "type": "INT"}]
    d = draft({"tables": [{"name": "Gouqin Energy", "columns": cols},
                          {"name": "Zuvhaernlia Energy", "columns": cols}]})
    merged, _ = merge_siblings(d, "", DOCS)
    assert [t.name for t in merged.tables] == ["Gouqin Energy"]


def test_the_merged_table_keeps_to_the_column_cap():
    wide = [{"name": f"c{i}"} for i in range(MAX_COLUMNS)]
    other = [*wide[:9], *({"name": f"extra{i}"} for i in range(3))]
    d = draft({"tables": [{"name": "Gouqin Energy", "columns": wide},
                          {"name": "Zuvhaernlia Energy", "columns": other}]})
    merged, notes = merge_siblings(d, "", DOCS)
    [t] = merged.tables
    assert [c.name for c in t.columns] == [c["name"] for c in wide]
    assert notes[0].endswith("(columns past the cap of 12 left out: extra0, extra1, extra2)")
    # a column the question requires is carried before the others
    d = draft({"tables": [{"name": "Gouqin Energy", "columns": wide[:-1]},
                          {"name": "Zuvhaernlia Energy",
                           "columns": [*other[:-1], {"name": "offices", "type": "INT"}]}],
               "join_path": ["Gouqin Energy", "Zuvhaernlia Energy"],
               "required_attributes": ["Zuvhaernlia Energy.offices"],
               "constraints": [{"kind": "range", "table": "Zuvhaernlia Energy",
                                "columns": ["offices"], "low": 0}]})
    schema, _ = _drafted(d, question="", texts=DOCS)
    [t] = schema.tables
    assert len(t.columns) == MAX_COLUMNS and "offices" in t.column_names
    assert schema.requirements.attributes == ["gouqin_energy.offices"]
    assert [c.column for c in schema.constraints] == ["offices"]


def test_proper_names_are_runs_of_capitalized_words_not_all_common():
    names = proper_names(["It is a company of The Drournlia Markets Commission, said Ama.",
                          "the commission said it would"])
    assert {"drournliamarketscommission", "thedrournliamarketscommission", "drournlia",
            "marketscommission", "ama"} <= names
    # words the texts write in lower case are no name on their own
    assert not {"it", "the", "commission", "company", "commissionsaid"} & names


@pytest.mark.parametrize("word", ["company", "city", "address", "league", "person", "movie",
                                  "key", "country", "series", "top_movie", "laureate",
                                  "church", "match", "box", "dish", "cache", "niche"])
def test_plural_is_read_back_by_singular(word):
    assert singular(plural(word)) == word and plural(plural(word)) == plural(word)


def test_the_initial_schema_merges_siblings_named_in_the_sample_it_was_drawn_from():
    lm = LM(FakeLLM(respond=lambda request: json.dumps(SET2_STAT)))
    ep = Episode(STAT, method="docsage", lm=lm, retriever=None)
    sample = [Hit(chunk=Chunk(id=f"d{i}#0", title=t.split("\n")[0], text=t.split("\n")[1],
                              kb="c"), score=1.0, rank=i + 1, retriever="kw")
              for i, t in enumerate(DOCS)]
    schema, notes = asyncio.run(SchemaDiscovery().initial(ep, sample))
    assert [t.name for t in schema.tables] == ["companies", "commissions"]
    schema, _ = asyncio.run(SchemaDiscovery().initial(ep, sample[:1]))
    # the sample names one company: its table is the companies', the rest stay
    assert [t.name for t in schema.tables] == ["companies", "gouqinenergy",
                                               "zuvhaernliaenergy", "commissions"]


def test_columns_naming_a_merged_sibling_are_dropped_and_references_elsewhere_kept():
    """The Set2 Statistics re-run copied ``drournliamarketscommission.grounlenkreenergy_id``
    from the tables offered to it: once both are one table, that column names nothing. A
    reference to a table outside the group (``regulator_id``) is carried over."""
    d = draft({"tables": [
        {"name": "drournliamarketscommission", "primary_key": ["id"],
         "columns": [*COMPANY, {"name": "grounlenkreenergy_id", "type": "INT"}],
         "foreign_keys": [{"column": "grounlenkreenergy_id",
                           "references_table": "grounlenkreenergy",
                           "references_column": "id"}]},
        {"name": "grounlenkreenergy", "primary_key": ["id"],
         "columns": [*COMPANY, {"name": "offices", "type": "DOUBLE"},
                     {"name": "grounlenkreenergy_name"},
                     {"name": "regulator_id", "type": "INT"}],
         "foreign_keys": [{"column": "regulator_id", "references_table": "regulators",
                           "references_column": "id"}]},
        {"name": "regulators", "primary_key": ["id"],
         "columns": [{"name": "id", "type": "INT"}, {"name": "name"}]}]})
    schema, _ = _drafted(d, question=STAT, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "regulators", "commissions"]
    companies = schema.table("companies")
    assert "grounlenkreenergy_id" not in companies.column_names
    assert "grounlenkreenergy_name" not in companies.column_names
    assert companies.column_names[-3:] == ["offices", "regulator_id", "commission_name"]
    assert [(fk.cols, fk.ref_table) for fk in companies.foreign_keys] == [
        (["regulator_id"], "regulators"), (["commission_name"], "commissions")]


# -- the second review's cases -------------------------------------------------------------
TWO = [{"name": "GrounlenkreEnergy", "columns": COMPANY, "primary_key": ["id"]},
       {"name": "GouqinEnergy", "columns": COMPANY, "primary_key": ["id"]}]


def test_a_possessive_in_the_question_still_names_the_container():
    d = draft({"tables": [{"name": "DrournliaMarketsCommission", "columns": COMPANY,
                           "primary_key": ["id"]}, *TWO],
               "join_path": ["DrournliaMarketsCommission"]})
    question = ("What is the average number of offices of the Drournlia Markets "
                "Commission's energy companies?")
    merged, _ = merge_siblings(d, question, DOCS)
    assert [t.name for t in merged.tables] == ["companies", "commissions"]
    assert "companies.commission_name" in merged.required_attributes


def test_a_table_the_question_names_without_its_kind_is_one_of_the_instances():
    merged, _ = merge_siblings(draft({"tables": TWO}), "What is the revenue of Gouqin Energy?",
                               DOCS)
    assert [t.name for t in merged.tables] == ["companies"]


def test_an_organisations_own_table_is_no_sibling_of_its_members():
    d = draft({"tables": [
        {"name": "Drournlia Markets Commission", "primary_key": ["name"],
         "columns": [{"name": n} for n in ("name", "country", "city", "employees", "chair",
                                           "founded", "budget")]},
        *({"name": n, "columns": [{"name": c} for c in ("company_name", "country", "city",
                                                         "employees")]}
          for n in ("Gouqin Energy", "Grounlenkre Energy"))]})
    question = ("Does the Drournlia Markets Commission employ more people than the average "
                "company it regulates?")
    merged, _ = merge_siblings(d, question, DOCS)
    assert [t.name for t in merged.tables] == ["Drournlia Markets Commission", "companies"]


@pytest.mark.parametrize("kind_columns", [
    ["company_name", "city_name", "sector", "employees", "revenue"],  # two name columns
    ["name", "city_name", "sector", "employees", "revenue"],          # its bare name
])
def test_the_kind_table_is_found_when_the_columns_name_two_entities_or_it_says_name(
        kind_columns):
    inst = ["company_name", "city_name", "sector", "employees", "revenue"]
    d = draft({"tables": [
        {"name": "companies", "columns": [{"name": c} for c in kind_columns]},
        *({"name": n, "columns": [{"name": c} for c in inst]}
          for n in ("Gouqin Energy", "Grounlenkre Energy"))]})
    merged, _ = merge_siblings(d, "Which company has the most employees?", DOCS)
    assert [t.name for t in merged.tables] == ["companies"]


def test_a_kind_singular_reads_badly_is_still_the_kind_table():
    cols = [{"name": c} for c in ("campus_name", "city", "students", "founded")]
    d = draft({"tables": [{"name": "campuses", "columns": cols},
                          {"name": "Gryrn Hall", "columns": cols},
                          {"name": "Pougryrn Park", "columns": cols}]})
    merged, _ = merge_siblings(d, "Which campus has the most students?",
                               ["Gryrn Hall and Pougryrn Park are campuses."])
    assert [t.name for t in merged.tables] == ["campuses"]


def test_requirements_follow_the_merge_unless_they_name_what_it_dropped():
    d = draft({"tables": [
        {"name": "DrournliaMarketsCommission", "primary_key": ["id"],
         "columns": [*COMPANY, {"name": "gouqinenergy_id", "type": "INT"}]}, *TWO],
        "required_attributes": ["GouqinEnergy.offices", "GouqinEnergy.id",
                                "DrournliaMarketsCommission.gouqinenergy_id",
                                "DrournliaMarketsCommission.revenue"]})
    schema, _ = _drafted(d, question=STAT, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "commissions"]
    # offices, which no sibling had, is still asked for: ASK's missing relationship
    assert schema.requirements.attributes == ["companies.offices", "companies.revenue",
                                              "companies.commission_name"]


def test_heading_words_written_in_lower_case_in_another_number_are_no_names():
    person = [{"name": c} for c in ("name", "born", "country", "team", "salary")]
    d = draft({"tables": [{"name": "Players", "columns": person, "primary_key": ["name"]},
                          {"name": "Coaches", "columns": person, "primary_key": ["name"]}]})
    merged, notes = merge_siblings(d, "Who earns the most?", [
        "Players\nAma, born 1990, is a player of the Rovers.",
        "Coaches\nLi, born 1970, is the head coach of the Rovers."])
    assert len(merged.tables) == 2 and notes == []


def test_a_bare_title_in_one_sibling_stops_reading_the_kind_from_another_entity():
    rest = ["director_name", "release_year", "genre", "budget"]
    d = draft({"tables": [{"name": "Gryrn Sky", "columns": [{"name": c}
                                                           for c in ["title", *rest]]},
                          {"name": "Pougryrn Tide", "columns": [{"name": c}
                                                               for c in ["film_title", *rest]]}]})
    merged, _ = merge_siblings(d, "", ["Gryrn Sky and Pougryrn Tide, two films by a director."])
    assert [t.name for t in merged.tables] == ["Gryrn Sky"]


def test_names_with_small_words_inside_are_instances():
    cols = [{"name": c} for c in ("university_name", "city", "students", "founded")]
    d = draft({"tables": [{"name": "University of Gryrn", "columns": cols},
                          {"name": "University of Pougryrn", "columns": cols}]})
    merged, _ = merge_siblings(d, "Which university has the most students?",
                               ["The University of Gryrn and the University of Pougryrn."])
    assert [t.name for t in merged.tables] == ["universities"]


def test_columns_named_after_a_merged_table_are_dropped_however_its_words_are_split():
    d = draft({"tables": [
        {"name": "DrournliaMarketsCommission", "primary_key": ["id"],
         "columns": [*COMPANY, {"name": "gouqin_energy_id", "type": "INT"}]},
        {"name": "GouqinEnergy", "primary_key": ["id"],
         "columns": [*COMPANY, {"name": "grounlenkre_energy_name"}]},
        {"name": "GrounlenkreEnergy", "columns": COMPANY, "primary_key": ["id"]}]})
    schema, _ = _drafted(d, question=STAT, texts=DOCS)
    t = schema.table("companies")
    assert not {"gouqin_energy_id", "grounlenkre_energy_name"} & set(t.column_names)


def test_a_short_name_clears_no_description_it_happens_to_spell():
    cols = [{"name": c} for c in ("company_name", "sector", "country", "employees")]
    d = draft({"tables": [
        {"name": "companies", "columns": cols, "description": "Companies of the board"},
        {"name": "Bo", "columns": cols}, {"name": "Gouqin Energy", "columns": cols}]})
    merged, _ = merge_siblings(d, "", ["Bo and Gouqin Energy are companies."])
    assert [t.name for t in merged.tables] == ["companies"]
    assert merged.tables[0].description == "Companies of the board"


# -- containers beside the members' table ---------------------------------------------------
# benchmarks/results/docsage-synth-measuring/docsage-containers-set2: the companies twice
CONTAINED = {"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [*COMPANY[1:], {"name": "offices", "type": "INT"}]},
    {"name": "drournliamarketscommission", "primary_key": ["company_name"],
     "columns": [*COMPANY[1:], {"name": "slogan"}],
     "foreign_keys": [{"column": "company_name", "references_table": "companies",
                       "references_column": "company_name"}]}],
    "required_attributes": ["companies.offices", "drournliamarketscommission.sector"],
    "entity_types": ["companies", "drournliamarketscommission"]}


def test_a_container_beside_the_members_table_becomes_a_reference_to_its_kind():
    """The measuring model drew the commission's companies beside the companies, the same
    columns twice and nothing saying which company is in the commission; it then wrote the
    commission into ``sector``. The commission becomes a reference of each company."""
    schema, notes = _drafted(draft(CONTAINED), question=STAT, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "commissions"]
    companies = schema.table("companies")
    assert companies.column_names == ["company_name", "sector", "country", "employees",
                                      "revenue", "chief_executive", "offices",
                                      "commission_name", "slogan"]
    assert "Drournlia Markets Commission" in companies.column("commission_name").description
    [fk] = companies.foreign_keys
    assert (fk.cols, fk.ref_table, fk.ref_cols) == (["commission_name"], "commissions",
                                                    ["commission_name"])
    assert schema.table("commissions").primary_key == ["commission_name"]
    r = schema.requirements
    assert r.attributes == ["companies.offices", "companies.sector",
                            "companies.commission_name"]
    assert r.entity_types == ["companies"]
    assert notes[0] == (
        "table 'drournliamarketscommission' merged into 'companies': the same columns; "
        "'Drournlia Markets Commission' is the commission the question filters 'companies' "
        "by: companies.commission_name names it, a reference to the new table 'commissions'")


LAUREATE = [{"name": "laureate_name"}, {"name": "home_institution"},
            {"name": "research_grant", "type": "DOUBLE"}, {"name": "achievement"}]
# semi-no-clear-set1 (02baac0), the Relationship question's draft: the medal's laureates
# twice, as the medal and as "members", and nothing saying which laureate has the medal
SET1_REL = ("What is the home institution of the laureate with the lowest research grant "
            "in the Stedrurial Medal?")
SET1_DOCS = ["Touslian Brultiathgus\nTouslian Brultiathgus received the Stedrurial Medal. "
             "A research grant of 19.2 million went to the laureate.",
             "Stedrurial Medal — members\nMembers: Nendzu Rixtox, Dyrte Fourzixze."]


def test_a_container_beside_a_members_table_becomes_its_reference():
    d = draft({"tables": [
        {"name": "stedrurial_medal", "columns": LAUREATE, "primary_key": ["laureate_name"]},
        {"name": "members", "columns": LAUREATE, "primary_key": ["laureate_name"]}]})
    schema, notes = _drafted(d, question=SET1_REL, texts=SET1_DOCS)
    assert [t.name for t in schema.tables] == ["members", "medals"]
    members = schema.table("members")
    assert members.column_names == ["laureate_name", "home_institution", "research_grant",
                                    "achievement", "medal_name"]
    [fk] = members.foreign_keys
    assert (fk.cols, fk.ref_table, fk.ref_cols) == (["medal_name"], "medals", ["medal_name"])
    assert "'Stedrurial Medal' is the medal the question filters 'members' by" in notes[0]
    # the draft as the measuring model wrote it (grid3-rel-no-clear-set1): keyed by an id
    # each table shares, before ASK keys them by name
    by_id = [{"name": "laureate_id", "type": "INT"}, *LAUREATE[1:]]
    d = draft({"tables": [
        {"name": "Stedrurial_Medal", "columns": by_id, "primary_key": ["laureate_id"]},
        {"name": "Members", "columns": by_id, "primary_key": ["laureate_id"]}],
        "entity_types": ["Stedrurial_Medal", "Members"],
        "required_attributes": ["home_institution", "research_grant", "achievement"],
        "join_path": ["Stedrurial_Medal", "Members"]})
    schema, notes = _drafted(d, question=SET1_REL, texts=SET1_DOCS)
    assert [t.name for t in schema.tables] == ["members", "medals"]
    # and keyed by the laureates' name: with the id its only key, the model wrote each
    # laureate's name into home_institution, or left it out (members-no-clear-set1)
    members = schema.table("members")
    assert members.column_names == ["laureate_name", "home_institution", "research_grant",
                                    "achievement", "medal_name"]
    assert members.primary_key == ["laureate_name"]
    assert members.column("laureate_name").type == "TEXT"
    assert "table 'Members' keyed by laureate_name instead of laureate_id: its rows are " \
           "laureates, whom the documents name" in notes
    # (the review of b0d3af1) a column naming them already, under another name, is their
    # name; a table joining the members by the id is left to ASK's re-key of both
    for extra, other in (([{"name": "full_name"}], []),
                         ([], [{"name": "grants", "columns": [
                             {"name": "laureate_id", "type": "INT"},
                             {"name": "amount", "type": "DOUBLE"}]}])):
        d = draft({"tables": [
            {"name": "Stedrurial_Medal", "columns": [*by_id, *extra],
             "primary_key": ["laureate_id"]},
            {"name": "Members", "columns": [*by_id, *extra], "primary_key": ["laureate_id"]},
            *other]})
        schema, notes = _drafted(d, question=SET1_REL, texts=SET1_DOCS)
        assert schema.table("members").primary_key != ["laureate_name"]
        assert not any("keyed by laureate_name" in n for n in notes)
    # a table named after the kind is still the one chosen when the draft has both
    d = draft({"tables": [
        {"name": "stedrurial_medal", "columns": LAUREATE, "primary_key": ["laureate_name"]},
        {"name": "members", "columns": LAUREATE, "primary_key": ["laureate_name"]},
        {"name": "laureates", "columns": LAUREATE, "primary_key": ["laureate_name"]}]})
    schema, _ = _drafted(d, question=SET1_REL, texts=SET1_DOCS)
    assert "laureates" in [t.name for t in schema.tables]
    assert "medal_name" in schema.table("laureates").column_names


def test_a_container_reference_reuses_the_drafts_own_column_and_table_of_its_kind():
    d = draft({**CONTAINED, "tables": [
        {**CONTAINED["tables"][0], "columns": [*CONTAINED["tables"][0]["columns"],
                                               {"name": "commission"}]},
        {**CONTAINED["tables"][1], "columns": COMPANY[1:]},
        {"name": "commission", "columns": [{"name": "name"}, {"name": "chair"}]}]})
    schema, _ = _drafted(d, question=STAT, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "commission"]
    companies = schema.table("companies")
    assert companies.column_names.count("commission") == 1
    assert "commission_name" not in companies.column_names
    [fk] = companies.foreign_keys
    assert (fk.cols, fk.ref_table, fk.ref_cols) == (["commission"], "commission", ["name"])


@pytest.mark.parametrize("written,kind", [
    ("Drournlia Markets Commission", "commission"), ("League of Merounddian Cities", "league"),
    ("University of Gryrn", "university"), ("Stedrurial Medal", "medal"), ("Gryrn", "")])
def test_a_containers_kind_is_read_from_its_name(written, kind):
    assert container_kind(written) == kind


def test_a_container_whose_name_says_no_kind_stays_a_table():
    d = draft({**CONTAINED, "tables": [CONTAINED["tables"][0],
                                       {**CONTAINED["tables"][1], "name": "Drournlia"}]})
    question = "What is the average number of offices of the companies in Drournlia?"
    schema, notes = _drafted(d, question=question, texts=["Drournlia has 4 companies."])
    assert [t.name for t in schema.tables] == ["companies", "drournlia"]
    assert not any("merged" in n for n in notes)


def test_at_the_column_cap_the_reference_takes_the_place_of_a_merged_column():
    wide = [{"name": "company_name"}, *({"name": f"c{i}"} for i in range(MAX_COLUMNS - 2))]
    d = draft({"tables": [
        {"name": "companies", "primary_key": ["company_name"], "columns": wide},
        {"name": "DrournliaMarketsCommission", "primary_key": ["company_name"],
         "columns": [*wide, {"name": "slogan"}]}]})
    schema, notes = _drafted(d, question=STAT, texts=DOCS)
    columns = schema.table("companies").column_names
    assert len(columns) == MAX_COLUMNS and columns[-1] == "commission_name"
    assert "slogan" not in columns and "left out: slogan" in notes[0]
    # a members' table already at the cap has no room for the reference: both tables stay
    full = [*wide, {"name": "founded"}]
    d = draft({"tables": [
        {"name": "companies", "primary_key": ["company_name"], "columns": full},
        {"name": "DrournliaMarketsCommission", "primary_key": ["company_name"],
         "columns": full}]})
    schema, notes = _drafted(d, question=STAT, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "drournliamarketscommission"]


def test_named_entities_the_question_compares_are_no_containers():
    """Two companies the question names are compared, not filtered by; a kind ending other
    siblings' names (Energy) is one of theirs; a name not written as what the members are
    in is no container (the review of 9d8a7f3)."""
    d = draft({"tables": [
        {"name": "companies", "primary_key": ["company_name"], "columns": COMPANY[1:]},
        {"name": "GouqinEnergy", "primary_key": ["company_name"], "columns": COMPANY[1:]},
        {"name": "GrounlenkreEnergy", "primary_key": ["company_name"],
         "columns": COMPANY[1:]}]})
    question = "Which of the companies has more employees, Gouqin Energy or Grounlenkre Energy?"
    schema, notes = _drafted(d, question=question, texts=DOCS)
    assert not any("filters" in n for n in notes)
    assert [t.name for t in schema.tables] == ["companies", "gouqinenergy", "grounlenkreenergy"]
    one = draft({**CONTAINED, "tables": [CONTAINED["tables"][0], {
        **CONTAINED["tables"][1], "name": "GouqinEnergy"}, {
        **CONTAINED["tables"][1], "name": "DrournliaMarketsCommission"}]})
    question = "How many offices do the companies in the Gouqin Energy group have?"
    schema, notes = _drafted(one, question=question, texts=DOCS)
    assert "commissions" not in [t.name for t in schema.tables]
    question = "Drournlia Markets Commission: how many offices do its companies have?"
    schema, notes = _drafted(draft(CONTAINED), question=question, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "drournliamarketscommission"]


@pytest.mark.parametrize("column", [{"name": "commission_name", "type": "INT"},
                                    {"name": "commission_name", "type": "DOUBLE"}])
def test_a_column_of_the_kinds_name_and_another_type_leaves_the_container(column):
    d = draft({**CONTAINED, "tables": [
        {**CONTAINED["tables"][0], "columns": [*COMPANY[1:], column]},
        {**CONTAINED["tables"][1], "columns": COMPANY[1:]}]})
    schema, _ = _drafted(d, question=STAT, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "drournliamarketscommission"]


def _referring_by_id(column: str) -> SchemaDraft:
    """CONTAINED with the companies already referring to commissions(id, ``column``)."""
    return draft({**CONTAINED, "tables": [
        {**CONTAINED["tables"][0],
         "columns": [*COMPANY[1:], {"name": "commission_id", "type": "INT"}],
         "foreign_keys": [{"column": "commission_id", "references_table": "commissions",
                           "references_column": "id"}]},
        {**CONTAINED["tables"][1], "columns": COMPANY[1:]},
        {"name": "commissions", "primary_key": ["id"],
         "columns": [{"name": "id", "type": "INT"}, {"name": column}]}]})


def test_a_reference_the_members_have_to_the_kind_is_kept_and_a_bad_key_gets_none():
    # the members refer to the commission already: nothing is added but the requirement
    d = _referring_by_id("chair")
    schema, _ = _drafted(d, question=STAT, texts=DOCS)
    companies = schema.table("companies")
    assert [t.name for t in schema.tables] == ["companies", "commissions"]
    assert [(fk.cols, fk.ref_table) for fk in companies.foreign_keys] == [
        (["commission_id"], "commissions")]
    assert "companies.commission_id" in schema.requirements.attributes
    # a table of the kind with no TEXT name to refer to: the column, and no foreign key
    d = draft({**CONTAINED, "tables": [
        CONTAINED["tables"][0], {**CONTAINED["tables"][1], "columns": COMPANY[1:]},
        {"name": "Commissions", "columns": [{"name": "chair"}, {"name": "founded"}]}]})
    schema, notes = _drafted(d, question=STAT, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "commissions"]
    assert "commission_name" in schema.table("companies").column_names
    assert schema.table("companies").foreign_keys == []
    assert "new table" not in notes[0]


@pytest.mark.parametrize("question", [
    "In the Drournlia Markets Commission, what is the average number of offices of the "
    "companies whose sector is energy?",
    "What is the average number of offices of the energy companies belonging to the "
    "Drournlia Markets Commission?",
    "How many offices do the companies regulated by the Drournlia Markets Commission have?",
])
def test_a_container_is_read_however_the_question_writes_the_membership(question):
    schema, _ = _drafted(draft(CONTAINED), question=question, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "commissions"]


def test_an_id_reference_gets_no_names_description_and_a_full_table_no_new_table():
    d = _referring_by_id("name")
    schema, _ = _drafted(d, question=STAT, texts=DOCS)
    assert schema.table("companies").column("commission_id").description == ""
    # four references already: no fifth, and no table nothing would refer to
    full = {**CONTAINED["tables"][0], "columns": COMPANY[1:],
            "foreign_keys": [{"column": c, "references_table": "companies",
                              "references_column": "company_name"}
                             for c in ("sector", "country", "revenue", "chief_executive")]}
    schema, notes = _drafted(draft({**CONTAINED, "tables": [
        full, {**CONTAINED["tables"][1], "columns": COMPANY[1:]}]}), question=STAT, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies"]
    assert "commission_name" in schema.table("companies").column_names
    assert "new table" not in notes[0]


@pytest.mark.parametrize("question", [
    "Which of the companies compete with the Drournlia Markets Commission?",
    "How do the companies' offices compare to the Drournlia Markets Commission?",
])
def test_with_or_to_without_a_verb_of_membership_names_no_container(question):
    schema, _ = _drafted(draft(CONTAINED), question=question, texts=DOCS)
    assert "commissions" not in [t.name for t in schema.tables]


def test_a_container_drawn_twice_is_one_container():
    """The measuring model copied the offered commission table twice into one Set2 draft."""
    d = draft({**CONTAINED, "tables": [CONTAINED["tables"][1], CONTAINED["tables"][0],
                                       CONTAINED["tables"][1]]})
    schema, _ = _drafted(d, question=STAT, texts=DOCS)
    assert [t.name for t in schema.tables] == ["companies", "commissions"]


def test_every_name_run_keeps_a_names_particles_inside_it():
    # one builder for every module's name runs (normalize.name_run): a particle of a name in
    # another language no longer cuts "Banca di Roma" into "Banca" and "Roma" in some of them
    from quaderno.methods.docsage.group_names import PROPER_NAME
    from quaderno.methods.docsage.normalize import name_run
    text = "Shares went to Banca di Roma and to the Fondation de la Mer in 2004."
    assert PROPER_NAME.findall(text) == ["Shares", "Banca di Roma", "Fondation de la Mer"]
    assert {"bancadiroma", "fondationdelamer"} <= proper_names([text])
    # joiners stay between names: a run neither starts nor ends with one, nor crosses lines
    run = re.compile(name_run(r"[A-Z]\w*"))
    assert run.findall("of Bank of the Rastou of\nKelvo") == ["Bank of the Rastou", "Kelvo"]
    assert re.compile(name_run(r"[A-Z]\w*", {"&"})).findall("Kelvo & Sons") == ["Kelvo & Sons"]
