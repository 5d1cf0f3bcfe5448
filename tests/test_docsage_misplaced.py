"""A referenced entity's name written into another column is emptied on read, and the
reference takes it when it is empty (the measuring model's Set2 companies with
``sector = 'Drournlia Markets Commission'``)."""

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
from quaderno.methods.docsage.extract import ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.misplaced import misplaced, misplaced_rows, of_kind, other_kind_rows
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.store import TupleStore

SCHEMA = Schema.model_validate({"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [{"name": "company_name"}, {"name": "sector"}, {"name": "chief_executive"},
                 {"name": "offices", "type": "INT"}, {"name": "commission_name"},
                 {"name": "parent"}],
     "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                       "ref_cols": ["commission_name"]},
                      {"cols": ["parent"], "ref_table": "companies",
                       "ref_cols": ["company_name"]}]},
    {"name": "commissions", "primary_key": ["commission_name"],
     "columns": [{"name": "commission_name"}]}]})


def row(table: str, **values) -> Row:
    return Row(table=table, values=values, provenance=Provenance(chunk_id="d1#0"))


def company(chunk: str, **values) -> Row:
    return Row(table="companies", values=values, provenance=Provenance(chunk_id=chunk))


def companies_with(*columns: str) -> Schema:
    """``companies(company_name, *columns, commission_name)``, the commission a reference
    to ``commissions(commission_name)``."""
    return Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": c} for c in ("company_name", *columns, "commission_name")],
         "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                           "ref_cols": ["commission_name"]}]},
        {"name": "commissions", "primary_key": ["commission_name"],
         "columns": [{"name": "commission_name"}]}]})


def test_a_name_the_reference_holds_is_emptied_from_the_other_columns() -> None:
    rows = {"companies": [row("companies", company_name="Kriarngyrtia Energy",
                              sector="Drournlia Markets Commission",
                              chief_executive="drournlia markets commission",
                              commission_name="Drournlia Markets Commission")]}
    [fixed] = misplaced(SCHEMA, rows)["companies"]
    assert fixed.values["sector"] is None and fixed.values["chief_executive"] is None
    assert fixed.values["commission_name"] == "Drournlia Markets Commission"
    assert [(c.column, c.reason) for c in fixed.provenance.corrections] == [
        ("sector", "misplaced"), ("chief_executive", "misplaced")]


def test_a_name_the_chunk_gives_a_row_of_moves_into_an_empty_reference() -> None:
    rows = {"companies": [row("companies", company_name="Viathpox Systems",
                              sector="Sopael Markets Commission", commission_name=None),
                          row("companies", company_name="Gouqin Energy", sector="energy",
                              commission_name=None)],
            "commissions": [row("commissions", commission_name="Sopael Markets Commission")]}
    out = misplaced(SCHEMA, rows)
    viathpox, gouqin = out["companies"]
    assert (viathpox.values["sector"], viathpox.values["commission_name"]) == (
        None, "Sopael Markets Commission")
    assert gouqin.values == rows["companies"][1].values
    assert out["commissions"] == rows["commissions"]


def test_keys_and_references_to_the_table_itself_are_left_as_they_are() -> None:
    """A company named like another's parent is a company; the commission as a company's
    name is a key, not a cell to empty."""
    rows = {"companies": [row("companies", company_name="Drournlia Markets Commission",
                              parent="Gouqin Energy", sector="Gouqin Energy",
                              commission_name="Drournlia Markets Commission")]}
    [same] = misplaced(SCHEMA, rows)["companies"]
    assert same.values == rows["companies"][0].values


