"""Invented keys: a schema keyed by surrogate ids no document states (what the 1.5B measuring
model drew on Set2 and Set3) is found on trial rows by code, and re-keyed by the name the
chunks do state, references following, without a clarification question."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from docsage_fakes import SYNTHESIS_PROMPT, first_row_answer, row, schema_of
from fake_retriever import ChunkListRetriever
from quaderno.corpus.chunk import Chunk
from quaderno.errors import SQLRefusedError
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.ask import SchemaDiscovery
from quaderno.methods.docsage.detect import detect_all, missing_relationships
from quaderno.methods.docsage.invented import invented_keys
from quaderno.methods.docsage.signals import Signal
from quaderno.methods.docsage.spans import mentions
from quaderno.methods.docsage.patch import SchemaPatch, apply_patches
from quaderno.methods.docsage.sqlgate import check_sql
from quaderno.methods.episode import Episode
from quaderno.methods.registry import make_method

# the measuring model's Set2 schema (benchmarks/results/docsage-synth-measuring/docsage-set2):
# ids everywhere, foreign keys only in the descriptions
SET2 = {"tables": [
    {"name": "commissions", "columns": [{"name": "commissionid", "type": "INT"},
                                        {"name": "commissionname"}],
     "primary_key": ["commissionid"]},
    {"name": "companies", "columns": [
        {"name": "companyid", "type": "INT"}, {"name": "companyname"},
        {"name": "commissionid", "type": "INT",
         "description": "Foreign key referencing Commissions.CommissionID"}],
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


def company_rows():
    # what the model extracted: every chunk's company numbered 1, its commission 1 or 2
    return [row("companies", "c1", companyid=1, companyname="Viathpox Systems", commissionid=1),
            row("companies", "c2", companyid=1, companyname="Bryskound Holdings",
                commissionid=1),
            row("companies", "c3", companyid=1, companyname="Gouqin Energy", commissionid=2),
            row("revenue", "c1", revenueid=1, companyid=1, year=2018, revenueamount=43789.5),
            row("revenue", "c3", revenueid=1, companyid=1, year=None, revenueamount=32950.7)]


def fks(table):
    return [(f.cols, f.ref_table, f.ref_cols) for f in table.foreign_keys]


# -- the rekey patch ---------------------------------------------------------------------

SET2_FIXES = [SchemaPatch(op="rekey", table="revenue", column="companyid"),
              SchemaPatch(op="rekey", table="commissions", column="commissionname"),
              SchemaPatch(op="rekey", table="companies", column="companyname")]


def test_rekey_moves_the_keys_to_names_and_references_follow():
    schema, notes = apply_patches(schema_of(SET2), SET2_FIXES, reason="test")
    assert notes == []
    commissions, companies, revenue = (schema.table(n) for n in
                                       ("commissions", "companies", "revenue"))
    assert (commissions.column_names, commissions.primary_key) == (["commissionname"],
                                                                   ["commissionname"])
    assert (companies.column_names, companies.primary_key) == (
        ["companyname", "commissionname"], ["companyname"])
    assert fks(companies) == [(["commissionname"], "commissions", ["commissionname"])]
    # the INT id became the commission's name, and its description says so
    assert companies.column("commissionname").type == "TEXT"
    assert companies.column("commissionname").description == \
        "the commission's commissionname (commissions.commissionname)"
    # revenue: keyed by the company it is about (its invented revenueid dropped), which
    # follows the company's new key
    assert (revenue.column_names, revenue.primary_key) == (
        ["companyname", "year", "revenueamount"], ["companyname"])
    assert fks(revenue) == [(["companyname"], "companies", ["companyname"])]
    # constraints and required attributes follow the renames
    assert [(c.lhs, c.rhs) for c in schema.constraints if c.kind == "fd"] == [
        (["companyname"], "year")]
    assert schema.requirements.attributes == ["revenue.revenueamount",
                                              "companies.companyname"]
    # the join the question needs exists now, and the natural SQL passes the gate
    assert missing_relationships(schema) == []
    check_sql("SELECT max(r.revenueamount) FROM revenue r JOIN companies c ON "
              "r.companyname = c.companyname WHERE c.commissionname = 'Drournlia Markets "
              "Commission'", schema)
    with pytest.raises(SQLRefusedError):
        check_sql("SELECT companyid FROM companies", schema)


def test_a_fact_table_must_be_rekeyed_before_its_reference_is_renamed():
    _, notes = apply_patches(schema_of(SET2), SET2_FIXES[::-1])
    assert notes == ["rekey revenue.companyid: no such column"]


CITIES = {"tables": [
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


def test_references_keep_their_role_and_never_take_an_unrelated_column():
    schema, notes = apply_patches(schema_of(CITIES),
                                  [SchemaPatch(op="rekey", table="cities", column="name")])
    assert notes == []
    leagues, teams = schema.table("leagues"), schema.table("teams")
    # city_id is named after the key: it becomes city_name; host, a declared foreign key,
    # keeps its role name; the league's own bare id is no reference
    assert leagues.column_names == ["id", "league", "city_name", "host"]
    assert leagues.primary_key == ["id"]
    assert sorted(fks(leagues)) == [(["city_name"], "cities", ["name"]),
                                    (["host"], "cities", ["name"])]
    assert leagues.column("host").type == "TEXT"
    # teams has a 'name' of its own (the team's): untouched, and no foreign key
    assert teams.column_names == ["team", "city_name", "name"]
    assert fks(teams) == [(["city_name"], "cities", ["name"])]


def test_a_referring_column_stays_in_its_tables_key():
    draft = {"tables": [
        {"name": "companies", "columns": [{"name": "companyid", "type": "INT"},
                                          {"name": "companyname"}],
         "primary_key": ["companyid"]},
        {"name": "revenue", "columns": [{"name": "companyid", "type": "INT"},
                                        {"name": "year", "type": "INT"},
                                        {"name": "amount", "type": "DOUBLE"}],
         "primary_key": ["companyid", "year"]}]}
    schema, _ = apply_patches(schema_of(draft), [SchemaPatch(op="rekey", table="companies",
                                                             column="companyname")])
    assert schema.table("revenue").primary_key == ["companyname", "year"]
    # a composite key is not rekey's to move
    same, notes = apply_patches(schema_of(draft), [SchemaPatch(op="rekey", table="revenue",
                                                               column="amount")])
    assert same.table("revenue").column_names == ["companyid", "year", "amount"]
    assert "several columns" in notes[0]


def test_a_key_that_does_not_name_its_table_is_referred_to_only_with_the_name():
    draft = {"tables": [
        {"name": "countries", "columns": [{"name": "code"}, {"name": "countryname"}],
         "primary_key": ["code"]},
        {"name": "airports", "columns": [{"name": "code"}, {"name": "airportname"},
                                         {"name": "country_code"}],
         "primary_key": ["code"]}]}
    schema, _ = apply_patches(schema_of(draft), [SchemaPatch(op="rekey", table="countries",
                                                             column="countryname")])
    airports = schema.table("airports")
    assert airports.column_names == ["code", "airportname", "countryname"]
    assert airports.primary_key == ["code"]  # the airport's own code is not a reference
    assert fks(airports) == [(["countryname"], "countries", ["countryname"])]


def test_a_self_reference_follows_the_key():
    draft = {"tables": [{"name": "employees", "columns": [
        {"name": "employee_id", "type": "INT"}, {"name": "name"},
        {"name": "manager_id", "type": "INT", "description": "id of the manager"}],
        "primary_key": ["employee_id"],
        "foreign_keys": [{"column": "manager_id", "references_table": "employees",
                          "references_column": "employee_id"}]}]}
    schema, notes = apply_patches(schema_of(draft), [SchemaPatch(op="rekey", table="employees",
                                                                 column="name")])
    emp = schema.table("employees")
    assert notes == [] and emp.column_names == ["name", "manager_name"]
    assert fks(emp) == [(["manager_name"], "employees", ["name"])]
    assert emp.column("manager_name").type == "TEXT"


def test_a_reference_folds_into_a_column_of_its_new_name_and_type_only():
    draft = json.loads(json.dumps(CITIES))
    draft["tables"][2]["columns"].append({"name": "city_name"})
    draft["tables"][1]["columns"].append({"name": "city_name", "type": "INT"})
    schema, _ = apply_patches(schema_of(draft),
                              [SchemaPatch(op="rekey", table="cities", column="name")])
    teams, leagues = schema.table("teams"), schema.table("leagues")
    # teams.city_name (TEXT, like cities.name) already held the city: cityid folds into it
    assert teams.column_names == ["team", "name", "city_name"]
    assert fks(teams) == [(["city_name"], "cities", ["name"])]
    # leagues.city_name is an INT: something else; city_id is left as it was, unlinked
    assert leagues.column_names == ["id", "league", "city_id", "host", "city_name"]
    assert fks(leagues) == [(["host"], "cities", ["name"])]


def test_declared_references_are_named_by_what_they_hold():
    draft = {"tables": [
        {"name": "companies", "columns": [{"name": "company_id", "type": "INT"},
                                          {"name": "company_name"}],
         "primary_key": ["company_id"]},
        {"name": "deals", "columns": [{"name": "deal"}, {"name": "company_id", "type": "INT"},
                                      {"name": "buyer_id", "type": "INT"}],
         "foreign_keys": [{"column": "company_id", "references_table": "companies",
                           "references_column": "company_id"},
                          {"column": "buyer_id", "references_table": "companies",
                           "references_column": "company_id"}]}]}
    schema, notes = apply_patches(schema_of(draft), [
        SchemaPatch(op="rekey", table="companies", column="company_name"),
        # the model renames the new key afterwards: what points at it follows
        SchemaPatch(op="rename_column", table="companies", column="company_name",
                    new_name="title")])
    deals = schema.table("deals")
    assert notes == [] and deals.column_names == ["deal", "company_name", "buyer_name"]
    assert sorted(fks(deals)) == [(["buyer_name"], "companies", ["title"]),
                                  (["company_name"], "companies", ["title"])]


def test_a_key_that_is_a_reference_moves_with_its_parent_only():
    draft = {"tables": [
        {"name": "companies", "columns": [{"name": "company_id", "type": "INT"},
                                          {"name": "company_name"}],
         "primary_key": ["company_id"]},
        {"name": "headquarters", "columns": [{"name": "company_id", "type": "INT"},
                                             {"name": "city_name"}],
         "primary_key": ["company_id"],
         "foreign_keys": [{"column": "company_id", "references_table": "companies",
                           "references_column": "company_id"}]}]}
    texts = {"h1": "Viathpox Systems sits in Oslo.", "h2": "Gouqin Energy, also in Oslo."}
    rows = [row("companies", "h1", company_id=1, company_name="Viathpox Systems"),
            row("companies", "h2", company_id=1, company_name="Gouqin Energy"),
            row("headquarters", "h1", company_id=1, city_name="Oslo"),
            row("headquarters", "h2", company_id=1, city_name="Oslo")]
    [signal] = invented_keys(schema_of(draft), rows, texts)
    assert signal.table == "companies"
    schema, _ = apply_patches(schema_of(draft), [signal.fix])
    hq = schema.table("headquarters")
    assert hq.primary_key == ["company_name"]
    assert fks(hq) == [(["company_name"], "companies", ["company_name"])]
    same, notes = apply_patches(schema_of(draft), [SchemaPatch(
        op="rekey", table="headquarters", column="city_name")])
    assert same.table("headquarters").primary_key == ["company_id"]
    assert "refers to companies" in notes[0]


def test_a_new_key_never_points_at_itself():
    draft = {"tables": [{"name": "employees", "columns": [
        {"name": "id", "type": "INT"}, {"name": "employee_id"}], "primary_key": ["id"]}]}
    schema, notes = apply_patches(schema_of(draft), [SchemaPatch(
        op="rekey", table="employees", column="employee_id")])
    assert notes == [] and schema.table("employees").column_names == ["employee_id"]
    assert schema.table("employees").foreign_keys == []


@pytest.mark.parametrize(("patch", "note"), [
    (SchemaPatch(op="rekey", table="companies", column="companyid"), "already the key"),
    (SchemaPatch(op="rekey", table="companies", column="ceo"), "no such column"),
])
def test_rekey_refusals_are_notes_and_change_nothing(patch, note):
    schema = schema_of(SET2)
    new, notes = apply_patches(schema, [patch])
    assert new is schema and len(notes) == 1 and note in notes[0]


def test_rekey_refuses_a_multi_valued_column_unless_it_is_the_name():
    draft = json.loads(json.dumps(SET2))
    draft["tables"][1]["columns"].append({"name": "product", "single_valued": False})
    schema = schema_of(draft)
    new, notes = apply_patches(schema, [SchemaPatch(op="rekey", table="companies",
                                                    column="product")])
    assert new is schema and "multi-valued" in notes[0]
    # an entity has one name: a name marked multi-valued was mislabeled, and the key is
    # single-valued
    draft["tables"][1]["columns"][1]["single_valued"] = False
    new, notes = apply_patches(schema_of(draft), [SchemaPatch(op="rekey", table="companies",
                                                              column="companyname")])
    assert notes == [] and new.table("companies").primary_key == ["companyname"]
    assert new.table("companies").column("companyname").single_valued
    assert not new.table("companies").column("product").single_valued


# the measuring model's Set3 schema: ids for keys, every column marked multi-valued
SET3 = {"tables": [
    {"name": "city", "columns": [{"name": "id", "type": "INT", "single_valued": False},
                                 {"name": "name", "single_valued": False},
                                 {"name": "country", "single_valued": False},
                                 {"name": "population", "type": "INT", "single_valued": False}],
     "primary_key": ["id"]},
    {"name": "league", "columns": [{"name": "id", "type": "INT", "single_valued": False},
                                   {"name": "name", "single_valued": False}],
     "primary_key": ["id"]}]}
MEMBER_TEXTS = {"n1": "Gilyx (Thubroar) is a member city of the League of Merounddian Cities; "
                "3,038,000 people live there.",
                "n2": "Gaenstas, population 41200, joined the League of Merounddian Cities."}


def test_a_name_marked_multi_valued_still_keys_its_table():
    rows = [row("city", "n1", id=1, name="Gilyx", country="Thubroar", population=3038000),
            row("city", "n2", id=1, name="Gaenstas", country=None, population=41200),
            row("league", "n1", id=1, name="League of Merounddian Cities"),
            row("league", "n2", id=1, name="League of Merounddian Cities")]
    signals = invented_keys(schema_of(SET3), rows, MEMBER_TEXTS)
    assert [(s.table, s.fix.column) for s in signals] == [("city", "name"), ("league", "name")]
    schema, notes = apply_patches(schema_of(SET3), [s.fix for s in signals])
    assert notes == [] and schema.table("city").primary_key == ["name"]
    assert schema.table("city").column("name").single_valued
    # another column marked multi-valued is no key, however unique (and, a name of the
    # city, no table naming nothing either); single-valued it is
    draft = json.loads(json.dumps(SET3))
    draft["tables"][0]["columns"][1]["name"] = "city_nickname"
    rows[0].values["city_nickname"] = rows[0].values.pop("name")
    rows[1].values["city_nickname"] = rows[1].values.pop("name")
    assert invented_keys(schema_of(draft), rows, MEMBER_TEXTS)[0].fix is None
    draft["tables"][0]["columns"][1]["single_valued"] = True
    assert invented_keys(schema_of(draft), rows, MEMBER_TEXTS)[0].fix.column == "city_nickname"


def test_a_job_title_marked_multi_valued_is_no_name():
    draft = {"tables": [{"name": "employees", "columns": [
        {"name": "employee_id", "type": "INT"}, {"name": "title", "single_valued": False},
        {"name": "salary", "type": "INT"}], "primary_key": ["employee_id"]}]}
    texts = {"e1": "A Head of Sales earns 41,000.", "e2": "A Head of Sales earns 58,000."}
    rows = [row("employees", c, employee_id=1, title="Head of Sales", salary=v)
            for c, v in (("e1", 41000), ("e2", 58000))]
    [signal] = invented_keys(schema_of(draft), rows, texts)
    assert signal.fix is None
    new, notes = apply_patches(schema_of(draft), [SchemaPatch(op="rekey", table="employees",
                                                              column="title")])
    assert "multi-valued" in notes[0] and new.table("employees").primary_key == ["employee_id"]


def test_without_a_key_a_reference_is_no_id_of_its_own_and_other_conflicts_stand():
    # managers.managerid is declared a reference to employees: a re-key keeps it
    draft = {"tables": [
        {"name": "employees", "columns": [{"name": "employee_id", "type": "INT"},
                                          {"name": "employee_name"}],
         "primary_key": ["employee_id"]},
        {"name": "managers", "columns": [{"name": "managerid", "type": "INT"},
                                         {"name": "manager_name"}],
         "foreign_keys": [{"column": "managerid", "references_table": "employees",
                           "references_column": "employee_id"}]}]}
    new, notes = apply_patches(schema_of(draft), [SchemaPatch(op="rekey", table="managers",
                                                              column="manager_name")])
    assert notes == [] and new.table("managers").primary_key == ["manager_name"]
    assert new.table("managers").column_names == ["managerid", "manager_name"]
    # commissions without a key align by their name: a chair conflict is no consequence of
    # the invented id, and stays to be asked
    rows = [row("companies", c, companyid=1, companyname=n, commissionid=i)
            for c, n, i in (("c1", "Viathpox Systems", 1999), ("c3", "Gouqin Energy", 123456))]
    rows += [row("commissions", c, commissionid=7, commissionname="Drournlia Markets "
                 "Commission", chair=ch) for c, ch in (("c1", "Ama Quell"), ("c2", "Ito Vance"))]
    keyless = json.loads(json.dumps(NO_KEYS))
    keyless["tables"][0]["columns"].append({"name": "chair"})
    found = detect_all(schema_of(keyless), rows, TEXTS)
    assert [s.fix.column for s in found if s.table == "commissions" and s.fix] == [
        "commissionname"]
    assert ("commissions", "chair") in {(s.table, s.column) for s in found
                                        if s.kind == "alignment_conflict"}


# -- detection ---------------------------------------------------------------------------

def test_invented_keys_are_found_and_carry_their_fix_in_the_order_it_works():
    signals = invented_keys(schema_of(SET2), company_rows(), TEXTS)
    # revenue first: re-keyed by the company it is about before companyid is renamed
    assert [(s.table, s.column) for s in signals] == [("revenue", "revenueid"),
                                                      ("commissions", "commissionid"),
                                                      ("companies", "companyid")]
    revenue, commissions, companies = signals
    assert revenue.fix == SchemaPatch(op="rekey", table="revenue", column="companyid")
    assert companies.kind == "alignment_conflict"
    assert companies.fix == SchemaPatch(op="rekey", table="companies", column="companyname")
    # '1' stands as a word in c2 ("1 of the highest"): one of three rows, still a minority;
    # three rows of its own are enough, its references are not read
    assert "2 of 3 trial rows: the key" in companies.detail and companies.values == [1]
    # the trial extracted no commission: its made-up ids are read in the companies' rows
    # (1, 1, 2; c2 happens to state a 1), and it is keyed by its name without rows to check
    assert "2 of 3 trial rows (read in companies.commissionid)" in commissions.detail
    assert commissions.fix == SchemaPatch(op="rekey", table="commissions",
                                          column="commissionname")
    assert sorted(commissions.values) == [1, 2] and commissions.chunk_ids == ["c1", "c3"]
    schema, notes = apply_patches(schema_of(SET2), [s.fix for s in signals])
    assert notes == [] and schema.table("revenue").primary_key == ["companyname"]
    assert schema == apply_patches(schema_of(SET2), SET2_FIXES)[0]


def test_the_name_after_the_entity_wins_over_another_name_column():
    draft = {"tables": [{"name": "companies", "columns": [
        {"name": "companyid", "type": "INT"}, {"name": "commissionname"},
        {"name": "companyname"}], "primary_key": ["companyid"]}]}
    rows = [row("companies", c, companyid=1, companyname=n, commissionname="Drournlia Markets "
                "Commission") for c, n in (("c1", "Viathpox Systems"),
                                           ("c3", "Gouqin Energy"))]
    [signal] = invented_keys(schema_of(draft), rows, TEXTS)
    assert signal.fix.column == "companyname"


@pytest.mark.parametrize("columns,rows,fix", [
    # another entity's name would put every employee of a country in one row; and a name
    # that differs from row to row may be what the rows are about: no name is added either
    ([{"name": "employee_id", "type": "INT"}, {"name": "country_name"}],
     [("e1", {"employee_id": 1, "country_name": "France"}),
      ("e2", {"employee_id": 1, "country_name": "Chile"})], None),
    # a column named after the entity but repeated within one chunk does not tell rows
    # apart: the employees gain a name column of their own to be keyed by
    ([{"name": "employee_id", "type": "INT"}, {"name": "employee_role"}],
     [("e1", {"employee_id": 1, "employee_role": "clerk"}),
      ("e1", {"employee_id": 2, "employee_role": "clerk"}),
      ("e2", {"employee_id": 1, "employee_role": "engineer"})], "employee_name"),
])
def test_a_column_that_cannot_tell_rows_apart_is_no_new_key(columns, rows, fix):
    draft = {"tables": [{"name": "employees", "columns": columns,
                         "primary_key": ["employee_id"]}]}
    texts = {"e1": "A clerk in France; another clerk.", "e2": "An engineer in Chile."}
    [signal] = invented_keys(schema_of(draft), [row("employees", c, **v) for c, v in rows],
                             texts)
    assert (signal.fix.column if signal.fix else None) == fix
    assert ("new column" in signal.detail) == (fix is not None)


def test_a_fact_table_with_several_facts_per_entity_in_a_chunk_is_not_keyed_by_it():
    rows = company_rows() + [row("revenue", "c1", revenueid=2, companyid=1, year=2019,
                                 revenueamount=41032.1)]
    by_table = {s.table: s for s in invented_keys(schema_of(SET2), rows, TEXTS)}
    assert by_table["revenue"].fix is None
    assert by_table["companies"].fix.column == "companyname"


def test_no_name_to_key_by_is_a_question_and_hides_nothing():
    draft = {"tables": [{"name": "employees", "columns": [
        {"name": "employee_id", "type": "INT"}, {"name": "country"},
        {"name": "salary", "type": "INT"}], "primary_key": ["employee_id"]}]}
    texts = {"e1": "A clerk in France earns 41,000.", "e2": "An engineer in France, 58,000."}
    rows = [row("employees", "e1", employee_id=7, country="France", salary=41000),
            row("employees", "e2", employee_id=7, country="France", salary=58000)]
    [signal] = invented_keys(schema_of(draft), rows, texts)
    # never keyed by the country (all of France would be one row): by a name it gains
    assert signal.fix == SchemaPatch(
        op="rekey", table="employees", column="employee_name",
        description="the name of the employee the row is about, as the documents write it")
    kinds = {(s.kind, s.column) for s in detect_all(schema_of(draft), rows, texts)}
    assert ("alignment_conflict", "salary") not in kinds  # the invented id's consequence
    # a schema with no name to gain (the name column exists, refused as a key) is asked
    # about, and hides nothing
    named = json.loads(json.dumps(draft))
    named["tables"][0]["columns"].append({"name": "employee_name", "single_valued": False})
    rows = [row("employees", r.provenance.chunk_id, **r.values, employee_name="a clerk")
            for r in rows]
    [signal] = invented_keys(schema_of(named), rows, texts)
    assert signal.fix is None
    kinds = {(s.kind, s.column) for s in detect_all(schema_of(named), rows, texts)}
    assert ("alignment_conflict", "salary") in kinds


def test_only_id_named_keys_the_chunks_do_not_state_are_invented():
    named = {"tables": [{"name": "companies", "columns": [
        {"name": "companyname"}, {"name": "rank", "type": "INT"}],
        "primary_key": ["companyname"]}]}
    rows = [row("companies", "c1", companyname="Viathpox Systems", rank=1),
            row("companies", "c2", companyname="Bryskound Holdings", rank=2)]
    assert invented_keys(schema_of(named), rows, {"c1": "Viathpox\nSystems ranks 1st.",
                                                  "c2": "Bryskound Holdings ranks 2nd."}) == []
    ranked = {"tables": [{"name": "ranking", "columns": [
        {"name": "rank", "type": "INT"}, {"name": "companyname"}], "primary_key": ["rank"]}]}
    rows = [row("ranking", "c1", rank=1, companyname="Viathpox Systems"),
            row("ranking", "c2", rank=2, companyname="Bryskound Holdings")]
    assert invented_keys(schema_of(ranked), rows, {"c1": "Viathpox ranks 1st.",
                                                   "c2": "Bryskound ranks 2nd."}) == []
    # a code the model wrote differently from the text ("E1042") is no numbering
    coded = {"tables": [{"name": "staff", "columns": [
        {"name": "staff_id"}, {"name": "name"}], "primary_key": ["staff_id"]}]}
    rows = [row("staff", "s1", staff_id="E1042", name="Ama Quell"),
            row("staff", "s2", staff_id="E7", name="Ito Vance")]
    assert invented_keys(schema_of(coded), rows, {"s1": "Ama Quell (badge E-1042)",
                                                  "s2": "Ito Vance, badge E-7"}) == []
    # one row, or rows whose chunks are unknown, prove nothing
    assert invented_keys(schema_of(SET2), company_rows()[:1], TEXTS) == []
    assert invented_keys(schema_of(SET2), company_rows(), {}) == []


# a table the trial extracted nothing of, named in other rows by an id (the measuring
# model's Set2 schema after its first repair: companies.commissionid held 1999, 123456, 0)
DEPTS = {"tables": [
    {"name": "departments", "columns": [{"name": "dept_id", "type": "INT"},
                                        {"name": "floor", "type": "INT"},
                                        {"name": "department_name"}],
     "primary_key": ["dept_id"]},
    {"name": "employees", "columns": [{"name": "employee_name"},
                                      {"name": "dept_id", "type": "INT"}],
     "primary_key": ["employee_name"],
     "foreign_keys": [{"column": "dept_id", "references_table": "departments",
                       "references_column": "dept_id"}]}]}
STAFF = {"e1": "Ama Quell works in Accounts.", "e2": "Ito Vance joined Logistics in 2019.",
         "e3": "Lee Orr, of Accounts, retired."}


def staff_rows(*depts):
    return [row("employees", c, employee_name=n, dept_id=d) for (c, n), d in zip(
        (("e1", "Ama Quell"), ("e2", "Ito Vance"), ("e3", "Lee Orr")), depts)]


def test_a_table_without_trial_rows_is_judged_by_the_ids_that_refer_to_it():
    [signal] = invented_keys(schema_of(DEPTS), staff_rows(1999, 123456, 0), STAFF)
    assert (signal.table, signal.column) == ("departments", "dept_id")
    assert "3 of 3 trial rows (read in employees.dept_id)" in signal.detail
    assert sorted(signal.values) == [0, 1999, 123456]
    # nothing to check a name against: the first column named after the entity (not the
    # floor, a number); the reference follows and is read as the department's name
    assert signal.fix == SchemaPatch(op="rekey", table="departments",
                                     column="department_name")
    schema, notes = apply_patches(schema_of(DEPTS), [signal.fix])
    assert notes == [] and schema.table("employees").column_names == ["employee_name",
                                                                      "dept_name"]
    assert fks(schema.table("employees")) == [(["dept_name"], "departments",
                                               ["department_name"])]
    # its made-up ids matching no department are the invented key's consequence, not a
    # question for the documents; without the chunks they are what is left to ask
    found = detect_all(schema_of(DEPTS), staff_rows(1999, 123456, 0), STAFF)
    assert [(s.table, s.column) for s in found if s.kind == "alignment_conflict"] == [
        ("departments", "dept_id")]
    assert ("employees", "dept_id") in {
        (s.table, s.column) for s in detect_all(schema_of(DEPTS), staff_rows(1999, 123456, 0))
        if s.kind == "alignment_conflict"}


def test_ids_the_chunks_state_or_names_in_the_reference_are_no_invention():
    stated = {"e1": "Ama Quell works in department 4.", "e2": "Ito Vance, department 7.",
              "e3": "Lee Orr left department 4."}
    assert invented_keys(schema_of(DEPTS), staff_rows(4, 7, 4), stated) == []
    # a reference holding names is no numbering; one row proves nothing
    assert invented_keys(schema_of(DEPTS), staff_rows("Finance", "Legal", "Finance"),
                         STAFF) == []
    assert invented_keys(schema_of(DEPTS), staff_rows(1999), STAFF) == []
    # the department's own rows say its key is a code, not a number: references with
    # numbers do not overrule them
    own = [row("departments", "e1", dept_id="ACC-1", department_name="Accounts"),
           row("departments", "e2", dept_id="LOG-2", department_name="Logistics")]
    assert invented_keys(schema_of(DEPTS), own + staff_rows(1999, 123456, 0), STAFF) == []


def test_a_table_without_rows_or_a_name_column_gains_its_name_and_references_follow():
    draft = json.loads(json.dumps(DEPTS))
    draft["tables"][0]["columns"] = draft["tables"][0]["columns"][:2]  # id and floor
    [signal] = invented_keys(schema_of(draft), staff_rows(1999, 123456, 0), STAFF)
    # dept_id numbers departments: the name added is the department's, not a "dept"'s
    assert (signal.table, signal.fix.column) == ("departments", "department_name")
    assert "no column names the department" in signal.detail
    # repaired, so its consequences (ids matching no department) are not asked about
    found = detect_all(schema_of(draft), staff_rows(1999, 123456, 0), STAFF)
    assert [(s.table, s.column) for s in found if s.kind == "alignment_conflict"] == [
        ("departments", "dept_id")]
    schema, notes = apply_patches(schema_of(draft), [signal.fix])
    departments, employees = schema.table("departments"), schema.table("employees")
    assert notes == [] and departments.column_names == ["department_name", "floor"]
    assert departments.primary_key == ["department_name"]
    assert departments.column("department_name").type == "TEXT"
    # the reference keeps its role name (dept_id -> dept_name) and holds the name now
    assert employees.column_names == ["employee_name", "dept_name"]
    assert employees.column("dept_name").type == "TEXT"
    assert fks(employees) == [(["dept_name"], "departments", ["department_name"])]
    # the staff chunks name their department: the SQL the question needs passes the gate
    check_sql("SELECT e.employee_name FROM employees e JOIN departments d ON "
              "e.dept_name = d.department_name WHERE d.floor = 2", schema)


def test_a_rekey_adds_only_a_name_column():
    draft = json.loads(json.dumps(DEPTS))
    draft["tables"][0]["columns"] = draft["tables"][0]["columns"][:2]
    for column in ("floor_count", "dept", "head"):
        new, notes = apply_patches(schema_of(draft), [
            SchemaPatch(op="rekey", table="departments", column=column)])
        assert notes == [f"rekey departments.{column}: no such column"]
        assert new == schema_of(draft)
    # the entity's own name the model asks for is added, as the detector's is; refused, it
    # is not left; a title (a department's is no name) or another entity's name is not
    for column in ("name", "department_name", "departmentname"):
        new, notes = apply_patches(schema_of(draft), [
            SchemaPatch(op="rekey", table="departments", column=column)])
        assert notes == [] and new.table("departments").primary_key == [column]
    new, notes = apply_patches(schema_of(draft), [
        SchemaPatch(op="rekey", table="departments", column="name", key_with=["nope"])])
    assert "not all other columns" in notes[0] and new == schema_of(draft)
    for table, column in (("departments", "title"), ("departments", "manager_name"),
                          ("employees", "department_name")):
        new, notes = apply_patches(schema_of(draft), [
            SchemaPatch(op="rekey", table=table, column=column)])
        assert notes == [f"rekey {table}.{column}: no such column"]
        assert new == schema_of(draft)


def test_own_rows_that_state_their_key_are_not_outvoted_by_their_references():
    depts = {"d1": "Department 4 is Accounts, on floor 2.", "d2": "Department 7 is Logistics."}
    own = [row("departments", "d1", dept_id=4, department_name="Accounts"),
           row("departments", "d2", dept_id=7, department_name="Logistics")]
    # the staff chunks name no department number: three references the documents do not
    # state, against two rows that do
    assert invented_keys(schema_of(DEPTS), own + staff_rows(4, 7, 4), STAFF | depts) == []
    # one row of its own is too few: the references are read with it
    [signal] = invented_keys(schema_of(DEPTS), own[:1] + staff_rows(1999, 123456, 0),
                             STAFF | depts)
    assert "3 of 4 trial rows (read in departments.dept_id, employees.dept_id)" in \
        signal.detail


def test_references_from_one_chunk_are_one_statement():
    # a company's row and its revenue row from one chunk do not make two pieces of evidence
    draft = json.loads(json.dumps(DEPTS))
    rows = staff_rows(1999, 123456)
    for r in rows:
        r.provenance.chunk_id = "e1"
    assert invented_keys(schema_of(draft), rows, STAFF) == []


@pytest.mark.parametrize(("columns", "fix"), [
    (["department_head", "department_name"], "department_name"),
    # neither is the name: one is added
    (["department_head", "department_type"], "department_name"),
    (["title", "department_head"], "title"),
    (["departmentname"], "departmentname"),
])
def test_without_rows_only_a_column_that_says_it_is_the_name_becomes_the_key(columns, fix):
    # nothing to check against: the head or type of a department would merge departments
    draft = json.loads(json.dumps(DEPTS))
    draft["tables"][0]["columns"] = [{"name": "dept_id", "type": "INT"},
                                     *({"name": c} for c in columns)]
    [signal] = invented_keys(schema_of(draft), staff_rows(1999, 123456, 0), STAFF)
    assert (signal.fix.column if signal.fix else None) == fix


def test_a_column_declared_to_refer_elsewhere_holds_no_other_key():
    draft = {"tables": [
        {"name": "teams", "columns": [{"name": "team_id", "type": "INT"}, {"name": "team_name"}],
         "primary_key": ["team_id"]},
        {"name": "clubs", "columns": [{"name": "club_id", "type": "INT"}, {"name": "club_name"}],
         "primary_key": ["club_id"]},
        {"name": "players", "columns": [{"name": "player_name"},
                                        {"name": "team_id", "type": "INT"}],
         "primary_key": ["player_name"],
         "foreign_keys": [{"column": "team_id", "references_table": "clubs",
                           "references_column": "club_id"}]}]}
    rows = [row("players", c, player_name=n, team_id=99) for c, n in (("e1", "Ama Quell"),
                                                                       ("e2", "Ito Vance"))]
    signals = invented_keys(schema_of(draft), rows, STAFF)
    # players.team_id is a club's id by declaration: evidence about clubs, not teams
    assert [s.table for s in signals] == ["clubs"]
    assert "read in players.team_id" in signals[0].detail


def test_a_table_keyed_by_a_reference_to_a_repaired_key_is_not_asked_about():
    # company_profiles is keyed by the invented company id: aligned by it, its rows
    # conflict, and those conflicts are the invention's consequence
    draft = json.loads(json.dumps(SET2))
    draft["tables"].append({"name": "company_profiles", "columns": [
        {"name": "companyid", "type": "INT"}, {"name": "ceo"}], "primary_key": ["companyid"]})
    rows = company_rows() + [row("company_profiles", c, companyid=1, ceo=n)
                             for c, n in (("c1", "Ama Quell"), ("c3", "Ito Vance"))]
    conflicts = {(s.table, s.column) for s in detect_all(schema_of(draft), rows, TEXTS)
                 if s.kind == "alignment_conflict"}
    assert ("company_profiles", "ceo") not in conflicts
    assert ("company_profiles", "ceo") in {
        (s.table, s.column) for s in detect_all(schema_of(draft), rows)
        if s.kind == "alignment_conflict"}


# the measuring model's Set2 schema once no generic table was offered: the same ids, and no
# primary key at all (rows align by their first name column; SQL joins by the ids)
NO_KEYS = {"tables": [
    {"name": "commissions", "columns": [{"name": "commissionid", "type": "INT"},
                                        {"name": "commissionname"}]},
    {"name": "companies", "columns": [{"name": "companyid", "type": "INT"},
                                      {"name": "companyname"},
                                      {"name": "commissionid", "type": "INT"}]},
    {"name": "revenue", "columns": [{"name": "companyname"}, {"name": "year", "type": "INT"},
                                    {"name": "revenueamount", "type": "DOUBLE"}]}]}


def test_a_table_without_a_primary_key_is_judged_by_its_id_column():
    rows = [row("companies", c, companyid=1, companyname=n, commissionid=i)
            for c, n, i in (("c1", "Viathpox Systems", 1999), ("c2", "Bryskound Holdings", 0),
                            ("c3", "Gouqin Energy", 123456))]
    signals = invented_keys(schema_of(NO_KEYS), rows, TEXTS)
    assert [(s.table, s.column, s.fix.column) for s in signals] == [
        ("commissions", "commissionid", "commissionname"),
        ("companies", "companyid", "companyname")]
    schema, notes = apply_patches(schema_of(NO_KEYS), [s.fix for s in signals])
    assert notes == []
    companies, commissions = schema.table("companies"), schema.table("commissions")
    # the ids went as keys would, and the company names its commission
    assert (companies.column_names, companies.primary_key) == (
        ["companyname", "commissionname"], ["companyname"])
    assert fks(companies) == [(["commissionname"], "commissions", ["commissionname"])]
    assert commissions.column_names == ["commissionname"]
    check_sql("SELECT max(r.revenueamount) FROM revenue r JOIN companies c ON "
              "r.companyname = c.companyname WHERE c.commissionname = 'Drournlia Markets "
              "Commission'", schema)


def test_a_reference_is_no_id_column_of_the_table_that_holds_it():
    draft = {"tables": [{"name": "employees", "columns": [{"name": "employee_name"},
                                                          {"name": "dept_id", "type": "INT"}]}]}
    schema, notes = apply_patches(schema_of(draft), [SchemaPatch(
        op="rekey", table="employees", column="employee_name")])
    assert notes == [] and schema.table("employees").column_names == ["employee_name",
                                                                      "dept_id"]
    assert schema.table("employees").primary_key == ["employee_name"]
    # its own id is one, and goes; keyed by the id itself, nothing goes
    draft["tables"][0]["columns"].append({"name": "employee_id", "type": "INT"})
    schema, _ = apply_patches(schema_of(draft), [SchemaPatch(
        op="rekey", table="employees", column="employee_name")])
    assert schema.table("employees").column_names == ["employee_name", "dept_id"]
    schema, notes = apply_patches(schema_of(draft), [SchemaPatch(
        op="rekey", table="employees", column="employee_id")])
    assert notes == [] and schema.table("employees").primary_key == ["employee_id"]
    assert schema.table("employees").column_names == ["employee_name", "dept_id",
                                                      "employee_id"]


def test_mentions_reads_line_breaks_and_space_runs_as_one_space():
    assert mentions("the firm Viathpox\n  Systems said", "Viathpox Systems", "TEXT")
    assert not mentions("founded in 1991", 1, "INT")
    assert mentions("ranked 1 of 40", 1, "INT") and mentions("ranked 1.", 1, "INT")
    # a number inside a larger one is not stated
    assert not mentions("revenue of 1,234.5 million", 1, "INT")
    assert not mentions("grew 1.5% and 43,789.5", 5, "INT")
    assert mentions("revenue of 1,234.5 million", 1234.5, "DOUBLE")


def test_detect_all_puts_the_invented_key_before_its_consequences():
    rows = company_rows()
    without = detect_all(schema_of(SET2), rows)
    # aligned by the invented id, three companies look like one with three names
    assert ("companies", "companyname") in {(s.table, s.column) for s in without
                                            if s.kind == "alignment_conflict"}
    found = detect_all(schema_of(SET2), rows, TEXTS)
    assert [(s.table, s.column) for s in found if s.kind == "alignment_conflict"] == [
        ("revenue", "revenueid"), ("commissions", "commissionid"), ("companies", "companyid")]


# -- ASK and the method ------------------------------------------------------------------

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


CHUNKS = [Chunk(id=c, text=t, kb="c") for c, t in TEXTS.items()]


def discover(trial, detect, script=None, **kw):
    script = script or Script()
    ep = Episode("What is the highest annual revenue among the companies of the Drournlia "
                 "Markets Commission?", method="docsage", lm=LM(FakeLLM(respond=script)),
                 retriever=ChunkListRetriever(CHUNKS))
    probe = ChunkListRetriever(CHUNKS).retrieve("", 3)
    schema, log = asyncio.run(SchemaDiscovery(mode="active", **kw).run(
        ep, probe, probe, extract=trial, detect=detect))
    return schema, log, ep, script


def test_ask_repairs_invented_keys_first_and_asks_on_the_repaired_schema():
    seen = []

    async def trial(schema, probe):
        seen.append(schema)
        if schema.version == 0:
            return company_rows()
        # the re-keyed schema: names as keys, nothing invented left; revenue amounts unread
        return [row(t, c, companyname=n, **extra)
                for c, n in (("c1", "Viathpox Systems"), ("c3", "Gouqin Energy"))
                for t, extra in (("companies", {}), ("revenue", {"revenueamount": None}))]

    schema, log, ep, script = discover(trial, lambda s, r: detect_all(s, r, TEXTS))
    first = log.rounds[0]
    assert [(p["op"], p["table"], p["by"]) for p in first.patches] == [
        ("rekey", "revenue", "detector"), ("rekey", "commissions", "detector"),
        ("rekey", "companies", "detector")]
    assert [s.table for s in first.repairs] == ["revenue", "commissions", "companies"]
    # nothing asked in the round that repaired: its other signals were found on the old
    # schema, and the next round re-reads
    assert first.clarifications == [] and first.signals
    second = log.rounds[1]
    assert second.repairs == [] and len(second.signals) == len(second.clarifications) == 1
    assert seen[1].table("companies").primary_key == ["companyname"]
    assert schema.table("revenue").column_names == ["companyname", "year", "revenueamount"]
    assert seen[1].table("companies").column_names == ["companyname", "commissionname"]
    assert schema.version == 3 and schema.history[-1]["reason"] == "ask round 1: detector"
    assert sum("repaired by the detector" in f for f in ep.trace.fallbacks) == 3
    # round 2 asked about what was left (the required revenue unread), on the new schema
    asked = [p for p in script.prompts if p.startswith("A schema was built")]
    assert len(asked) == 1 and "companyid" not in asked[0] and "companyname" in asked[0]
    assert len(log.rounds) == 2 and log.stop_reason == "no clarification question was answered"


def test_only_applied_repairs_are_recorded():
    bad = Signal(kind="alignment_conflict", table="companies", column="companyid",
                 detail="invented", fix=SchemaPatch(op="rekey", table="companies",
                                                    column="ceo"))

    async def trial(schema, probe):
        return company_rows()
    schema, log, ep, script = discover(trial, lambda s, r: [bad])
    # nothing in the round; after it, code declares the references the names imply
    assert log.rounds[0].patches == [] and schema.version == 1
    assert log.declared == ["companies.commissionid -> commissions.commissionid",
                            "revenue.companyid -> companies.companyid"]
    assert log.rounds[0].notes == ["rekey companies.ceo: no such column"]
    assert log.stop_reason == "no signal could be repaired or asked"
    assert not any("repaired by the detector" in f for f in ep.trace.fallbacks)
    assert not any(p.startswith("A schema was built") for p in script.prompts)
    # beside one that applies, the failed one is noted and the applied one recorded
    good = bad.model_copy(update={"detail": "invented too", "fix": SchemaPatch(
        op="rekey", table="companies", column="companyname")})
    schema, log, ep, _ = discover(trial, lambda s, r: [bad, good] if s.version == 0 else [],
                                  max_iters=2)
    assert [p["column"] for p in log.rounds[0].patches] == ["companyname"]
    assert log.rounds[0].notes == ["rekey companies.ceo: no such column"]
    assert schema.table("companies").primary_key == ["companyname"]
    assert sum("repaired by the detector" in f for f in ep.trace.fallbacks) == 1


UNIS = [Chunk(id=f"{d}#0", text=t, kb="unis", title=title) for d, title, t in (
    ("varn", "Varnholt University", "Founded in 1874, it is the oldest."),
    ("ostr", "Ostrel College", "Established in 1921 by the guild."),
    ("quel", "", "Quellmar Institute, founded 1902, is the third."))]
FOUNDED = re.compile(r"([A-Z]\w+ (?:University|College|Institute))\D*?(\d{4})")


class SurrogateModel:
    """Draws an ``id`` key no document states and numbers every chunk's row 1; reads the
    names (two of them only in the chunk's title) and years from what it is shown."""

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
        if user.startswith(SYNTHESIS_PROMPT):
            return first_row_answer(user)
        raise AssertionError(f"unexpected prompt {user[:80]!r}")


def test_docsage_rekeys_an_invented_id_by_the_names_extraction_saw(tmp_path):
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


# the measuring model's Set1 draft in grid-docsage-set1: a nationality table keyed by an id
# no document states and the nationality; every chunk numbered its laureate 1, and CLEAR
# could not tell the laureates of one nationality apart
SET1 = {"tables": [
    {"name": "stedrurial_medal", "columns": [{"name": "laureate_name"},
                                             {"name": "year", "type": "INT"}],
     "primary_key": ["laureate_name"]},
    {"name": "laureate_nationality", "columns": [
        {"name": "laureate_id", "type": "INT"}, {"name": "nationality"},
        {"name": "birth_year", "type": "INT"}, {"name": "stedrurial_medal_laureate_name"}],
     "primary_key": ["laureate_id", "nationality"],
     "foreign_keys": [{"column": "stedrurial_medal_laureate_name",
                       "references_table": "stedrurial_medal",
                       "references_column": "laureate_name"}]},
    {"name": "award_laureate", "columns": [{"name": "laureate_id", "type": "INT"},
                                           {"name": "award_name"},
                                           {"name": "year", "type": "INT"}],
     "primary_key": ["laureate_id", "award_name"]}]}
SET1_TEXTS = {
    "d1": "Skoustil Kelskyrn (S. Kelskyrn) is a laureate of the Stedrurial Medal, born in "
          "1958. Nationality: Kraxryndia. She received the Stedrurial Medal in 1990.",
    "d2": "Dyrte Fourzixze, born 1971, holds Kraxryndia and Pouthpiund nationality. He "
          "received the Stedrurial Medal in 2008.",
}


def set1_rows():
    return [row("laureate_nationality", "d1", laureate_id=1, nationality="Kraxryndia",
                birth_year=1958, stedrurial_medal_laureate_name="Skoustil Kelskyrn"),
            row("laureate_nationality", "d2", laureate_id=1, nationality="Kraxryndia",
                birth_year=1971, stedrurial_medal_laureate_name="Dyrte Fourzixze"),
            row("laureate_nationality", "d2", laureate_id=1, nationality="Pouthpiund",
                birth_year=1971, stedrurial_medal_laureate_name="Dyrte Fourzixze"),
            row("award_laureate", "d1", laureate_id=1, award_name="Stedrurial Medal",
                year=1990),
            row("award_laureate", "d2", laureate_id=1, award_name="Stedrurial Medal",
                year=2008)]


def test_the_invented_id_part_of_a_composite_key_is_replaced_and_the_rest_kept():
    by_table = {s.table: s for s in invented_keys(schema_of(SET1), set1_rows(), SET1_TEXTS)}
    # the nationality table by the laureate its reference names, with the nationality
    nat = by_table["laureate_nationality"]
    assert (nat.column, nat.fix) == ("laureate_id", SchemaPatch(
        op="rekey", table="laureate_nationality", column="stedrurial_medal_laureate_name",
        key_with=["nationality"]))
    assert "key laureate_nationality by (stedrurial_medal_laureate_name, nationality)" in \
        nat.detail
    # a table naming nothing gains the laureate's name beside the award
    award = by_table["award_laureate"]
    assert (award.fix.column, award.fix.key_with) == ("laureate_name", ["award_name"])
    schema, notes = apply_patches(schema_of(SET1), [nat.fix, award.fix])
    assert notes == []
    assert schema.table("laureate_nationality").primary_key == [
        "stedrurial_medal_laureate_name", "nationality"]
    assert schema.table("laureate_nationality").column_names == [
        "nationality", "birth_year", "stedrurial_medal_laureate_name"]
    assert schema.table("award_laureate").primary_key == ["laureate_name", "award_name"]
    assert schema.table("award_laureate").column_names == ["laureate_name", "award_name",
                                                           "year"]


@pytest.mark.parametrize("key,column,key_with", [
    (["laureate_id", "nationality"], "birth_year", []),             # the rest not kept
    (["laureate_id", "nationality"], "birth_year", ["laureate_id"]),  # the id kept
    (["laureate_id", "country_id"], "stedrurial_medal_laureate_name", []),  # two ids
])
def test_a_composite_key_is_moved_only_for_its_one_id_part(key, column, key_with):
    draft = json.loads(json.dumps(SET1))
    table = draft["tables"][1]
    table["columns"].append({"name": "country_id", "type": "INT"})
    table["primary_key"] = key
    new, notes = apply_patches(schema_of(draft), [SchemaPatch(
        op="rekey", table="laureate_nationality", column=column, key_with=key_with)])
    assert new == schema_of(draft) and "several columns" in notes[0]


def test_a_composite_key_without_one_unstated_id_part_is_no_invention():
    # the chunks state the id: no invention
    stated = {c: t + " Laureate no. 1." for c, t in SET1_TEXTS.items()}
    assert "laureate_nationality" not in {
        s.table for s in invented_keys(schema_of(SET1), set1_rows(), stated)}
    # an id part that refers to another table's id moves with that table's re-key
    draft = {"tables": [
        {"name": "companies", "columns": [{"name": "company_id", "type": "INT"},
                                          {"name": "company_name"}],
         "primary_key": ["company_id"]},
        {"name": "revenue", "columns": [{"name": "company_id", "type": "INT"},
                                        {"name": "year", "type": "INT"},
                                        {"name": "amount", "type": "DOUBLE"}],
         "primary_key": ["company_id", "year"]}]}
    rows = [row("companies", c, company_id=1, company_name=n)
            for c, n in (("c1", "Viathpox Systems"), ("c3", "Gouqin Energy"))] + [
        row("revenue", c, company_id=1, year=2018, amount=1.0) for c in ("c1", "c3")]
    found = {s.table: s for s in invented_keys(schema_of(draft), rows, TEXTS)}
    assert sorted(found) == ["companies"]
    schema, notes = apply_patches(schema_of(draft), [found["companies"].fix])
    assert notes == [] and schema.table("revenue").primary_key == ["company_name", "year"]
    # a name column that cannot tell rows apart even with the rest of the key is none
    rows = set1_rows()[:3] + [row("laureate_nationality", "d2", laureate_id=2,
                                  nationality="Pouthpiund", birth_year=1971,
                                  stedrurial_medal_laureate_name="Dyrte Fourzixze")]
    nat = {s.table: s for s in invented_keys(schema_of(SET1), rows, SET1_TEXTS)}
    assert nat["laureate_nationality"].fix is None


def test_a_composite_key_whose_rest_is_the_name_loses_its_id():
    """The review of bde2878: ``(film_id, title)`` gained a new ``film_name`` column."""
    draft = {"tables": [{"name": "films", "columns": [
        {"name": "film_id", "type": "INT"}, {"name": "title"}, {"name": "year", "type": "INT"}],
        "primary_key": ["film_id", "title"]}]}
    texts = {"f1": "Night Train (1961) is a drama.", "f2": "Blue Coast came out in 1974."}
    rows = [row("films", "f1", film_id=1, title="Night Train", year=1961),
            row("films", "f2", film_id=1, title="Blue Coast", year=1974)]
    [signal] = invented_keys(schema_of(draft), rows, texts)
    assert signal.fix == SchemaPatch(op="rekey", table="films", column="title")
    assert "new column" not in signal.detail
    schema, notes = apply_patches(schema_of(draft), [signal.fix])
    assert notes == [] and schema.table("films").primary_key == ["title"]
    assert schema.table("films").column_names == ["title", "year"]
