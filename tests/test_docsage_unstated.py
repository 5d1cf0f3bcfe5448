"""A value its chunk does not state is emptied on read and after CLEAR's committee (the
measuring model's invented Set2 headcounts and countries, ``docsage-case-set2``); what the
chunk states in another form, keys and references stay."""

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
from quaderno.methods.docsage.invented import _new_key
from quaderno.methods.docsage.extract import ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.rows import Correction, Provenance, Row
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.store import TupleStore
from quaderno.methods.docsage.unstated import text_stated, unstated, unstated_rows

SCHEMA = Schema.model_validate({"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [{"name": "company_name"}, {"name": "country"}, {"name": "sector"},
                 {"name": "employees", "type": "INT"},
                 {"name": "revenue", "type": "DOUBLE", "unit": "USD"},
                 {"name": "commission_name"}],
     "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                       "ref_cols": ["commission_name"]}]},
    {"name": "commissions", "primary_key": ["commission_name"],
     "columns": [{"name": "commission_name"}]}]})

TEXT = ("Rastou Bank is a company of the DMC. The company is active in the banking sector. "
        "As of 2024, Rastou Bank disclosed $63.9074 billion as annual revenue. It holds a 12% "
        "share, runs three plants, and its seat is in Vundvhaerane.")


def test_a_text_is_stated_by_any_word_or_its_stem() -> None:
    assert text_stated(TEXT, "banking")
    assert text_stated(TEXT, "Vundvhaerane Republic")            # one word is enough
    assert text_stated("a telecommunications firm", "Telecom")   # the first five letters
    assert text_stated("chief executive: D. Rinbaernvaer", "Distaend Rinbaernvaer")
    assert not text_stated(TEXT, "South Africa")
    assert not text_stated(TEXT, "Finland")
    assert text_stated(TEXT, "Co.")                               # nothing to look for


def row(table: str, chunk: str = "d1#0", **values) -> Row:
    return Row(table=table, values=values, provenance=Provenance(chunk_id=chunk))


def test_keys_and_references_stay_the_rest_is_checked() -> None:
    rows = {"companies": [row("companies", company_name="Rastou", country="South Africa",
                              sector="banking", employees=100, revenue=63907400000.0,
                              commission_name="Drournlia Markets Commission")],
            "commissions": [row("commissions", commission_name="Sopael Markets Commission")]}
    out = unstated(SCHEMA, rows, "d1#0", TEXT)
    [company] = out["companies"]
    assert company.values == {"company_name": "Rastou", "country": None, "sector": "banking",
                              "employees": None, "revenue": 63907400000.0,
                              "commission_name": "Drournlia Markets Commission"}
    assert [(c.column, c.old, c.reason) for c in company.provenance.corrections] == [
        ("country", "South Africa", "unstated"), ("employees", 100, "unstated")]
    assert out["commissions"] == rows["commissions"]


@pytest.mark.parametrize("text", [
    # a name ends before "and the": the named reference is its own run (review of 4c96868)
    "Kelvo Trust was never part of the Sopael Markets Commission and the Drournlia Markets "
    "Commission admitted it in 1990.",
])
def test_a_reference_after_and_the_stays_stated(text) -> None:
    out = unstated_rows(SCHEMA, [row("companies", "c", company_name="Kelvo Trust",
                                     commission_name="Drournlia Markets Commission")],
                        {"c": text})
    assert out[0].values["commission_name"] == "Drournlia Markets Commission"


def test_a_value_from_another_chunk_is_checked_against_that_chunk() -> None:
    """A backtracking quote or an alias merge brings a cell from another chunk."""
    moved = Correction(column="employees", old=None, new=51090, reason="conflict",
                       by="backtrack", evidence_chunk="d2#0")
    r = row("companies", company_name="Roustoustus Systems", employees=51090, country="Zorn")
    r = r.model_copy(update={"provenance": r.provenance.model_copy(
        update={"corrections": [moved]})})
    texts = {"d1#0": "Roustoustus Systems has its seat in Zorn.",
             "d2#0": "Tallies of employees put the company at 51090."}
    [same] = unstated_rows(SCHEMA, [r], texts)
    assert same.values == r.values
    [emptied] = unstated_rows(SCHEMA, [r], {**texts, "d2#0": "It has 120 offices."})
    assert emptied.values["employees"] is None and emptied.values["country"] == "Zorn"
    # a chunk not given is no reason to empty
    assert unstated_rows(SCHEMA, [r], {}) == [r]