def test_every_read_of_the_store_applies_it(tmp_path) -> None:
    chunk = Chunk(id="d1#0", text="Kriarngyrtia Energy is a company of the Drournlia Markets "
                                  "Commission; it has 14 offices.")
    reply = {"companies": [{"company_name": "Kriarngyrtia Energy",
                            "sector": "Drournlia Markets Commission", "offices": 14,
                            "commission_name": None}],
             "commissions": [{"commission_name": "Drournlia Markets Commission"}]}
    fake = FakeLLM(respond=lambda request: json.dumps(reply))

    first, again = read_twice(fake, chunk, SCHEMA, TupleStore(tmp_path))
    assert len(fake.requests) == 1     # the second read came from the store
    for rows in (first, again):
        [company] = [r for r in rows if r.table == "companies"]
        assert company.values["sector"] is None
        assert company.values["commission_name"] == "Drournlia Markets Commission"
        assert company.values["offices"] == 14


def test_an_ended_membership_is_not_brought_back_from_another_column(tmp_path) -> None:
    """ended.py empties the reference of a former member; the commission the model also
    wrote into sector is emptied too, and does not fill the reference again (the review of
    b9efbe2)."""
    chunk = Chunk(id="d1#0", text="Kelvo Trust was a company of the Drournlia Markets "
                                  "Commission from 1990 until it left in 2005.")
    reply = {"companies": [{"company_name": "Kelvo Trust",
                            "sector": "Drournlia Markets Commission",
                            "commission_name": "Drournlia Markets Commission"}],
             "commissions": [{"commission_name": "Drournlia Markets Commission"}]}
    fake = FakeLLM(respond=lambda request: json.dumps(reply))
    rows = asyncio.run(extract(LM(fake), [chunk], SCHEMA, ExtractionSettings(confidence="none"),
                               store=TupleStore(tmp_path)))
    [kelvo] = [r for r in all_rows(rows) if r.table == "companies"]
    assert (kelvo.values["sector"], kelvo.values["commission_name"]) == (None, None)
    assert [c.reason for c in kelvo.provenance.corrections] == ["ended", "misplaced"]


def test_a_table_with_more_to_say_than_names_is_named_rightly_elsewhere() -> None:
    """A match's winner is one of its teams, a company's founder may be its chief
    executive: references to tables holding more than names are no reason to empty."""
    schema = Schema.model_validate({"tables": [
        {"name": "matches", "primary_key": ["match_id"],
         "columns": [{"name": "match_id"}, {"name": "home_team"}, {"name": "away_team"},
                     {"name": "winner"}],
         "foreign_keys": [{"cols": ["home_team"], "ref_table": "teams",
                           "ref_cols": ["team_name"]},
                          {"cols": ["away_team"], "ref_table": "teams",
                           "ref_cols": ["team_name"]}]},
        {"name": "teams", "primary_key": ["team_name"],
         "columns": [{"name": "team_name"}, {"name": "city"}]}]})
    rows = {"matches": [row("matches", match_id="m1", home_team="Rovers", away_team="United",
                            winner="United")],
            "teams": [row("teams", team_name="United", city="Vhaern")]}
    assert misplaced(schema, rows)["matches"][0].values["winner"] == "United"


def test_clears_committee_cannot_vote_a_misplaced_name_back() -> None:
    """docsage-repairs-set2: the read emptied Kriarngyrtia Energy's sector, then CLEAR's
    committee re-read the chunk, voted the commission back into it, and the company was
    left out of ``sector = 'energy'``."""
    chunk = Chunk(id="d1#0", text="Kriarngyrtia Energy is a company of the Drournlia Markets "
                                  "Commission; it has 14 offices.")
    reply = {"companies": [{"company_name": "Kriarngyrtia Energy",
                            "sector": "Drournlia Markets Commission", "offices": 14,
                            "commission_name": "Drournlia Markets Commission"}],
             "commissions": [{"commission_name": "Drournlia Markets Commission"}]}
    fake = FakeLLM(respond=lambda request: json.dumps(reply))
    result = asyncio.run(run_clear(LM(fake), SCHEMA, [chunk], config=ClearConfig(level_b=False),
                                   calibration=Calibration(tau_low=0.95)))
    assert result.report.llm_calls_correct > 0        # the committee did vote
    [company] = [r for r in result.rows if r.table == "companies"]
    assert company.values["sector"] is None
    assert company.values["commission_name"] == "Drournlia Markets Commission"


