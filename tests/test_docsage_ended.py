"""A reference the chunk says has ended is emptied. The measuring model's Set2 tables gave a
former member of the commission ("... from 1990 until it left in 2005") the commission's name,
so it counted among "the companies of the commission"."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from docsage_fakes import row, schema_of
from quaderno.corpus.chunk import Chunk
from quaderno.eval.synth.collection import make_collection
from quaderno.eval.synth.families import FAMILIES
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.clauses import clauses
from quaderno.methods.docsage.ended import ended_links, ended_references
from quaderno.methods.docsage.extract import ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.store import TupleStore

DMC = "Drournlia Markets Commission"
COMPANIES = {"name": "companies", "primary_key": ["companyname"],
             "columns": [{"name": "companyname"}, {"name": "commissionname"},
                         {"name": "annual_revenue", "type": "DOUBLE"}],
             "foreign_keys": [{"column": "commissionname", "references_table": "commissions",
                               "references_column": "commissionname"}]}
COMMISSIONS = {"name": "commissions", "primary_key": ["commissionname"],
               "columns": [{"name": "commissionname"}]}
SCHEMA = schema_of({"tables": [COMMISSIONS, COMPANIES]})
TABLE = SCHEMA.table("companies")


def _read(text: str, *names: str, table=TABLE) -> dict[str, object]:
    rows = [row(table.name, "c", companyname=n, commissionname=DMC) for n in names]
    return {r.values["companyname"]: r for r in ended_references(table, rows, text)}


def test_a_former_member_loses_the_reference_with_the_clause_quoted() -> None:
    text = (f"Kelvo Trust was a company of the {DMC} from 1990 until it left in 2005. "
            "Kelvo Trust reported revenue of USD 4.2 billion.")
    kelvo = _read(text, "Kelvo Trust")["Kelvo Trust"]
    assert kelvo.values["commissionname"] is None
    (c,) = kelvo.provenance.corrections
    assert (c.column, c.old, c.new, c.reason, c.by) == ("commissionname", DMC, None, "ended",
                                                        "as-stated")
    assert c.evidence_quote.startswith("Kelvo Trust was a company") and "left in 2005" in \
        c.evidence_quote


@pytest.mark.parametrize("text,ended", [
    # the held-out Set2 answer (2026-11-29): an end in other words than "left", in prose and
    # in a roster, read by no cue; rules drawn from it are judged on template family 5
    (f"Kelvo Trust gave up membership of the {DMC} in 2003, after joining in 1980.",
     ["Kelvo Trust"]),
    (f"Kelvo Trust departed the {DMC} in 2003.", ["Kelvo Trust"]),
    (f"Kelvo Trust was a company of the {DMC} until it departed in 2003.", ["Kelvo Trust"]),
    (f"Members of the {DMC}: Rastou Bank. Past members: Kelvo Trust (departed 2003), "
     "Brin Holdings (departed 2008).", ["Kelvo Trust", "Brin Holdings"]),
    # ... and not where the same words end something else
    (f"Rastou Bank, a member of the {DMC}, gave up membership of the Kessel Board in 2001.",
     []),
    (f"Rastou Bank, a company of the {DMC}, departed the Kessel Board in 2001.", []),
    (f"Rastou Bank is a company of the {DMC}; its chief executive departed in 2003.", []),
    (f"Rastou Bank is a company of the {DMC}. Its ship departed for Oslo in 2003.", []),
])
def test_an_end_written_as_giving_up_or_departing(text, ended) -> None:
    names = ["Rastou Bank", "Kelvo Trust", "Brin Holdings"]
    got = _read(text, *[n for n in names if n in text])
    assert sorted(n for n, r in got.items() if r.values["commissionname"] is None) == \
        sorted(ended)


def test_a_roster_ends_only_the_former_members() -> None:
    text = (f"Members of the {DMC} (DMC) include Rastou Bank, Ulm Savings. "
            "Former members: Kelvo Trust (left 2005), Brin Holdings (left 2010).")
    got = _read(text, "Rastou Bank", "Ulm Savings", "Kelvo Trust", "Brin Holdings")
    assert {n: r.values["commissionname"] for n, r in got.items()} == {
        "Rastou Bank": DMC, "Ulm Savings": DMC, "Kelvo Trust": None, "Brin Holdings": None}


@pytest.mark.parametrize("text", [
    f"Kelvo Trust left the {DMC} in 2005.",
    f"The {DMC}'s former members include Kelvo Trust.",
])
def test_an_end_said_of_both_in_other_words(text) -> None:
    assert _read(text, "Kelvo Trust")["Kelvo Trust"].values["commissionname"] is None


@pytest.mark.parametrize("text", [
    f"Rastou Bank is a company of the {DMC}. It left its old headquarters.",
    # what the text says of one of them alone ends nothing
    f"The {DMC} no longer publishes quarterly reports. Its members include Rastou Bank.",
    f"The {DMC} withdrew from the International Forum in 2001. Members include Rastou Bank.",
    f"Rastou Bank reported revenue. The {DMC}'s former members include Kelvo Trust.",
    f"Rastou Bank no longer reports in euros. The bank is a member of the {DMC}.",
    f"Rastou Bank's founder left in 1990. The bank has been a company of the {DMC}.",
    f"The {DMC}, formed by former members of the Kessel Board, regulates Rastou Bank.",
    # named before "former members", not listed after it
    f"Rastou Bank hosted former members of the Kessel Board. It is a company of the {DMC}.",
    f"Rastou Bank, formerly known as Rastou Savings, is regulated by the {DMC}.",
    # an end and a present relationship in one clause: ambiguous, kept
    f"Rastou Bank, formerly a member of the Kessel Board, joined the {DMC} in 1995.",
    # the end is about another body, in its own clause ("left the X in 1990" is an end)
    f"Rastou Bank left the Kessel Board in 1990; it joined the {DMC} in 1992.",
    f"Rastou Bank left the Kessel Board in 1990 but joined the {DMC} in 1992.",
    "Rastou Bank reported revenue of USD 63907.4M.",        # nothing said of membership
])
def test_a_current_or_unstated_membership_is_kept(text) -> None:
    r = _read(text, "Rastou Bank")["Rastou Bank"]
    assert r.values["commissionname"] == DMC and r.provenance.corrections == []


@pytest.mark.parametrize("text,ended", [
    # the end is said of another entity named just before it, or of another group
    (f"The {DMC} counts Rastou Bank as a member and Kelvo Trust as a former member.",
     ["Kelvo Trust"]),
    (f"Rastou Bank, a member of the {DMC}, hired a former member of parliament.", []),
    # a former member of the same group someone hired, met or appointed is someone else
    (f"Rastou Bank, a member of the {DMC}, hired a former member of the commission.", []),
    (f"Rastou Bank, a company of the {DMC}, appointed two former members of the {DMC}.",
     []),
    (f"Rastou Bank is a company of the {DMC}; it met former members of the DMC.", []),
    # the review of 3d5e5a0: a passive or an adjective before the cue is still its end
    (f"Kelvo Trust was considered a former member of the {DMC}.", ["Kelvo Trust"]),
    (f"Kelvo Trust, named a former member of the {DMC} in 2005, reported revenue.",
     ["Kelvo Trust"]),
    (f"Kelvo Trust, a distinguished former member of the {DMC}, reported revenue.",
     ["Kelvo Trust"]),
    (f"The {DMC} investigated Rastou Bank until it withdrew the bid.", []),
    (f"Rastou Bank, a company of the {DMC}, hired a manager who left the firm in 1990.", []),
    (f"Rastou Bank, a company of the {DMC}, withdrew from the Kessel Forum in 2001.", []),
    # said of this entity and this group, in the words a text uses
    (f"Kelvo Trust, a former member of the {DMC}, reported revenue.", ["Kelvo Trust"]),
    (f"Kelvo Trust was a company of the {DMC} until it left the commission in 2005.",
     ["Kelvo Trust"]),
    (f"Kelvo Trust was expelled from the {DMC} in 2003.", ["Kelvo Trust"]),
    (f"Kelvo Trust is no longer part of the {DMC}.", ["Kelvo Trust"]),
    # the review of 171dff3: a subject written with more words, or in a list, is still its
    (f"The Kelvo Trust, a former member of the {DMC}, reported revenue.", ["Kelvo Trust"]),
    (f"Kelvo Trust and Varn Holdings were former members of the {DMC}.", ["Kelvo Trust"]),
    (f"The {DMC} counts Kelvo Trust and Varn Holdings as former members.", ["Kelvo Trust"]),
    (f"Kelvo Trust, once a member of the {DMC}, was expelled from it in 2003.",
     ["Kelvo Trust"]),
    (f"Kelvo Trust was a company of the {DMC} until it left the DMC in 2005.",
     ["Kelvo Trust"]),
    (f"Kelvo Trust was a company of the {DMC} until it left the cartel in 2005.",
     ["Kelvo Trust"]),
    (f"The {DMC} investigated Rastou Bank until it withdrew from the tender in 2005.", []),
    (f"The {DMC} regulated Rastou Bank until it left for Paris.", []),
])
def test_an_end_is_said_of_this_entity_and_this_group(text, ended) -> None:
    got = _read(text, "Rastou Bank", "Kelvo Trust")
    assert [n for n, r in got.items() if r.values["commissionname"] is None] == ended


@pytest.mark.parametrize("text,ended", [
    # a limit the ninth session listed: the group written only as its acronym
    ("Kelvo Trust left the DMC in 2005.", ["Kelvo Trust"]),
    ("Kelvo Trust, a former member of the DMC, reported revenue.", ["Kelvo Trust"]),
    ("Kelvo Trust was expelled from the DMC in 2003. Rastou Bank joined the DMC in 1995.",
     ["Kelvo Trust"]),
    ("The DMC lists its members. Former members: Kelvo Trust (left 2005).", ["Kelvo Trust"]),
    # an acronym is the group's only written in capitals, as a whole word, of it
    ("Kelvo Trust left the dmc in 2005.", []),
    ("Kelvo Trust left the DMCA in 2005.", []),
    ("Kelvo Trust left the D.M.C.A. in 2005.", []),
    ("Kelvo Trust left the DMB in 2005.", []),
    # another entity holding the acronym is no mention of the group ("DMC Holdings")
    ("Kelvo Trust left DMC Holdings in 2005.", []),
    ("Rastou Bank is a member of the DMC; it met former members of the DMC.", []),
])
def test_a_group_written_as_its_acronym_is_named(text, ended) -> None:
    rows = [row(TABLE.name, "c", companyname=n, commissionname=DMC)
            for n in ("Rastou Bank", "Kelvo Trust")]
    rows.append(row(TABLE.name, "c", companyname="DMC Holdings", commissionname=None))
    got = {r.values["companyname"]: r for r in ended_references(TABLE, rows, text)}
    assert [n for n in ("Rastou Bank", "Kelvo Trust")
            if got[n].values["commissionname"] is None] == ended


def test_a_short_name_has_no_acronym_to_be_written_as() -> None:
    from quaderno.methods.docsage.end_clause import naming, referring
    assert referring("Orvan Prize").pattern == naming("Orvan Prize").pattern   # "OP"
    assert not referring("Orvan Prize").search("OP left")
    assert referring("League of Merounddian Cities").search("It left the LMC in 2001.")
    assert not referring("League of Merounddian Cities").search("It left the LOMC.")


def test_a_common_or_shared_acronym_names_no_group() -> None:
    """Review 2: "USA", "CEO" and "USD" are no group's, as they are in ``named_groups``;
    and "DMC" is neither group's when two of the rows' groups have those initials."""
    usa = "United Sandar Association"
    rows = [row(TABLE.name, "c", companyname="Kelvo Trust", commissionname=usa)]
    (kept,) = ended_references(TABLE, rows, "Kelvo Trust left the USA in 2005.")
    assert kept.values["commissionname"] == usa
    (named,) = ended_references(TABLE, rows, f"Kelvo Trust left the {usa} in 2005.")
    assert named.values["commissionname"] is None
    dovrel = "Dovrel Mining Council"
    rows = [row(TABLE.name, "c", companyname="Kelvo Trust", commissionname=DMC),
            row(TABLE.name, "c", companyname="Rastou Bank", commissionname=dovrel)]
    got = ended_references(TABLE, rows, "Kelvo Trust left the DMC in 2005.")
    assert [r.values["commissionname"] for r in got] == [DMC, dovrel]
    # with one group of those initials among the rows, "DMC" is it
    (alone,) = ended_references(TABLE, rows[:1], "Kelvo Trust left the DMC in 2005.")
    assert alone.values["commissionname"] is None
    # review 1: also before a full stop; and a body's own acronym is no common one
    (alone,) = ended_references(TABLE, rows[:1], "Kelvo Trust, a former member of the DMC.")
    assert alone.values["commissionname"] is None
    nba = "National Basketball Association"
    rows = [row(TABLE.name, "c", companyname="Kelvo Trust", commissionname=nba)]
    (left,) = ended_references(TABLE, rows, "Kelvo Trust left the NBA in 2005.")
    assert left.values["commissionname"] is None


PRONOUN_ENDS = [
    # a limit older notes listed: the pronoun's end was taken as every entity's named
    (f"Kelvo Trust bought Brin Holdings, which left the {DMC} in 2005.", ["Brin Holdings"]),
    (f"Kelvo Trust partnered with Brin Holdings, a member of the {DMC} until it left in 2005.",
     ["Brin Holdings"]),
    (f"Kelvo Trust, a member of the {DMC}, bought Brin Holdings after it left in 2005.",
     ["Brin Holdings"]),
    (f"Brin Holdings left the {DMC} in 2005 and sold its stake in Kelvo Trust.",
     ["Brin Holdings"]),
    # one list, one end: each entity's
    (f"Kelvo Trust and Brin Holdings left the {DMC} in 2005.", ["Kelvo Trust", "Brin Holdings"]),
    (f"Kelvo Trust, Ulm Savings and Brin Holdings left the {DMC} in 2005.",
     ["Kelvo Trust", "Brin Holdings"]),
    (f"Kelvo Trust, Ulm Savings, and Brin Holdings left the {DMC} in 2005.",
     ["Kelvo Trust", "Brin Holdings"]),
    # review 2: with no word standing for the other entity, the clause's subject may be the
    # one that left: each is ended, as before the rule
    (f"Kelvo Trust bought Brin Holdings in 2001 and left the {DMC} in 2005.",
     ["Kelvo Trust", "Brin Holdings"]),
    (f"Kelvo Trust and its partner Brin Holdings left the {DMC} in 2005.",
     ["Kelvo Trust", "Brin Holdings"]),
    (f"Kelvo Trust (owner of Brin Holdings) left the {DMC} in 2005.",
     ["Kelvo Trust", "Brin Holdings"]),
    # this entity named last before the cue
    (f"Kelvo Trust, once a partner of Brin Holdings, was a member of the {DMC} until it left "
     "in 2005.", ["Kelvo Trust"]),
    (f"Kelvo Trust was a member of the {DMC} until it left in 2005.", ["Kelvo Trust"]),
    # an aside before the comma and the cue: the subject is the name before it (a limit
    # older notes listed: "owner of Brin Holdings," made Brin Holdings the subject)
    (f"Kelvo Trust, owner of Brin Holdings, left the {DMC} in 2005.", ["Kelvo Trust"]),
    (f"Kelvo Trust, Brin Holdings' owner, left the {DMC} in 2005.", ["Kelvo Trust"]),
    (f"Brin Holdings, which Kelvo Trust bought, left the {DMC} in 2005.", ["Brin Holdings"]),
    # someone of an entity left, not the entity (another older limit)
    (f"Kelvo Trust hired the chief of Brin Holdings, who left the {DMC} in 2005.", []),
    (f"Kelvo Trust bought Brin Holdings, whose founder left the {DMC} in 2005.", []),
    (f"Kelvo Trust bought Brin Holdings; Brin Holdings' founder later left the {DMC} in 2005.",
     []),
    (f"Kelvo Trust bought Brin Holdings, a member of the {DMC} until its chief executive left "
     "in 2005.", []),
    # a conjunction after "their" starts another verb: the entities' own end
    (f"Kelvo Trust and Brin Holdings ended their partnership and left the {DMC} in 2005.",
     ["Kelvo Trust", "Brin Holdings"]),
    # review: a possessive before a clause of the entity's own, or after "and", is no one
    # else's subject; a list whose items have asides names its subjects itself
    (f"Kelvo Trust kept its seat in the {DMC} until it left in 2005.", ["Kelvo Trust"]),
    (f"Kelvo Trust sold its stake before it left the {DMC} in 2005.", ["Kelvo Trust"]),
    (f"Kelvo Trust ended its membership of the {DMC} when it left in 2005.", ["Kelvo Trust"]),
    (f"Kelvo Trust and its subsidiary left the {DMC} in 2005.", ["Kelvo Trust"]),
    (f"Kelvo Trust, a bank, and Brin Holdings, a fund, left the {DMC} in 2005.",
     ["Kelvo Trust", "Brin Holdings"]),
    # review 2: "and" starting a clause of its own is no list; "as well as its" is
    (f"Kelvo Trust stayed in the {DMC} and its chief executive left in 2005.", []),
    (f"Kelvo Trust remained a member of the {DMC}, and its founder left the {DMC} in 2005.",
     []),
    (f"Kelvo Trust stayed in the {DMC}, though its chairman once left the {DMC} in 2005.", []),
    (f"Kelvo Trust stayed and Brin Holdings, a fund, left the {DMC} in 2005.",
     ["Brin Holdings"]),
    (f"Kelvo Trust, a bank, stayed, and Brin Holdings, a fund, left the {DMC} in 2005.",
     ["Brin Holdings"]),
    (f"Kelvo Trust and all its subsidiaries left the {DMC} in 2005.", ["Kelvo Trust"]),
    (f"Kelvo Trust as well as its subsidiary left the {DMC} in 2005.", ["Kelvo Trust"]),
]


@pytest.mark.parametrize("text,ended", PRONOUN_ENDS)
def test_an_end_with_no_subject_is_the_entity_named_last_before_it(text, ended) -> None:
    got = _read(text, "Kelvo Trust", "Brin Holdings", "Ulm Savings")
    assert [n for n in ("Kelvo Trust", "Brin Holdings")
            if got[n].values["commissionname"] is None] == ended


@pytest.mark.parametrize("text,ended", PRONOUN_ENDS)
def test_a_link_or_a_groups_member_ends_by_the_same_rule(text, ended) -> None:
    from quaderno.methods.docsage.ended import ended_members
    kept, gone = _links(text, "Kelvo Trust", "Brin Holdings", "Ulm Savings")
    assert [r.values["companyname"] for r in gone if r.values["companyname"] != "Ulm Savings"
            ] == ended
    (table,) = schema_of({"tables": [{"name": "drournlia_markets_commission", "columns": [
        {"name": "name"}, {"name": "employees", "type": "INT"}]}]}).tables
    _, gone = ended_members(table, [row(table.name, "c", name=n) for n in
                                    ("Kelvo Trust", "Brin Holdings", "Ulm Savings")], text)
    assert [r.values["name"] for r in gone if r.values["name"] != "Ulm Savings"] == ended


def test_a_possessive_before_the_entitys_own_clause_is_no_one_elses_subject() -> None:
    """Review: "the DMC's members until it left" read "members" as someone of the DMC
    leaving. (Not in PRONOUN_ENDS: a group written with "'s" is not found by the
    members-table rule, a limit of its own.)"""
    got = _read(f"Kelvo Trust was one of the {DMC}'s members until it left in 2005.",
                "Kelvo Trust", "Brin Holdings")
    assert got["Kelvo Trust"].values["commissionname"] is None
    assert got["Brin Holdings"].values["commissionname"] == DMC


def test_a_person_described_as_of_an_entity_who_left_is_this_row_when_named_before_it():
    """Review: "the chief of Brin Holdings, who left" is someone else's end, but in "Anna
    Li, a professor of Ulm College, who left" the one who left is Anna Li, the row."""
    society = "Stedr Society"
    people = schema_of({"tables": [
        {"name": "societies", "primary_key": ["societyname"],
         "columns": [{"name": "societyname"}]},
        {"name": "people", "primary_key": ["personname"],
         "columns": [{"name": "personname"}, {"name": "societyname"}],
         "foreign_keys": [{"column": "societyname", "references_table": "societies",
                           "references_column": "societyname"}]}]}).table("people")

    def ended(text: str) -> list[str]:
        rows = [row("people", "c", personname=n, societyname=society)
                for n in ("Anna Li", "Ben Roe")]
        return [r.values["personname"] for r in ended_references(people, rows, text)
                if r.values["societyname"] is None]
    assert ended(f"Anna Li, a professor of Ulm College, who left the {society} in 2005, "
                 "retired.") == ["Anna Li"]
    assert ended(f"Ben Roe hired the chief of Ulm College, who left the {society} in "
                 "2005.") == []
    # review 2: an alias, "then", "an emeritus" before the description; someone of hers
    for text in (f"Anna Li (AL), a professor of Ulm College, who left the {society} in 2005.",
                 f"Anna Li, then a professor of Ulm College, who left the {society} in 2005.",
                 f"Anna Li, an emeritus professor of Ulm College, who left the {society} in "
                 "2005."):
        assert ended(text) == ["Anna Li"], text
    assert ended(f"Anna Li, the mentor of the dean of Ulm College, who left the {society} "
                 "in 2005, retired.") == []
    assert ended(f"Anna Li remained a fellow of the {society}, and her student left the "
                 f"{society} in 2005.") == []


