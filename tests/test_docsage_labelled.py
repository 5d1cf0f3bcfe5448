"""A value its chunk gives as another attribute is emptied (labelled.py, via unstated.py)."""

from __future__ import annotations

import asyncio
import json

import pytest
from docsage_fakes import read_twice

from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.clear import ClearConfig, run_clear
from quaderno.methods.docsage.confidence import Calibration
from quaderno.methods.docsage.labelled import Label, Labels, names_column, other_attribute
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Column, Schema
from quaderno.methods.docsage.store import TupleStore
from quaderno.methods.docsage.unstated import unstated, unstated_rows

SCHEMA = Schema.model_validate({"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [{"name": "company_name"}, {"name": "sector"}, {"name": "country"},
                 {"name": "chief_executive"}, {"name": "offices", "type": "INT"},
                 {"name": "commission_name"}],
     "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                       "ref_cols": ["commission_name"]}]},
    {"name": "commissions", "primary_key": ["commission_name"],
     "columns": [{"name": "commission_name"}]}]})
COMPANIES = SCHEMA.table("companies")

# the benchmark's chunk d00050 of Set2, as the generator writes it
D50 = ("An earlier report gave the founding year of Riandgiax Systems as 1882; the correct "
       "year is 1880. As for slogan, Riandgiax Systems is recorded under Power from Krildyr. "
       "According to the profile, the company is located in Gepaethar. A total of 269 offices "
       "was recorded for Riandgiax.")


def row(chunk: str = "d50", **values) -> Row:
    return Row(table="companies", values=values, provenance=Provenance(chunk_id=chunk))


@pytest.mark.parametrize("column", ["sector", "commission_name", "chief_executive"])
def test_a_slogan_read_into_any_other_column_is_emptied(column) -> None:
    # the measuring model wrote it into each of these three in one run or another
    values = {"company_name": "Riandgiax Systems", "country": "Gepaethar", "offices": 269,
              column: "Power from Krildyr"}
    [out] = unstated(SCHEMA, {"companies": [row(**values)]}, "d50", D50)["companies"]
    assert out.values[column] is None
    assert (out.values["country"], out.values["offices"]) == ("Gepaethar", 269)
    [note] = out.provenance.corrections
    assert (note.column, note.old, note.reason, note.evidence_quote) == (
        column, "Power from Krildyr", "other-attribute", "As for slogan,")


@pytest.mark.parametrize(("text", "value", "label"), [
    ("Slogan: Power from Krildyr, in the case of Riandgiax Systems.", "Power from Krildyr",
     ("slogan",)),
    ("Riandgiax Systems advertises with the slogan 'Go far'.", "Go far", ("slogan",)),
    ("Riandgiax Systems uses the slogan \u2018Go far\u2019.", "Go far", ("slogan",)),
    ("The motto of Riandgiax Systems is Onward and Upward.", "Onward and Upward", ("motto",)),
    ("Riandgiax Systems, whose ceo is Anna Li, keeps a low profile.", "Anna Li", ("ceo",)),
    ("Riandgiax Systems lists Anna Li as its ceo since 2001.", "Anna Li", ("ceo",)),
    ("Riandgiax Systems reports to Anna Li (ceo).", "Anna Li", ("ceo",)),
    ("As for country, Riandgiax Systems is recorded under Gepaethar.", "Gepaethar",
     ("country",)),
    ("Country: Gepaethar; sector: energy.", "energy", ("sector",)),
    # written plainly: no label
    ("Riandgiax Systems is active in the energy sector.", "energy", None),
    ("Riandgiax Systems is Anna Li's employer.", "Anna Li", None),
    # the entity an "As for" sentence opens with is no slogan
    (D50, "Riandgiax Systems", None),
    # the review of 9c496d5: an earlier clause's label is not this value's ...
    ("The slogan of Riandgiax Systems is Go Far and its chief executive is Anna Li.",
     "Anna Li", ("chief", "executive")),
    ("The sector of Riandgiax Systems is energy and its country is Gepaethar.", "Gepaethar",
     ("country",)),
    # ... "As for L," labels only a value a copula introduces ...
    ("As for its sector, Riandgiax Systems is an energy firm based in Gepaethar.",
     "Gepaethar", None),
    ("Regarding the country, Riandgiax Systems is led by Anna Li.", "Anna Li", None),
    ("As for sector, Riandgiax Systems is energy.", "energy", ("sector",)),
    # ... "as" may be a conjunction ...
    ("In 2005 Riandgiax Systems moved to Gepaethar as the energy sector boomed.",
     "Gepaethar", None),
    ("Riandgiax Systems names Anna Li as chief executive.", "Anna Li",
     ("chief", "executive")),
    # ... a possessor is no part of the label, nor a pronoun ...
    ("The university's rector is Anna Li.", "Anna Li", ("rector",)),
    ("Riandgiax Systems left, and it is Gepaethar where it stays.", "Gepaethar", None),
    # ... a title's full stop ends no sentence, and a value read with its quotes is found
    ("Its chief executive is Dr. Anna Li.", "Anna Li", ("chief", "executive")),
    ("Riandgiax Systems uses the slogan 'Go far'.", "'Go far'", ("slogan",)),
])
def test_labels_the_chunk_writes(text, value, label) -> None:
    assert {found.words if found else None for found in Labels(text).of(value)} == {label}