def test_a_name_another_chunk_gives_the_reference_is_misplaced_too() -> None:
    """docsage-rosters-set2: Bryskound Holdings' chunk wrote the commission into ``sector``
    and named none of its own; other chunks' companies refer to it. CLEAR reads the rows of
    all chunks together before the merge. (A name whose last word is no commission's kind:
    "... Commission" is misplaced on its own, test below.)"""
    rows = [Row(table="companies", values={"company_name": "Gouqin Energy", "sector": "energy",
                                           "commission_name": "Drournlia Board"},
                provenance=Provenance(chunk_id="d1#0")),
            Row(table="companies", values={"company_name": "Bryskound Holdings",
                                           "sector": "Drournlia Board",
                                           "commission_name": None},
                provenance=Provenance(chunk_id="d2#0"))]
    assert misplaced(SCHEMA, {"companies": rows[1:]})["companies"] == rows[1:]  # alone
    gouqin, bryskound = misplaced_rows(SCHEMA, rows)
    assert gouqin == rows[0]
    assert (bryskound.values["sector"], bryskound.values["commission_name"]) == (
        None, "Drournlia Board")

    chunks = [Chunk(id="d1#0", text="Gouqin Energy is a company of the Drournlia "
                                    "Board; it works in energy."),
              Chunk(id="d2#0", text="Bryskound Holdings, Drournlia Board: its "
                                    "sector is listed there.")]
    said = {"d1#0": rows[0].values, "d2#0": rows[1].values}

    def reply(request) -> str:
        chunk = next(c for c in chunks if c.text in request.messages[-1].content)
        return json.dumps({"companies": [said[chunk.id]], "commissions": []})
    result = asyncio.run(run_clear(LM(FakeLLM(respond=reply)), SCHEMA, chunks,
                                   config=ClearConfig(level_a=False, level_b=False)))
    got = {r.values["company_name"]: (r.values["sector"], r.values["commission_name"])
           for r in result.rows if r.table == "companies"}
    assert got["Bryskound Holdings"] == (None, "Drournlia Board")


def test_one_chunks_slip_does_not_empty_every_other_chunks_cells() -> None:
    """The review of f9552b8: one chunk's model wrote the sector into commission_name
    ("Energy"); names other chunks give are used only for a row naming no commission, and a
    name that is some member's sector is no commission's."""
    rows = [company("c1", company_name="Gouqin Energy", sector="energy", commission_name="Energy"),
            company("c2", company_name="Riaska", sector="energy",
              commission_name="Drournlia Markets Commission"),
            company("c3", company_name="Bryskound", sector="energy", commission_name=None),
            company("c4", company_name="Zorn", sector="Drournlia Markets Commission",
              commission_name=None)]
    out = misplaced_rows(SCHEMA, rows)
    # the slip's own row cannot tell which of its two cells is wrong (as on one read)
    assert [x.values["sector"] for x in out] == [None, "energy", "energy", None]
    assert [x.values["commission_name"] for x in out] == [
        "Energy", "Drournlia Markets Commission", None, "Drournlia Markets Commission"]