def test_a_peer_inside_the_groups_name_and_a_tie_of_sides_in_links() -> None:
    """Review 2: "Oslo" inside "Oslo League" was read as the city named last, so Bergen's
    end was lost and Oslo's taken; and with as many leagues as cities, one reading of a row
    took its peers from the leagues."""
    table = schema_of({"tables": [
        {"name": "leagues", "primary_key": ["league"], "columns": [{"name": "league"}]},
        {"name": "cities", "primary_key": ["city"], "columns": [{"name": "city"}]},
        {"name": "league_city", "primary_key": ["league", "city"],
         "columns": [{"name": "league"}, {"name": "city"}],
         "foreign_keys": [
             {"column": "league", "references_table": "leagues", "references_column": "league"},
             {"column": "city", "references_table": "cities", "references_column": "city"}]}]}
    ).table("league_city")

    def gone(text, pairs):
        rows = [row(table.name, "c", league=g, city=c) for g, c in pairs]
        return [(r.values["league"], r.values["city"]) for r in ended_links(table, rows, text)[1]]
    assert gone("Bergen was a member of the Oslo League until it left in 2005.",
                [("Oslo League", "Bergen"), ("Oslo League", "Oslo")]) == [("Oslo League", "Bergen")]
    pairs = [(g, c) for g in ("North League", "South League") for c in ("Oslo", "Bergen")]
    assert gone("Oslo hosted Bergen, a member of the North League until it left in 2005.",
                pairs) == [("North League", "Bergen")]