def test_every_place_the_value_is_written_is_read() -> None:
    text = "Slogan: Gepaethar First. Gepaethar First is also the name of its headquarters."
    assert [lab.words if lab else None for lab in Labels(text).of("Gepaethar First")] == [
        ("slogan",), None]
    assert Labels(text).of("Mount Zorn") == []


@pytest.mark.parametrize(("label", "column", "same"), [
    (("sector",), "sector", True),
    (("sectors",), "sector", True),                    # singular
    (("telecommunications",), "telecom_area", True),   # five letters
    (("ceo",), "chief_executive_officer", True),       # initials of the column's words
    (("chief", "executive"), "ce", True),              # initials of the label's words
    (("slogan",), "commission_name", False),
    (("ceo",), "chief_executive", False),              # an abbreviation it cannot read
])
def test_a_label_names_a_column_by_words_stems_or_initials(label, column, same) -> None:
    assert names_column(Label(label, ""), Column(name=column)) is same


@pytest.mark.parametrize(("label", "column"), [
    (("founding",), "founder"), (("county",), "country"), (("committee",), "commission"),
    (("university",), "type"),                         # a word of its description only
])
def test_another_column_is_named_by_its_name_words_only(label, column) -> None:
    col = Column(name=column, description="whether the university is public or private")
    assert names_column(Label(label, ""), col, loose=False) is False


def test_a_possessor_naming_another_column_empties_nothing() -> None:
    """The review of 9c496d5: "university" in "The university's rector" matched the
    description of ``type``, and the president was emptied."""
    schema = Schema.model_validate({"tables": [
        {"name": "universities", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "president"},
                     {"name": "type", "description": "whether the university is public or "
                                                     "private"}]}]})
    [out] = unstated(schema, {"universities": [
        Row(table="universities", values={"name": "Varnholt University",
                                          "president": "Anna Li"},
            provenance=Provenance(chunk_id="u1"))]}, "u1",
        "Varnholt University is old. The university's rector is Anna Li.")["universities"]
    assert out.values["president"] == "Anna Li"


def test_other_attribute_needs_every_place_labelled_and_none_by_the_column() -> None:
    slogan, plain = Labels("Slogan: Krildyr.").of("Krildyr")[0], None
    sector = COMPANIES.columns[1]
    assert sector.name == "sector"
    assert other_attribute(COMPANIES, sector, [slogan]) == slogan
    assert other_attribute(COMPANIES, sector, [slogan, plain]) is None
    assert other_attribute(COMPANIES, sector, []) is None
    by_sector = Labels("Sector: Krildyr.").of("Krildyr")[0]
    assert other_attribute(COMPANIES, sector, [slogan, by_sector]) is None