def test_a_word_only_the_rows_own_name_writes_states_nothing() -> None:
    """docsage-case-set2 gave Dixvhukrand Energy the sector "energy", which only its name
    says (the chunk says "insurance" elsewhere); a chunk saying it too keeps it."""
    text = "Dixvhukrand Energy\nDixvhukrand Energy (DE) is a company with 670 offices."
    rows = {"companies": [row("companies", company_name="Dixvhukrand Energy",
                              sector="Energy", country="Dixvhukrand")]}
    [company] = unstated(SCHEMA, rows, "d1#0", text)["companies"]
    assert (company.values["sector"], company.values["country"]) == (None, None)
    [kept] = unstated(SCHEMA, rows, "d1#0", text + " It is active in the energy sector.")[
        "companies"]
    assert kept.values["sector"] == "Energy"


def _reply(request) -> str:
    return json.dumps({"companies": [{"company_name": "Rastou Bank", "country": "Finland",
                                      "sector": "banking", "employees": 100,
                                      "revenue": "$63.9074 billion",
                                      "commission_name": "DMC"}],
                       "commissions": []})


def test_every_read_of_the_store_applies_it(tmp_path) -> None:
    chunk = Chunk(id="d1#0", text=TEXT)
    fake = FakeLLM(respond=_reply)

    first, again = read_twice(fake, chunk, SCHEMA, TupleStore(tmp_path))
    assert len(fake.requests) == 1     # the second read came from the store
    for rows in (first, again):
        [company] = rows
        assert (company.values["country"], company.values["employees"]) == (None, None)
        assert company.values["revenue"] == 63907400000
        assert company.values["sector"] == "banking"


def test_a_title_the_model_was_shown_states_what_it_writes(tmp_path) -> None:
    chunk = Chunk(id="d1#0", title="Rastou Bank of Finland", text=TEXT)
    rows = asyncio.run(extract(LM(FakeLLM(respond=_reply)), [chunk], SCHEMA,
                               ExtractionSettings(confidence="none"), store=TupleStore(tmp_path)))
    assert all_rows(rows)[0].values["country"] == "Finland"


def test_clears_committee_cannot_vote_an_unstated_value_back() -> None:
    fake = FakeLLM(respond=_reply)
    result = asyncio.run(run_clear(LM(fake), SCHEMA, [Chunk(id="d1#0", text=TEXT)],
                                   config=ClearConfig(level_b=False),
                                   calibration=Calibration(tau_low=0.95)))
    assert result.report.llm_calls_correct > 0        # the committee did vote
    [company] = [r for r in result.rows if r.table == "companies"]
    assert (company.values["country"], company.values["employees"]) == (None, None)
    assert company.values["revenue"] == 63907400000


GROUNLENKRE = ("Grounlenkre Energy is a company of the DMC. Some 58,000 employees worked "
               "there in 2015. A total of 60,600 employees was recorded for the company.")


@pytest.mark.parametrize(("first", "sampled", "kept", "refused"), [
    # subject-docsage-set2: three sampled re-reads wrote 60 for the stated 60,600
    (60600, 60, 60600, 1),
    # a vote the chunk states still replaces the first read, and fills an unstated one
    (58000, 60600, 60600, 0),
    (123, 60600, 60600, 0),
    # with no value the chunk states on either side, the vote stands as before (and the
    # repair empties it)
    (123, 60, None, 0),
])
def test_a_vote_the_chunk_does_not_state_never_replaces_one_it_does(first, sampled, kept,
                                                                     refused) -> None:
    def respond(request) -> str:
        employees = first if request.temperature == 0 else sampled
        return json.dumps({"companies": [{"company_name": "Grounlenkre Energy",
                                          "employees": employees}], "commissions": []})
    result = asyncio.run(run_clear(LM(FakeLLM(respond=respond)), SCHEMA,
                                   [Chunk(id="d1#0", text=GROUNLENKRE)],
                                   config=ClearConfig(level_b=False),
                                   calibration=Calibration(tau_low=0.95)))
    assert result.report.llm_calls_correct > 0        # the committee did vote
    [company] = [r for r in result.rows if r.table == "companies"]
    assert company.values["employees"] == kept
    assert result.report.votes_unstated == refused