@pytest.mark.parametrize("name", ["Bank of Kelvo", "Kelvo & Sons", "University of Tromsø",
                                  "Kelvo Trust", "Fondation de la Mer", "Society for Kelvo"])
def test_a_name_with_joiners_before_the_cue_is_the_subject(name) -> None:
    for text in (f"{name}, a former member of the {DMC}, reported revenue.",
                 f"The {DMC} lists {name} as a former member."):
        rows = [row("companies", "c", companyname=name, commissionname=DMC)]
        (got,) = ended_references(TABLE, rows, text)
        assert got.values["commissionname"] is None, text


@pytest.mark.parametrize("column,kept", [
    ("left_year", True), ("status", True), ("member_until", True), ("is_active", True),
    ("endowment", False), ("attendance", False), ("interactive_sites", False),
])
def test_a_table_that_can_hold_the_end_keeps_its_references(column, kept) -> None:
    table = schema_of({"tables": [COMMISSIONS, {**COMPANIES, "columns": [
        *COMPANIES["columns"], {"name": column}]}]}).table("companies")
    text = f"Kelvo Trust was a company of the {DMC} from 1990 until it left in 2005."
    value = _read(text, "Kelvo Trust", table=table)["Kelvo Trust"].values["commissionname"]
    assert (value == DMC) is kept