def test_a_label_naming_nothing_in_the_schema_says_nothing() -> None:
    # "ceo" is the chief executive written another way: the value stays
    text = "The ceo of Riandgiax Systems is Anna Li."
    [out] = unstated(SCHEMA, {"companies": [row(company_name="Riandgiax Systems",
                                                chief_executive="Anna Li")]},
                     "d50", text)["companies"]
    assert out.values["chief_executive"] == "Anna Li"
    assert out.provenance.corrections == []


def test_a_label_naming_another_column_moves_nothing_but_empties_the_cell() -> None:
    text = "As for country, Riandgiax Systems is recorded under Gepaethar."
    [out] = unstated(SCHEMA, {"companies": [row(company_name="Riandgiax Systems",
                                                sector="Gepaethar", country=None)]},
                     "d50", text)["companies"]
    assert (out.values["sector"], out.values["country"]) == (None, None)
    assert [c.reason for c in out.provenance.corrections] == ["other-attribute"]
    # the column the label names keeps it
    [kept] = unstated(SCHEMA, {"companies": [row(company_name="Riandgiax Systems",
                                                 country="Gepaethar")]},
                      "d50", text)["companies"]
    assert kept.values["country"] == "Gepaethar"


def test_a_value_written_once_plainly_stays() -> None:
    text = ("As for slogan, Riandgiax Systems is recorded under Krildyr. Riandgiax Systems "
            "is based in Krildyr.")
    [out] = unstated(SCHEMA, {"companies": [row(company_name="Riandgiax Systems",
                                                country="Krildyr")]},
                     "d50", text)["companies"]
    assert out.values["country"] == "Krildyr"


def test_keys_and_a_slogan_column_are_left() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "motto"}]}]})
    text = "Slogan: Power from Krildyr. Riandgiax Systems has no other motto."
    [out] = unstated(schema, {"companies": [
        Row(table="companies", values={"company_name": "Riandgiax Systems",
                                       "motto": "Power from Krildyr"},
            provenance=Provenance(chunk_id="d50"))]}, "d50", text)["companies"]
    assert out.values["motto"] == "Power from Krildyr"      # free text in a free-text column
    # the key itself is never checked (unstated's free columns)
    [keyed] = unstated(schema, {"companies": [
        Row(table="companies", values={"company_name": "Riandgiax Systems"},
            provenance=Provenance(chunk_id="d50"))]}, "d50",
        "Slogan: Riandgiax Systems.")["companies"]
    assert keyed.values["company_name"] == "Riandgiax Systems"


def _reply(request) -> str:
    return json.dumps({"companies": [{"company_name": "Riandgiax Systems",
                                      "sector": "Power from Krildyr", "country": "Gepaethar",
                                      "chief_executive": None, "offices": 269,
                                      "commission_name": "Power from Krildyr"}],
                       "commissions": []})


def test_every_read_of_the_store_applies_it(tmp_path) -> None:
    fake = FakeLLM(respond=_reply)
    first, again = read_twice(fake, Chunk(id="d50", text=D50), SCHEMA, TupleStore(tmp_path))
    assert len(fake.requests) == 1     # the second read came from the store
    for rows in (first, again):
        [company] = rows
        assert (company.values["sector"], company.values["commission_name"]) == (None, None)
        assert (company.values["country"], company.values["offices"]) == ("Gepaethar", 269)


def test_clears_committee_cannot_vote_it_back() -> None:
    fake = FakeLLM(respond=_reply)
    result = asyncio.run(run_clear(LM(fake), SCHEMA, [Chunk(id="d50", text=D50)],
                                   config=ClearConfig(level_b=False),
                                   calibration=Calibration(tau_low=0.95)))
    assert result.report.llm_calls_correct > 0        # the committee did vote
    [company] = [r for r in result.rows if r.table == "companies"]
    assert (company.values["sector"], company.values["commission_name"]) == (None, None)
    assert company.values["offices"] == 269


def test_cells_voted_again_are_read_again_others_are_not() -> None:
    voted = row(company_name="Riandgiax Systems", sector="Power from Krildyr",
                chief_executive="Power from Krildyr")
    [out] = unstated_rows(SCHEMA, [voted], {"d50": D50}, only={0: ["sector"]})
    assert out.values["sector"] is None
    assert out.values["chief_executive"] == "Power from Krildyr"