def test_an_acronym_in_capitals_of_a_known_name_is_misplaced_too() -> None:
    """A limit the review of 51afc33 noted: a free cell was compared with the names before
    aliases were merged, so "DMC" in ``sector`` stayed while "Drournlia Markets Commission"
    would not have. An acronym counts written in capitals only, and of exactly one name;
    it is emptied and not moved into the reference (the review of 7592809: spelled so, it
    took over the commission's name at the alias merge)."""
    rows = [company("c1", company_name="Riaska", sector="energy",
              commission_name="Drournlia Markets Commission"),
            company("c2", company_name="Bryskound", sector="DMC", commission_name=None),
            company("c3", company_name="Zorn", sector="dmc", commission_name=None),
            company("c4", company_name="Kelvo", sector="DMC.", chief_executive="U. Sorn",
              commission_name="Drournlia Markets Commission")]
    riaska, bryskound, zorn, kelvo = misplaced_rows(SCHEMA, rows)
    assert riaska == rows[0]
    assert (bryskound.values["sector"], bryskound.values["commission_name"]) == (None, None)
    assert [(c.column, c.old, c.new) for c in bryskound.provenance.corrections] == [
        ("sector", "DMC", None)]
    assert zorn == rows[2]                          # not written as an acronym
    assert kelvo.values["sector"] is None and kelvo.values["chief_executive"] == "U. Sorn"
    # an acronym of two known names is no one's
    rows.append(company("c5", company_name="Gouqin", sector="energy",
                  commission_name="Dalvo Mining Council"))
    assert misplaced_rows(SCHEMA, rows)[1] == rows[1]
    # on one chunk's read too
    one = {"companies": [company("c6", company_name="Viathpox", sector="SMC",
                           commission_name="Sopael Markets Commission")]}
    assert misplaced(SCHEMA, one)["companies"][0].values["sector"] is None


def test_an_acronym_that_is_the_rows_own_a_short_code_or_a_short_form_column_stays() -> None:
    """The review of 7592809: "DMC" of Delta Marine Carriers itself, two-letter codes ("AI",
    "IT", "EU" of two-word names) and a column meant for a short form were emptied."""
    schema = companies_with("sector", "country", "short_name", "ticker", "commission_acronym")

    rows = [company("c1", company_name="Riaska", commission_name="Drournlia Markets Commission"),
            company("c2", company_name="Ostrel", commission_name="Amnesty International"),
            company("c3", company_name="Varn", commission_name="European Union"),
            company("c4", company_name="Delta Marine Carriers", short_name="DMC", ticker="DMC",
              sector="DMC", commission_name=None),
            company("c5", company_name="Kelvo", sector="AI", country="EU",
              commission_acronym="DMC", ticker="DMC", commission_name=None)]
    out = misplaced_rows(schema, rows)
    assert out == rows
    # the same code in a plain column of another company is still the commission's
    rows.append(company("c6", company_name="Gouqin", sector="DMC", commission_name=None))
    assert misplaced_rows(schema, rows)[-1].values["sector"] is None


def test_a_common_acronym_stays_though_a_group_has_its_initials() -> None:
    """Review 1 of the tenth session: a country "USA" was emptied when a commission's
    initials were USA; "USA", "U.S.A." and "USD" name no group here, as in ``named_groups``
    and ``ended``."""
    schema = companies_with("country", "currency", "sector")
    usa = "United Sandar Association"
    rows = [company("c1", company_name="Riaska", commission_name=usa),
            company("c2", company_name="Kelvo", country="USA", currency="USD",
                    commission_name=None),
            company("c3", company_name="Ostrel", country="U.S.A.", commission_name=None),
            company("c4", company_name="Varn", commission_name="Union of Sandar Dealers")]
    assert misplaced_rows(schema, rows) == rows
    # an acronym of no such list is still the group's
    rows.append(company("c5", company_name="Gouqin", sector="USAD", commission_name=None))
    rows[0] = company("c1", company_name="Riaska", commission_name="United Sandar Art Dealers")
    assert misplaced_rows(schema, rows)[-1].values["sector"] is None