def test_clauses_split_at_sentences_semicolons_and_but() -> None:
    assert clauses("A left X in 1990; it joined Y. B is in Z but C left in 2001.\nD.") == [
        "A left X in 1990", "it joined Y.", "B is in Z", "C left in 2001.", "D."]
    # layout padding is collapsed before splitting
    assert clauses("A is in Z" + " " * 5000 + "but B left.") == ["A is in Z", "B left."]


def test_a_title_or_an_initial_before_a_name_ends_no_clause() -> None:
    assert clauses("Skoustil Kelskyrn (S. Kelskyrn) is a laureate. Dr. Moskia left in 2005. "
                   "It joined Y. The club left Z. B is in Q.") == [
        "Skoustil Kelskyrn (S. Kelskyrn) is a laureate.", "Dr. Moskia left in 2005.",
        "It joined Y.", "The club left Z.", "B is in Q."]


def test_a_run_of_initials_or_an_initial_in_any_script_ends_no_clause() -> None:
    assert clauses("J. R. R. Tolkien left the DMC in 2005. Ulm Bank joined it.") == [
        "J. R. R. Tolkien left the DMC in 2005.", "Ulm Bank joined it."]
    assert clauses("Émile Zola (É. Zola) left the DMC. Ulm Bank joined it.") == [
        "Émile Zola (É. Zola) left the DMC.", "Ulm Bank joined it."]
    # initials inside a sentence name no one ("the U. K."): the next sentence stays apart
    assert clauses("Ulm Bank moved its seat to the U. K. Kelvo Trust left the DMC.") == [
        "Ulm Bank moved its seat to the U. K.", "Kelvo Trust left the DMC."]
    # one initial the text never writes out still ends, in any script: "Plan Ö. Rastou"
    assert clauses("Ulm Bank joined under Plan Ö. Rastou left.") == [
        "Ulm Bank joined under Plan Ö.", "Rastou left."]