@pytest.mark.parametrize(("text", "value", "stated"), [
    ("The firm is based in Zürich.", "Zurich", True),       # accents aside
    ("The firm is based in Zurich.", "Zürich", True),
    ("公司总部位于北京市海淀区", "北京市", True),                 # no spaces between words
    ("A leader in ecommerce.", "E-commerce", True),
    ("It is a bank.", "Banking", True),                      # the start of a word
    ("It is a bank.", "South Africa", False),
])
def test_text_is_read_as_the_package_folds_it(text, value, stated) -> None:
    assert text_stated(text, value) is stated


def test_a_label_in_small_letters_stays_an_invented_name_goes() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "people", "primary_key": ["full_name"],
         "columns": [{"name": "full_name"}, {"name": "gender"}, {"name": "country"},
                     {"name": "last_name"}, {"name": "capital"}, {"name": "region"}]}]})
    text = "Ann Vorlund ran for her club in Eurasia. She won twice."
    rows = {"people": [row("people", full_name="Ann Vorlund", gender="female",
                           country="Finland", last_name="Vorlund", region="Eurasia")]}
    [ann] = unstated(schema, rows, "d1#0", text)["people"]
    # "female" is a reading of "she"; Finland is named nowhere; a column for a form of the
    # name takes it; the name "Ann" blanks no "Eurasia"
    assert ann.values == {"full_name": "Ann Vorlund", "gender": "female", "country": None,
                          "last_name": "Vorlund", "region": "Eurasia"}
    city = {"people": [row("people", full_name="Singapore", capital="Singapore")]}
    assert unstated(schema, city, "d1#0", "Singapore is a city-state.") == city


def test_a_value_another_table_points_at_is_left() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "listings", "primary_key": ["company"],
         "columns": [{"name": "company"}, {"name": "ticker"}]},
        {"name": "trades", "columns": [{"name": "ticker"}, {"name": "volume", "type": "INT"}],
         "foreign_keys": [{"cols": ["ticker"], "ref_table": "listings",
                           "ref_cols": ["ticker"]}]}]})
    rows = {"listings": [row("listings", company="Rastou Bank", ticker="Zyx Corp")]}
    assert unstated(schema, rows, "d1#0", "Rastou Bank trades on the exchange.") == rows


def test_the_constraint_committee_cannot_vote_an_unstated_value_back() -> None:
    """The review of 6438ff9: Level B's committee re-extracts a value out of range; its
    vote is read like any other."""
    schema = Schema.model_validate({
        "tables": [{"name": "companies", "primary_key": ["company_name"],
                    "columns": [{"name": "company_name"},
                                {"name": "employees", "type": "INT"}]}],
        "constraints": [{"kind": "range", "table": "companies", "column": "employees",
                         "low": 0, "high": 1000}]})
    replies = iter([5000] + [100] * 20)

    def reply(request) -> str:
        return json.dumps({"companies": [{"company_name": "Rastou Bank",
                                          "employees": next(replies)}]})
    chunk = Chunk(id="d1#0", text="Rastou Bank reports 5000 employees.")
    result = asyncio.run(run_clear(LM(FakeLLM(respond=reply)), schema, [chunk],
                                   config=ClearConfig(level_a=False)))
    assert result.report.llm_calls_correct > 0
    [company] = result.rows
    assert company.values["employees"] is None
    # the vote (100, stated nowhere) never replaced the stated 5000 (clear.votes_unstated);
    # the value out of range was emptied by the constraint
    assert 100 not in [c.new for c in company.provenance.corrections]
    assert result.report.votes_unstated >= 1
    assert [c.reason for c in company.provenance.corrections] == ["constraint:range"]