def test_an_acronym_keyed_reference_dotted_letters_and_joined_column_names() -> None:
    """The review of 1971d90: a commission keyed "DMC" matched "DMC" by its exact name and
    so bypassed the short-form and own-name checks; dotted "D.M.C." was no acronym; a
    column named ``shortname`` was not read as a short form; "DMC Holdings"' own "DMC" was
    emptied."""
    schema = companies_with("sector", "alias", "shortname", "tickersymbol")

    keyed = [company("c1", company_name="Riaska", commission_name="DMC"),
             company("c2", company_name="Delta Marine Carriers", alias="DMC", sector="D.M.C.",
               commission_name="DMC"),
             company("c3", company_name="DMC Holdings", alias="DMC", commission_name=None),
             company("c4", company_name="Ostrel", shortname="DMC", tickersymbol="D.M.C.",
               commission_name="DMC")]
    assert misplaced_rows(schema, keyed) == keyed
    # the exact name in a plain column of another company is still the commission's
    keyed.append(company("c5", company_name="Gouqin", sector="DMC", commission_name=None))
    assert misplaced_rows(schema, keyed)[-1].values["sector"] is None
    # dotted letters are an acronym of the spelled-out name, and a short form stays short
    spelled = [company("c1", company_name="Riaska", commission_name="Drournlia Markets Commission"),
               company("c2", company_name="Kelvo", sector="D.M.C.", shortname="D.M.C",
                 commission_name=None)]
    kelvo = misplaced_rows(schema, spelled)[1]
    assert (kelvo.values["sector"], kelvo.values["shortname"]) == (None, "D.M.C")
    assert [(c.column, c.old) for c in kelvo.provenance.corrections] == [
        ("sector", "D.M.C.")]
    # two dotted letters are a code, not an acronym ("U.S." of "United States")
    two = [company("c1", company_name="Riaska", commission_name="Umbral Sight"),
           company("c2", company_name="Kelvo", sector="U.S.", commission_name=None)]
    assert misplaced_rows(schema, two) == two


def test_short_form_columns_are_whole_words_or_a_short_form_joined_to_a_name() -> None:
    """The review of 79cdd73: reading a column's words by their starts and ends took
    ``shortlisted_by`` and ``codeveloper`` for short-form columns, and kept the commission's
    acronym there; "ÖBB" and "D. M. C." were no acronyms."""
    schema = companies_with("shortlisted_by", "codeveloper", "stock_tickers", "sector")

    rows = [company("c1", company_name="Riaska", commission_name="Drournlia Markets Commission"),
            company("c2", company_name="Kelvo", shortlisted_by="DMC", codeveloper="D. M. C.",
              stock_tickers="DMC", commission_name=None),
            company("c3", company_name="Riaska", commission_name="Österreich Bahn Behörde"),
            company("c4", company_name="Varn", sector="ÖBB", commission_name=None)]
    _, kelvo, _, varn = misplaced_rows(schema, rows)
    assert (kelvo.values["shortlisted_by"], kelvo.values["codeveloper"],
            kelvo.values["stock_tickers"]) == (None, None, "DMC")
    assert varn.values["sector"] is None


def test_a_commissions_table_naming_its_members_back_holds_names_only() -> None:
    """docsage-stated-set2: ``commissions(commission_name, company_name)``, the roster's
    members beside the commission, held names only, but the repair read only tables of one
    column, and three companies kept the commission as their sector."""
    schema = Schema.model_validate({"tables": [
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "sector"},
                     {"name": "commission_name"}],
         "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                           "ref_cols": ["commission_name"]}]},
        {"name": "commissions", "primary_key": ["commission_name"],
         "columns": [{"name": "commission_name"}, {"name": "company_name"}]}]})
    rows = {"companies": [row("companies", company_name="Kriarngyrtia Energy",
                              sector="Drournlia Markets Commission",
                              commission_name="Drournlia Markets Commission")]}
    [fixed] = misplaced(schema, rows)["companies"]
    assert fixed.values["sector"] is None
    # a table with more to say about its entity stays out (a commission's chair)
    chaired = Schema.model_validate({"tables": [
        schema.tables[0].model_dump(),
        {"name": "commissions", "primary_key": ["commission_name"],
         "columns": [{"name": "commission_name"}, {"name": "company_name"},
                     {"name": "chair"}]}]})
    assert misplaced(chaired, rows)["companies"] == rows["companies"]