@pytest.mark.parametrize("first,second", [
    # the review of f137fa8: a sentence ending in one capital letter merged with the next
    ("Ulm Bank represents the Drournlia Markets Commission in the U.S.",
     "Rastou left the Drournlia Markets Commission in 2005."),
    ("Ulm Bank joined the DMC under Plan B.", "Rastou left the DMC in 2005."),
    ("It fought in World War I.", "Later it joined the DMC."),
    ("Ulm Bank is on Main St.", "Rastou joined the DMC."),
])
def test_a_sentence_ending_in_a_capital_that_is_no_initial_ends(first, second) -> None:
    assert clauses(f"{first} {second}") == [first, second]


def test_a_former_member_after_the_us_is_the_only_one_set_apart() -> None:
    from quaderno.methods.docsage.ended import ended_members
    (table,) = schema_of({"tables": [{"name": "drournlia_markets_commission", "columns": [
        {"name": "name"}, {"name": "employees", "type": "INT"}]}]}).tables
    text = (f"Ulm Bank represents the {DMC} in the U.S. Rastou left the {DMC} in 2005.")
    _, ended = ended_members(table, [row(table.name, "c", name=n)
                                     for n in ("Ulm Bank", "Rastou")], text)
    assert [r.values["name"] for r in ended] == ["Rastou"]


@pytest.mark.parametrize("value", [float("nan"), True, 17, None])
def test_what_is_no_name_is_neither_ended_nor_read_as_one(value) -> None:
    r = row("companies", "c", companyname="Kelvo Trust", commissionname=value)
    (out,) = ended_references(TABLE, [r], f"Kelvo Trust left the {DMC} in 2005. {value}")
    assert out.provenance.corrections == []


def test_extraction_applies_it_on_every_read_and_stores_what_the_model_wrote(tmp_path):
    chunk = Chunk(id="d7#0", text=f"Kelvo Trust was a company of the {DMC} from 1990 until "
                                  "it left in 2005.")

    def respond(request):
        return json.dumps({"commissions": [{"commissionname": DMC}],
                           "companies": [{"companyname": "Kelvo Trust",
                                          "commissionname": DMC, "annual_revenue": None}]})
    store = TupleStore(tmp_path)
    settings = ExtractionSettings(confidence="none")
    for _ in range(2):            # the second read comes from the store
        fake = FakeLLM(respond=respond)
        rows = all_rows(asyncio.run(extract(LM(fake), [chunk], SCHEMA, settings, store=store)))
        company = next(r for r in rows if r.table == "companies")
        assert company.values["commissionname"] is None
        assert [c.reason for c in company.provenance.corrections] == ["ended"]
    assert len(fake.requests) == 0
    (stored,) = store.get(chunk, TABLE, LM(fake).model_id, settings)
    assert stored.values["commissionname"] == DMC


def _ended_on_generated_collections(family: str, ended) -> dict[str, list[int]]:
    """Per role (member, former): how many (entity, topic) pairs read from a document naming
    the entity there were, and how many of them ``ended(name, topic, doc)`` says ended."""
    counts = {"member": [0, 0], "former": [0, 0]}
    for seed in (0, 1):
        c = make_collection(family, "set1", seed, per_type=1)
        roles = {e.name: e.role for e in [*c.world.members, *c.world.distractors]
                 if e.role in ("member", "former")}
        for doc in c.documents:
            for name, role in roles.items():
                if name.lower() not in doc.text.lower():
                    continue
                counts[role][0] += 1
                counts[role][1] += ended(name, c.world.topic, doc)
    return counts


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_on_generated_collections_only_former_members_are_ended(family) -> None:
    """Differential check on the benchmark's own documents: for every document naming a
    member or a former member of the topic, the pair (entity, topic) read from it is ended
    exactly for former members (the generator knows who is which; 2 seeds per family)."""
    def ended(name, topic, doc):
        (r,) = ended_references(TABLE, [row("companies", doc.id, companyname=name,
                                            commissionname=topic)], doc.text)
        return r.values["commissionname"] is None
    counts = _ended_on_generated_collections(family, ended)
    members, formers = counts["member"], counts["former"]
    assert members[0] > 10 and formers[0] > 0
    assert members[1] == 0                      # no current member loses its membership
    assert formers[1] == formers[0]             # every former member does


def test_the_committee_does_not_restore_an_ended_reference() -> None:
    """Under a threshold that flags every cell (the measuring model's τ_low = 0.999), the
    committee re-reads the same chunk and votes the commission back in: an ended cell keeps
    its NULL, and its committee vote is not applied."""
    from quaderno.methods.docsage.clear import ClearConfig, run_clear
    from quaderno.methods.docsage.confidence import Calibration
    chunk = Chunk(id="d7#0", text=f"Kelvo Trust was a company of the {DMC} from 1990 until "
                                  "it left in 2005. Kelvo Trust reported revenue of USD 4.2 "
                                  "billion.")

    def respond(request):
        return json.dumps({"commissions": [{"commissionname": DMC}],
                           "companies": [{"companyname": "Kelvo Trust",
                                          "commissionname": DMC, "annual_revenue": 4.2}]})
    result = asyncio.run(run_clear(LM(FakeLLM(respond=respond)), SCHEMA, [chunk],
                                   config=ClearConfig(level_b=False),
                                   calibration=Calibration(tau_low=0.999)))
    assert result.report.llm_calls_correct > 0              # the committee did vote
    company = next(r for r in result.rows if r.table == "companies")
    assert company.values["commissionname"] is None
    assert company.values["annual_revenue"] == 4_200_000_000
    assert [c.reason for c in company.provenance.corrections
            if c.column == "commissionname"] == ["ended"]