def test_asks_key_choice_counts_a_name_the_read_emptied_as_unstated() -> None:
    """The review of 6438ff9: nine invented titles emptied on read must not make the one
    stated title look like a name every row states."""
    schema = Schema.model_validate({"tables": [
        {"name": "laureates", "primary_key": ["laureate_id"],
         "columns": [{"name": "laureate_id", "type": "INT"}, {"name": "title"},
                     {"name": "year", "type": "INT"}]}]})
    texts = {f"c{i}": f"In {1950 + i} the medal went to a physicist." for i in range(10)}
    texts["c0"] = "In 1950 the medal went to Ann Vorlund."
    read = [r for i in range(10) for r in unstated(schema, {"laureates": [Row(
        table="laureates", values={"laureate_id": i + 1, "year": 1950 + i,
                                   "title": f"Laureate Person{i}" if i else "Ann Vorlund"},
        provenance=Provenance(chunk_id=f"c{i}"))]}, f"c{i}", texts[f"c{i}"])["laureates"]]
    assert [r.values["title"] for r in read].count(None) == 9
    assert _new_key(schema, schema.tables[0], "laureate_id", read, texts, 0.5) != ["title"]


def test_a_reference_its_chunk_does_not_name_is_emptied() -> None:
    """docsage-rosters-set2: the question's commission written for a company whose chunk
    names another; a commission the chunk writes by its initials is named."""
    text = "Kryslias Systems is a company of the Sopael Markets Commission. It counts 320 staff."
    rows = {"companies": [row("companies", company_name="Kryslias Systems",
                              commission_name="Drournlia Markets Commission")]}
    [company] = unstated(SCHEMA, rows, "d1#0", text)["companies"]
    assert company.values["commission_name"] is None
    [named] = unstated(SCHEMA, rows, "d1#0", "Kryslias Systems is a company of the DMC.")[
        "companies"]
    assert named.values["commission_name"] == "Drournlia Markets Commission"


def test_a_reference_to_a_person_may_be_written_with_an_initial() -> None:
    schema = Schema.model_validate({"tables": [
        {"name": "awards", "primary_key": ["award_year"],
         "columns": [{"name": "award_year", "type": "INT"}, {"name": "laureate"}],
         "foreign_keys": [{"cols": ["laureate"], "ref_table": "laureates",
                           "ref_cols": ["name"]}]},
        {"name": "laureates", "primary_key": ["name"], "columns": [{"name": "name"}]}]})
    rows = {"awards": [Row(table="awards", values={"award_year": 2001,
                                                   "laureate": "Distaend Rinbaernvaer"},
                           provenance=Provenance(chunk_id="d1#0"))]}
    assert unstated(schema, rows, "d1#0", "In 2001 the medal went to D. Rinbaernvaer.") == rows
    [gone] = unstated(schema, rows, "d1#0", "In 2001 the medal went to A. Rinbaernvaer.")[
        "awards"]
    assert gone.values["laureate"] is None


def test_the_constraint_committee_leaves_a_canonicalized_reference_alone() -> None:
    """The review of f9552b8: Level B re-read every row after its vote, so a reference the
    alias merge had lengthened ("Rastou" -> "Rastou Bank") was checked against a chunk that
    writes it short, and emptied. Only the voted cells are read again."""
    schema = Schema.model_validate({
        "tables": [{"name": "companies", "primary_key": ["company_name"],
                    "columns": [{"name": "company_name"}, {"name": "bank"},
                                {"name": "staff", "type": "INT"}],
                    "foreign_keys": [{"cols": ["bank"], "ref_table": "banks",
                                      "ref_cols": ["bank_name"]}]},
                   {"name": "banks", "primary_key": ["bank_name"],
                    "columns": [{"name": "bank_name"}]}],
        "constraints": [{"kind": "range", "table": "companies", "column": "staff", "low": 0}]})
    chunks = [Chunk(id="c1", text="Alpha Corp banks with Rastou. Alpha Corp has -5 staff."),
              Chunk(id="c2", text="Beta Corp banks with Rastou Bank. It has 40 staff."),
              Chunk(id="c3", text="Gamma Corp banks with Rastou Bank. It has 50 staff.")]
    said = {"c1": {"company_name": "Alpha Corp", "bank": "Rastou", "staff": -5},
            "c2": {"company_name": "Beta Corp", "bank": "Rastou Bank", "staff": 40},
            "c3": {"company_name": "Gamma Corp", "bank": "Rastou Bank", "staff": 50}}

    def reply(request) -> str:
        chunk = next(c for c in chunks if c.text in request.messages[-1].content)
        return json.dumps({"companies": [said[chunk.id]], "banks": []})
    result = asyncio.run(run_clear(LM(FakeLLM(respond=reply)), schema, chunks,
                                   config=ClearConfig(level_a=False)))
    assert result.report.llm_calls_correct > 0
    banks = {r.values["company_name"]: r.values["bank"] for r in result.rows}
    assert banks == {"Alpha Corp": "Rastou Bank", "Beta Corp": "Rastou Bank",
                     "Gamma Corp": "Rastou Bank"}