def test_a_names_table_row_naming_another_entity_back_names_nothing_here() -> None:
    """The review of 66424e2: with ``teams(team_name, player_name)`` (a captain) beside
    ``players.team_name``, a chunk's team row for the Otters, captained by Bo Li, says
    nothing of Ana, whose previous team the Otters were."""
    schema = Schema.model_validate({"tables": [
        {"name": "players", "primary_key": ["player_name"],
         "columns": [{"name": "player_name"}, {"name": "team_name"},
                     {"name": "previous_team"}],
         "foreign_keys": [{"cols": ["team_name"], "ref_table": "teams",
                           "ref_cols": ["team_name"]}]},
        {"name": "teams", "primary_key": ["team_name"],
         "columns": [{"name": "team_name"}, {"name": "player_name"}]}]})
    rows = {"players": [row("players", player_name="Ana", team_name="Rovers",
                            previous_team="Otters")],
            "teams": [row("teams", team_name="Otters", player_name="Bo Li")]}
    assert misplaced(schema, rows)["players"] == rows["players"]
    # the same row naming Ana back names her team
    rows["teams"] = [row("teams", team_name="Otters", player_name="Ana")]
    assert misplaced(schema, rows)["players"][0].values["previous_team"] is None


def test_a_name_of_the_referenced_kind_is_misplaced_though_no_row_gives_it() -> None:
    """docsage-head-set2: the namesake Kryslias Systems' "Sopael Markets Commission" was
    read as its sector, and no chunk gave the Sopael commission a row."""
    rows = {"companies": [row("companies", company_name="Kryslias Systems",
                              sector="Sopael Markets Commission", commission_name=None),
                          row("companies", company_name="Viathpox Systems",
                              sector="Sopael Markets Commission",
                              commission_name="Drournlia Markets Commission"),
                          row("companies", company_name="Gouqin Energy",
                              sector="energy commission", commission_name=None),
                          row("companies", company_name="Rastou Bank",
                              sector="Commission", commission_name=None)]}
    kryslias, viathpox, gouqin, rastou = misplaced(SCHEMA, rows)["companies"]
    assert (kryslias.values["sector"], kryslias.values["commission_name"]) == (
        None, "Sopael Markets Commission")
    # a row naming a commission of its own is left: the name of a kind is no known name
    assert viathpox.values == rows["companies"][1].values
    # words in small letters, or the kind word alone, name no commission
    assert gouqin.values == rows["companies"][2].values
    assert rastou.values == rows["companies"][3].values


def test_a_name_ending_in_a_place_party_or_company_word_is_no_body_of_that_kind() -> None:
    """The review of 0727744: "Mexico City", "Liberal Party", "Ohio State" name no entity
    of a ``cities``, ``parties`` or ``states`` table; only bodies one is a member of do."""
    assert of_kind("Sopael Markets Commission", "commissions")
    assert of_kind("Northern Football League", "leagues")
    for value, table in [("Mexico City", "cities"), ("Liberal Party", "parties"),
                         ("Ohio State", "states"), ("Ford Motor Company", "companies"),
                         ("The Board", "board"), ("Commission", "commissions")]:
        assert not of_kind(value, table)



def test_a_row_naming_the_referenced_body_as_its_own_entity_is_left_out() -> None:
    """docsage-groups-set2: "Drournlia Markets Commission" had a row of ``companies``, and
    completion searched for its sector and offices."""
    rows = [row("companies", company_name="Drournlia Markets Commission"),
            row("companies", company_name="Sopael Markets Commission",
                commission_name="Sopael Markets Commission"),
            row("companies", company_name="Kriarngyrtia Energy", offices=14,
                commission_name="Drournlia Markets Commission"),
            row("companies", company_name="Commission Holdings"),
            # the review of f735eca: a member named like a body no row names as one
            row("companies", company_name="Kraxryndia Trade Commission",
                commission_name="Drournlia Markets Commission"),
            row("companies", company_name="Vhithfun Mining Commission")]
    kept, out = other_kind_rows(SCHEMA, rows)
    assert [r.values.get("company_name") for r in out] == [
        "Drournlia Markets Commission", "Sopael Markets Commission"]
    assert kept == rows[2:]
    # a table of the body's own kind keeps its rows (a league's parent league)
    leagues = Schema.model_validate({"tables": [
        {"name": "leagues", "primary_key": ["league_name"],
         "columns": [{"name": "league_name"}, {"name": "parent_league"}],
         "foreign_keys": [{"cols": ["parent_league"], "ref_table": "parent_leagues",
                           "ref_cols": ["league_name"]}]},
        {"name": "parent_leagues", "primary_key": ["league_name"],
         "columns": [{"name": "league_name"}]}]})
    mine = [row("leagues", league_name="Skondul Premier League")]
    assert other_kind_rows(leagues, mine) == (mine, [])