def test_completion_does_not_search_for_an_ended_reference() -> None:
    from quaderno.methods.docsage.needed_cells import missing_cells, needed_columns
    schema = schema_of({"tables": [COMMISSIONS, COMPANIES],
                        "join_path": ["companies", "commissions"]})
    text = f"Kelvo Trust was a company of the {DMC} from 1990 until it left in 2005."
    rows = ended_references(schema.table("companies"), [
        row("companies", "d7", companyname="Kelvo Trust", commissionname=DMC,
            annual_revenue=4.2e9),
        row("companies", "d8", companyname="Ulm Savings", annual_revenue=1.0e9)], text)
    needed = needed_columns(schema, f"What is the highest annual revenue among the companies "
                                    f"of the {DMC}?")
    assert missing_cells(schema, rows, needed) == [("Ulm Savings", ["commission"])]


@pytest.mark.parametrize("ended_first", [True, False])
def test_merging_one_entitys_rows_keeps_an_ended_reference_empty(ended_first) -> None:
    """Another chunk naming the former member with the commission and no end (a roster
    read carelessly) must not put the membership back, whichever row comes first."""
    from quaderno.methods.docsage.aliases import merge_entities
    text = f"Kelvo Trust was a company of the {DMC} from 1990 until it left in 2005."
    (ended,) = ended_references(TABLE, [row("companies", "d7", companyname="Kelvo Trust",
                                            commissionname=DMC)], text)
    other = row("companies", "d9", companyname="Kelvo Trust", commissionname=DMC,
                annual_revenue=4.2e9)
    rows = [ended, other] if ended_first else [other, ended]
    (merged,) = merge_entities(SCHEMA, rows)
    assert merged.values["commissionname"] is None
    assert merged.values["annual_revenue"] == 4.2e9
    assert "ended" in [c.reason for c in merged.provenance.corrections]


# a link table: the membership is the row, its references its key (the measuring model's
# Set3 schema had league_city(league_name, city_name))
MEMBERS = {"name": "members", "primary_key": ["commissionname", "companyname"],
           "columns": [{"name": "commissionname"}, {"name": "companyname"}],
           "foreign_keys": [{"column": "commissionname", "references_table": "commissions",
                             "references_column": "commissionname"},
                            {"column": "companyname", "references_table": "companies",
                             "references_column": "companyname"}]}
LINKED = schema_of({"tables": [COMMISSIONS, COMPANIES, MEMBERS]})
LINK = LINKED.table("members")


def _links(text: str, *names: str, table=LINK, chunk="c"):
    rows = [row(table.name, chunk, commissionname=DMC, companyname=n) for n in names]
    kept, ended = ended_links(table, rows, text)
    return [r.values["companyname"] for r in kept], ended


def test_a_link_row_the_text_says_has_ended_is_left_out_with_the_clause() -> None:
    text = (f"Members of the {DMC} (DMC) include Rastou Bank, Ulm Savings. "
            "Former members: Kelvo Trust (left 2005), Brin Holdings (left 2010).")
    kept, ended = _links(text, "Rastou Bank", "Kelvo Trust", "Ulm Savings", "Brin Holdings")
    assert kept == ["Rastou Bank", "Ulm Savings"]
    assert [r.values for r in ended] == [{"commissionname": DMC, "companyname": "Kelvo Trust"},
                                         {"commissionname": DMC, "companyname": "Brin Holdings"}]
    (c,) = ended[0].provenance.corrections
    assert (c.column, c.old, c.new, c.reason, c.by) == ("commissionname", DMC, None, "ended",
                                                        "as-stated")
    assert c.evidence_quote.startswith("Former members: Kelvo Trust (left 2005)")
    # said in one clause naming both, either way round
    for text in (f"Kelvo Trust was a company of the {DMC} from 1990 until it left in 2005.",
                 f"The {DMC}'s former members include Kelvo Trust."):
        kept, (ended,) = _links(text, "Kelvo Trust")
        assert kept == [] and [c.column for c in ended.provenance.corrections] == [
            "commissionname"]
    # a table whose references are not its key: a reference is emptied, never a row dropped
    text = f"Kelvo Trust was a company of the {DMC} from 1990 until it left in 2005."
    company = row("companies", "c", companyname="Kelvo Trust", commissionname=DMC)
    assert ended_links(TABLE, [company], text) == ([company], [])


@pytest.mark.parametrize("text", [
    f"Rastou Bank, formerly a member of the Kessel Board, joined the {DMC} in 1995.",
    f"The {DMC} no longer publishes quarterly reports. Its members include Rastou Bank.",
    f"Rastou Bank left the Kessel Board in 1990; it joined the {DMC} in 1992.",
])
def test_a_current_link_is_kept(text) -> None:
    assert _links(text, "Rastou Bank") == (["Rastou Bank"], [])


def test_a_link_table_that_can_hold_the_end_keeps_its_rows() -> None:
    table = schema_of({"tables": [COMMISSIONS, COMPANIES, {**MEMBERS, "columns": [
        *MEMBERS["columns"], {"name": "left_year", "type": "INT"}]}]}).table("members")
    text = f"Kelvo Trust was a company of the {DMC} from 1990 until it left in 2005."
    assert _links(text, "Kelvo Trust", table=table)[0] == ["Kelvo Trust"]