@pytest.mark.parametrize(("text", "value", "named"), [
    ("Riandgiax joined the DMC in 1967.", "Riandgiax Holdings", True),      # a short form
    ("Ford builds cars.", "Ford Motor Company", True),
    ("The prize went to Curie.", "Marie Curie", True),                       # a surname
    ("Members of the DMC include Riaska.", "Drournlia Markets Commission (DMC)", True),
    ("It is listed in the Drournlia Markets Commission's roster.",
     "Sopael Markets Commission", False),                                    # no "s" initial
    ("Kryslias Systems is a company of the Sopael Markets Commission.",
     "Drournlia Markets Commission", False),
    ("It reports to the markets commission.", "Drournlia Markets Commission", False),
])
def test_a_reference_is_named_whole_by_a_short_form_or_by_its_initials(text, value,
                                                                      named) -> None:
    """The review of f9552b8: short forms alias_map would join, surnames, and "Name (ABBR)"
    name the entity; kind words ("Markets Commission") and a possessive's "s" do not."""
    rows = {"companies": [row("companies", company_name="Zorn Trust", commission_name=value)]}
    [out] = unstated(SCHEMA, rows, "d1#0", text)["companies"]
    assert (out.values["commission_name"] == value) is named


@pytest.mark.parametrize(("text", "value"), [
    ("Write to us about the firm.", "United States"),
    ("It is what it is.", "Information Technology"),
    ("Kryslias Systems SA has its seat there.", "South Africa"),
])
def test_lower_case_words_and_legal_suffixes_are_no_acronyms(text, value) -> None:
    rows = {"companies": [row("companies", company_name="Kryslias Systems SA", country=value)]}
    [out] = unstated(SCHEMA, rows, "d1#0", text)["companies"]
    assert out.values["country"] is None


@pytest.mark.parametrize(("text", "kept"), [
    ("Viathpox Systems is a company of the Sopael Markets Commission, not of the Drournlia "
     "Markets Commission.", False),
    ("Viathpox Systems is not a member of the DMC.", False),
    ("It belongs to neither the DMC nor the Sopael Markets Commission.", False),
    # named after a negation and again plainly
    ("Viathpox Systems left no doubt: it is not of the Sopael Markets Commission but of the "
     "Drournlia Markets Commission.", True),
    # a negation of something else
    ("It is not known whether the Drournlia Markets Commission renewed it.", True),
    ("The Drournlia Markets Commission did not publish its offices.", True),
    # the review of e72b3a7: a sentence or line ends the negated name, and a noun after it
    # is what is negated
    ("Viathpox Systems was never a member of the SMC. Drournlia Markets Commission filings "
     "list it as a member since 2004.", True),
    ("Not Rated\nDrournlia Markets Commission member", True),
    ("Viathpox Systems is not a Drournlia Markets Commission founder, but joined it in 2004.",
     True),
    ("Viathpox Systems isn't in the Drournlia Markets Commission.", False),
    ("No longer part of the Drournlia Markets Commission, it left in 2004.", False),
    # the review of ecb4812: a word after the name that describes nothing
    ("Viathpox Systems is not a member of the Drournlia Markets Commission now.", False),
    ("Viathpox Systems is not in the Drournlia Markets Commission, which it left.", False),
    ("Viathpox Systems, not of the Drournlia Markets Commission despite reports, is of the "
     "Sopael one.", False),
    ("Viathpox Systems is not a Drournlia Markets Commission member.", False),
])
def test_a_reference_written_only_after_a_negation_is_not_named(text, kept) -> None:
    """docsage-head-set2: "a company of the Sopael Markets Commission, not of the Drournlia
    Markets Commission" kept the model's Drournlia commission for a namesake."""
    rows = {"companies": [row("companies", company_name="Viathpox Systems",
                              commission_name="Drournlia Markets Commission")]}
    [company] = unstated(SCHEMA, rows, "d1#0", text)["companies"]
    assert (company.values["commission_name"] is not None) is kept