def test_clear_leaves_the_body_s_company_row_out_and_says_so() -> None:
    chunk = Chunk(id="d1#0", text="Kriarngyrtia Energy is a company of the Drournlia Markets "
                                  "Commission; it has 14 offices.")
    reply = {"companies": [{"company_name": "Kriarngyrtia Energy", "offices": 14,
                            "commission_name": "Drournlia Markets Commission"},
                           {"company_name": "Drournlia Markets Commission",
                            "commission_name": "Drournlia Markets Commission"}],
             "commissions": [{"commission_name": "Drournlia Markets Commission"}]}
    fake = FakeLLM(respond=lambda request: json.dumps(reply))
    result = asyncio.run(run_clear(LM(fake), SCHEMA, [chunk],
                                   config=ClearConfig(level_a=False)))
    assert [r.values["company_name"] for r in result.rows if r.table == "companies"] == [
        "Kriarngyrtia Energy"]
    assert result.report.other_kind == ["companies: Drournlia Markets Commission"]
    assert result.report.tuples_removed == 1


LAUREATES = Schema.model_validate({"tables": [
    {"name": "laureates", "primary_key": ["name"],
     "columns": [{"name": "name"}, {"name": "nationality"}, {"name": "birth_year", "type": "INT"},
                 {"name": "mentor"}]},
    {"name": "members", "primary_key": ["laureate_name"],
     "columns": [{"name": "laureate_name"}, {"name": "home_institution"},
                 {"name": "research_grant", "type": "DOUBLE"}, {"name": "medal_name"}],
     "foreign_keys": [{"cols": ["medal_name"], "ref_table": "medals",
                       "ref_cols": ["medal_name"]}]},
    {"name": "medals", "primary_key": ["medal_name"], "columns": [{"name": "medal_name"}]}]})


def test_an_institution_another_column_holds_is_no_laureate() -> None:
    """grid4-docsage-set1: "Vhithfun Institute", a home institution, had a row of
    ``laureates`` and of ``members`` stating nothing else; a count of laureates counted it."""
    medal = "Stedrurial Medal"
    rows = [row("members", laureate_name="Nendzu Rixtox", home_institution="Vhithfun Institute",
                research_grant=3e5, medal_name=medal),
            row("members", laureate_name="Vhithfun Institute", medal_name=medal),
            row("laureates", name="Vhithfun Institute"),
            row("members", laureate_name="Thiarnten Institute",
                home_institution="Thiarnten Institute", medal_name=medal),
            row("laureates", name="Dyrte Fourzixze", nationality="Kraxryndia"),
            row("members", laureate_name="Dyrte Fourzixze",
                home_institution="Thiarnten Institute"),
            # a laureate's mentor is a laureate, named like a person
            row("laureates", name="Rialvhyth Stirnbrysbra"),
            row("laureates", name="Skytern Statrintrir", mentor="Rialvhyth Stirnbrysbra"),
            row("medals", medal_name=medal)]
    kept, out = other_kind_rows(LAUREATES, rows)
    assert [(r.table, *r.values.values()) for r in out] == [
        ("members", "Vhithfun Institute", medal), ("laureates", "Vhithfun Institute"),
        ("members", "Thiarnten Institute", "Thiarnten Institute", medal)]
    assert [r for r in rows if r not in out] == kept