def test_a_link_said_ended_in_one_chunk_is_left_out_of_every_chunk(tmp_path) -> None:
    """The roster says Kelvo Trust left; a second document names it with the commission and
    no end: CLEAR leaves both rows out, and its report names each with the clause and the
    chunk that said it. The store keeps what the model wrote."""
    from quaderno.methods.docsage.clear import ClearConfig, run_clear
    roster = Chunk(id="d1#0", text=f"Members of the {DMC} include Rastou Bank. Former "
                                   "members: Kelvo Trust (left 2005).")
    profile = Chunk(id="d2#0", text=f"Kelvo Trust, a bank, and the {DMC} signed a lease.")
    links = {"d1#0": ["Rastou Bank", "Kelvo Trust"], "d2#0": ["Kelvo Trust"]}

    def respond(request):
        chunk = "d1#0" if "Former members" in request.messages[-1].content else "d2#0"
        return json.dumps({"commissions": [{"commissionname": DMC}], "companies": [],
                           "members": [{"commissionname": DMC, "companyname": n}
                                       for n in links[chunk]]})
    store = TupleStore(tmp_path)
    result = asyncio.run(run_clear(LM(FakeLLM(respond=respond)), LINKED, [roster, profile],
                                   config=ClearConfig(level_a=False, level_b=False),
                                   settings=ExtractionSettings(confidence="none"),
                                   store=store))
    assert [r.values["companyname"] for r in result.rows if r.table == "members"] == [
        "Rastou Bank"]
    said = "Former members: Kelvo Trust (left 2005)."
    assert result.report.links_ended == [
        {"table": "members", "values": {"commissionname": DMC, "companyname": "Kelvo Trust"},
         "chunk_id": "d1#0", "quote": said, "said_in": "d1#0"},
        {"table": "members", "values": {"commissionname": DMC, "companyname": "Kelvo Trust"},
         "chunk_id": "d2#0", "quote": said, "said_in": "d1#0"}]
    stored = store.get(roster, LINK, LM(FakeLLM(respond=respond)).model_id,
                       ExtractionSettings(confidence="none"))
    assert len(stored) == 2


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_on_generated_collections_only_former_members_links_end(family) -> None:
    """The differential check above, for a link table (topic, entity)."""
    def ended(name, topic, doc):
        kept, _ = ended_links(LINK, [row("members", doc.id, companyname=name,
                                         commissionname=topic)], doc.text)
        return not kept
    counts = _ended_on_generated_collections(family, ended)
    members, formers = counts["member"], counts["former"]
    assert members[0] > 10 and formers[0] > 0
    assert members[1] == 0 and formers[1] == formers[0]


@pytest.mark.parametrize("text,ended", [
    # an item of the list, never a word inside a longer name
    (f"Members of the {DMC} include York, Leeds. Former members: New York (left 2005).",
     ["New York"]),
    (f"Members of the {DMC} include Leeds. Its former members include York and Ely Town.",
     ["York", "Ely Town"]),
    # a list in a text that does not name the commission says nothing of it
    ("Former members: York (left 2005), New York (left 2001).", []),
    # an end said of another in a clause naming both, after "while"
    (f"York stayed in the {DMC}, while New York left in 2005.", []),
    # "no longer" of something other than the membership
    (f"York, a company of the {DMC}, no longer hosts the annual meeting.", []),
    (f"New York is no longer a member of the {DMC}.", ["New York"]),
    (f"New York ceased to be part of the {DMC} in 2001.", ["New York"]),
])
def test_which_roster_items_and_clauses_end_a_link(text, ended) -> None:
    names = ["York", "Leeds", "New York", "Ely", "Ely Town"]
    kept, out = _links(text, *names)
    assert [r.values["companyname"] for r in out] == ended
    assert kept == [n for n in names if n not in ended]
    # a plain reference reads the same
    got = _read(text, *names)
    assert [n for n in names if got[n].values["commissionname"] is None] == ended



def test_a_roster_item_is_a_whole_name_even_read_alone() -> None:
    # no "New York" row read beside it: York is still no item of this list
    text = f"Members of the {DMC} include Leeds. Former members: New York (left 2005)."
    assert _links(text, "York") == (["York"], [])
    assert _links(text, "New York")[0] == []


def test_a_reference_inside_a_longer_reference_is_no_mention_of_it() -> None:
    text = "Kelvo Trust left the North Kessel Board in 2005."
    rows = [row("companies", "c", companyname="Kelvo Trust", commissionname="Kessel Board"),
            row("companies", "c", companyname="Rastou Bank",
                commissionname="North Kessel Board")]
    assert [r.values["commissionname"] for r in ended_references(TABLE, rows, text)] == [
        "Kessel Board", "North Kessel Board"]


@pytest.mark.parametrize("tables,keys", [
    # a key with a part that is not a reference: the row holds data, not only the link
    ([COMMISSIONS, COMPANIES, {"name": "products", "primary_key": ["companyname", "product"],
                               "columns": [{"name": "companyname"}, {"name": "product"},
                                           {"name": "units", "type": "INT"}],
                               "foreign_keys": [{"column": "companyname",
                                                 "references_table": "companies",
                                                 "references_column": "companyname"}]}],
     {"companyname": "Kelvo Trust", "product": "Drournlia Markets Commission"}),
    # a link of three entities
    ([COMMISSIONS, COMPANIES, {"name": "sectors", "primary_key": ["sectorname"],
                               "columns": [{"name": "sectorname"}]},
      {**MEMBERS, "primary_key": ["commissionname", "companyname", "sectorname"],
       "columns": [*MEMBERS["columns"], {"name": "sectorname"}],
       "foreign_keys": [*MEMBERS["foreign_keys"], {"column": "sectorname",
                                                   "references_table": "sectors",
                                                   "references_column": "sectorname"}]}],
     {"commissionname": DMC, "companyname": "Kelvo Trust", "sectorname": None}),
])
def test_only_a_link_of_two_entities_is_left_out(tables, keys) -> None:
    schema = schema_of({"tables": tables})
    table = schema.tables[-1]
    r = row(table.name, "c", **keys)
    text = f"Kelvo Trust was a company of the {DMC} from 1990 until it left in 2005."
    assert ended_links(table, [r], text) == ([r], [])


def test_the_clause_stays_the_reason_after_alias_names_change(tmp_path) -> None:
    """The roster writes "Kelvo Trust Ltd", two other chunks "Kelvo Trust": canonicalization
    renames the ended row after its end was recorded, and the report keeps the clause."""
    from quaderno.methods.docsage.clear import ClearConfig, run_clear
    said = "Former members: Kelvo Trust Ltd (left 2005)."
    chunks = [Chunk(id="d1#0", text=f"Members of the {DMC} include Rastou Bank. {said}"),
              Chunk(id="d2#0", text=f"Kelvo Trust and the {DMC} signed a lease."),
              Chunk(id="d3#0", text=f"Kelvo Trust met the {DMC} in May.")]

    def respond(request):
        name = "Kelvo Trust Ltd" if "Former" in request.messages[-1].content else "Kelvo Trust"
        return json.dumps({"commissions": [], "companies": [],
                           "members": [{"commissionname": DMC, "companyname": name}]})
    result = asyncio.run(run_clear(LM(FakeLLM(respond=respond)), LINKED, chunks,
                                   config=ClearConfig(level_a=False, level_b=False),
                                   settings=ExtractionSettings(confidence="none")))
    assert [r for r in result.rows if r.table == "members"] == []
    assert [(e["chunk_id"], e["quote"], e["said_in"]) for e in result.report.links_ended] == [
        ("d1#0", said, "d1#0"), ("d2#0", said, "d1#0"), ("d3#0", said, "d1#0")]


# -- clauses() against the plain regex version it replaced (quadratic on a run of initials) --
# the patterns as they were, pinned: a change to the module's is a change the test must see
_SPACES = re.compile(r"[ \t\u00a0]+")
_CLAUSE = re.compile(r"(?<=[.!?])(?-i:(?<!\b(?:Dr|Mr|Ms)\.)(?<!\bMrs\.)) "
                     r"|\n+|; ?| but |,? (?:while|whereas) ", re.I)
_INITIAL_END = re.compile(r"(?<![\w.])([^\W\d_])\.$")
_INITIALS_END = re.compile(r"(?:^|\(|, )(?:[^\W\d_]\. )+[^\W\d_]\.$")
_LONE_INITIAL = re.compile(r"[^\W\d_]\.$")
_NEXT_WORD = re.compile(r"[^\W\d_][\w'-]*")


def _regex_clauses(text: str) -> list[str]:
    """clauses() as written before 2026-11-28: every mend searched the whole clause so far
    and the whole text (30 s on 4,000 initials)."""
    text = _SPACES.sub(" ", text)
    parts: list[str] = []
    for piece in _CLAUSE.split(text):
        piece = piece.strip() if piece else ""
        if not piece:
            continue
        initial = _INITIAL_END.search(parts[-1]) if parts else None
        if initial and not initial[1].isupper():
            initial = None
        word = _NEXT_WORD.match(piece) if initial else None
        if word and not word[0][:1].isupper():
            word = None
        run = _INITIALS_END.search(parts[-1]) if word else None
        if word and (re.search(rf"\b{initial[1]}\w+ {re.escape(word[0])}\b", text)
                     or _LONE_INITIAL.fullmatch(piece)
                     or (run is not None and all(c.isupper() for c in run[0] if c.isalpha()))):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    return parts


_TOKENS = ["J.", "R.", "É.", "é.", "S.", "(S.", "(J.", ", R.", ",", "U.S.", "U.", "K.", "Dr.",
           "Mrs.", "dr.", "Plan", "Ö.", "AB.", "4.", "x.", "Kelskyrn", "Skoustil", "Tolkien",
           "Émile", "Zola", "Zola.", "left", "the", "DMC", "in", "2005.", "but", "while", ";",
           "\n", "(", ")", "Ulm", "Bank", "joined", "it.", "O'Neil", "O'", "Kelskyrn-Ba",
           "Kelskyrn's", "S4", "Sk", "Ök", "Öl", "Dr. J.", "ǅ.", "Ⅷ.", "Σ.", "Sigma"]


def test_clauses_split_as_the_regex_version_did() -> None:
    import random
    rng = random.Random(11)
    texts = [" ".join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 40)))
             for _ in range(4000)]
    texts += [d.text for family in FAMILIES for d in make_collection(family, "set1", 0,
                                                                     per_type=1).documents]
    for text in texts:
        assert clauses(text) == _regex_clauses(text), text


_LONG = "Kelskyrn" * 9                      # a word longer than the index keeps (72)


def test_clauses_split_as_the_regex_version_did_with_words_longer_than_the_index() -> None:
    """Words of more than 64 characters are not indexed (their prefixes cost the word's
    length squared) but searched for: the split is still the regex version's."""
    import random
    rng = random.Random(12)
    tokens = [*_TOKENS, _LONG, f"{_LONG}.", f"{_LONG}-a", _LONG[:-1], f"S{_LONG.lower()}",
              "Sx", "K.", "a-" * 40 + "a"]
    texts = [" ".join(rng.choice(tokens) for _ in range(rng.randint(1, 30)))
             for _ in range(3000)]
    texts += [f"Skoustil {_LONG} left. S. {_LONG} joined.",      # written out: mended
              f"Skoustil {_LONG}x left. S. {_LONG} joined.",     # a longer word: not
              f"Sk {_LONG[:64]} left. S. {_LONG} joined."]       # its 64 first only: not
    for text in texts:
        assert clauses(text) == _regex_clauses(text), text
    assert [len(clauses(t)) for t in texts[-3:]] == [2, 3, 3]


def test_the_written_out_index_keeps_no_word_longer_than_64_characters() -> None:
    """The review of 6946658: a word with a word's end at every character ("a-a-a-...")
    put each of its prefixes in the index whole (0.5 GB at 32,000 characters). A longer
    prefix is kept by its length and hash, and where it starts."""
    from quaderno.methods.docsage.clauses import _written_out, _writes_out
    text = "Zz " + "a-" * 5000 + "a"
    index = _written_out(text)
    assert max(len(w) for _, w in index.short) == 64 and len(index.short) == 64
    assert ("Z", "a-a") in index.short
    assert len(index.long) == 10001 - 64 and set(index.long.values()) == {3}
    assert _writes_out(index, text, "Z", "a-" * 100 + "a")
    assert not _writes_out(index, text, "Z", "a-" * 100 + "b")
    assert not _writes_out(index, text, "Y", "a-" * 100 + "a")


def test_a_long_word_whose_hash_is_anothers_is_searched_for(monkeypatch) -> None:
    """Two long words with one hash keep the first's place; the second is still found."""
    from quaderno.methods.docsage import clauses as module
    monkeypatch.setattr(module, "_HASH_MOD", 1)          # every hash 0: all collide
    first, second = "Kelskyrn" * 9, "Vhithfun" * 9
    text = f"Skoustil {first} left. Svan {second} joined."
    index = module._written_out(text)
    assert index.long == {("S", 72, 0): text.index(first)}
    assert module._writes_out(index, text, "S", first)
    assert module._writes_out(index, text, "S", second)
    assert not module._writes_out(index, text, "S", "Tallinni" * 9)
    assert [len(module.clauses(f"{text} S. {w} came.")) for w in (second, "Tallinni" * 9)] \
        == [3, 4]


def test_a_text_of_long_words_after_initials_splits_in_linear_time() -> None:
    """The review of e67b013: each long word was searched for in the whole text (21 s at
    276,000 characters). Counted, not timed: the searches the fallback makes."""
    from unittest import mock

    from quaderno.methods.docsage import clauses as module
    text = " ".join(f"J. W{i:05d}" + "x" * 60 for i in range(2000))
    with mock.patch.object(module.re, "search", wraps=module.re.search) as searched:
        module.clauses(text)
    assert searched.call_count == 0