def test_an_institution_another_table_is_keyed_by_is_no_laureate() -> None:
    """s7g-docsage-set1: the Statistics schema's ``laureates`` held the institutions that
    ``home_insts`` is keyed by, and no other column held them."""
    schema = Schema.model_validate({"tables": [
        {"name": "laureates", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "birth_year", "type": "INT"}]},
        {"name": "home_insts", "primary_key": ["inst_name"],
         "columns": [{"name": "inst_name"}, {"name": "laureate_name"}]}]})
    rows = [row("laureates", name="Vhithfun Institute"),
            row("laureates", name="Ann Lee", birth_year=1960),
            row("home_insts", inst_name="Vhithfun Institute", laureate_name="Ann Lee")]
    assert other_kind_rows(schema, rows) == (rows[1:], rows[:1])


def test_a_body_named_entity_one_row_states_something_of_keeps_every_row() -> None:
    """The review of f31577f: the decision is the entity's, not each row's (rows are one
    per chunk before the merge)."""
    rows = [row("laureates", name="Groltor Institute", nationality="Kraxryndia"),
            row("members", laureate_name="Groltor Institute", medal_name="Stedrurial Medal"),
            row("laureates", name="Groltor Institute"),
            row("members", laureate_name="Ann Lee", home_institution="Groltor Institute")]
    assert other_kind_rows(LAUREATES, rows) == (rows, [])


@pytest.mark.parametrize(("tables", "rows"), [
    # a team named like a club a player's column holds (a league's roster row)
    ([{"name": "teams", "primary_key": ["team_name"],
       "columns": [{"name": "team_name"}, {"name": "league_name"}],
       "foreign_keys": [{"cols": ["league_name"], "ref_table": "leagues",
                         "ref_cols": ["league_name"]}]},
      {"name": "leagues", "primary_key": ["league_name"], "columns": [{"name": "league_name"}]},
      {"name": "players", "primary_key": ["player_name"],
       "columns": [{"name": "player_name"}, {"name": "club"}]}],
     [row("teams", team_name="Ostrel Football Club", league_name="Vhith League"),
      row("players", player_name="Ann Lee", club="Ostrel Football Club")]),
    # a bank that is a company, another company's bank
    ([{"name": "companies", "primary_key": ["company_name"],
       "columns": [{"name": "company_name"}, {"name": "main_bank"}]}],
     [row("companies", company_name="Rastou Bank"),
      row("companies", company_name="Kelvo Trust", main_bank="Rastou Bank")]),
    # a university, a person's university; a medal, a laureate's medal
    ([{"name": "institutions", "primary_key": ["name"], "columns": [{"name": "name"}]},
      {"name": "awards", "primary_key": ["award_name"], "columns": [{"name": "award_name"}]},
      {"name": "people", "primary_key": ["name"],
       "columns": [{"name": "name"}, {"name": "university"}, {"name": "medal"}]}],
     [row("institutions", name="Ostrel University"), row("awards", award_name="Vhith Medal"),
      row("people", name="Ann Lee", university="Ostrel University", medal="Vhith Medal")]),
    # a name of a table of people that ends in no body's word, or of one word
    ([{"name": "laureates", "primary_key": ["name"],
       "columns": [{"name": "name"}, {"name": "fund_manager"}, {"name": "nationality"}]}],
     [row("laureates", name="Ostrel Management"), row("laureates", name="Kraxryndia National"),
      row("laureates", name="Institute"),
      row("laureates", name="Ann Lee", fund_manager="Ostrel Management",
          nationality="Kraxryndia National")]),
])
def test_a_body_s_row_of_a_table_of_bodies_stays(tables, rows) -> None:
    """The review of f31577f: a shared stem with a holding column dropped real companies,
    teams, universities and medals; only a table of people drops a body's row."""
    assert other_kind_rows(Schema.model_validate({"tables": tables}), rows) == (rows, [])
