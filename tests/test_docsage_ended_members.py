"""A table named after a body holds its members: a former member the text says has left is
no row of it. grid-docsage-set2 drafted one keyless table ``drournliamarketscommission``
(name, employees, chief executive); the roster's "Former members: Vykaexfun Holdings (left
1992)" and the former member's own document gave it a row, and its 160 employees were the
fewest, so "the chief executive of the company with the fewest employees" had none."""

from __future__ import annotations

import asyncio
import json

import pytest
from docsage_fakes import row, schema_of
from quaderno.corpus.chunk import Chunk
from quaderno.eval.synth.collection import make_collection
from quaderno.eval.synth.families import FAMILIES
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.ended import ended_members
from quaderno.methods.docsage.group_names import _names_in, group_named

DMC = "Drournlia Markets Commission"
ROSTER = (f"Members of the {DMC} (DMC) include Rastou Bank, Ulm Savings. "
          "Former members: Vykaexfun Holdings (left 1992), Brin Holdings (left 2010).")


def _group_table(name: str, *extra: dict):
    (table,) = schema_of({"tables": [{"name": name, "columns": [
        {"name": "name"}, {"name": "employees", "type": "INT"}, *extra]}]}).tables
    return table


@pytest.mark.parametrize("table,text,group", [
    ("drournliamarketscommission", ROSTER, DMC),
    ("drournlia_markets_commission", ROSTER, DMC),
    ("Drournlia_Markets_Commission", f"The {DMC} regulates banks.", DMC),
    ("drournlia_markets_commission_members", f"The {DMC} regulates banks.", DMC),
    ("league_of_merounddian_cities", "Oslo joined the League of Merounddian Cities.",
     "League of Merounddian Cities"),
    ("stedrurial_medal", "Members of the Stedrurial Medal (SM) include D. Fourzixze.",
     "Stedrurial Medal"),
    ("dmc", ROSTER, None),                              # an acronym is no written name
    ("companies", ROSTER, None),                        # no group's name
    ("commission", ROSTER, None),                       # one word names no group
    ("drournlia_markets_commission", "Rastou Bank reported 5,000 employees.", None),
    ("drournlia_markets", ROSTER, None),                # a name's part is not the name
    ("drournlia_markets_commission_companies", ROSTER, None),
    # a name among others in one run of capitals
    ("drournlia_markets_commission", f"Rastou Bank and the {DMC} signed.", DMC),
    ("rastou_bank", f"Rastou Bank and the {DMC} signed.", "Rastou Bank"),
    ("rastou", f"Rastou Bank and the {DMC} signed.", None),
    # a possessive, and a name alone on its line (a title): a run of capitals ends there
    ("drournlia_markets_commission", f"The {DMC}'s members include Ulm Savings.", DMC),
    ("drournlia_markets_commission", f"{DMC}\nFormer members: Kelvo Trust.", DMC),
])
def test_the_body_a_table_is_named_after(table, text, group) -> None:
    assert group_named(_group_table(table), text) == group


def test_a_former_member_is_set_apart_with_the_clause_quoted() -> None:
    table = _group_table("drournliamarketscommission")
    rows = [row(table.name, "c", name=n, employees=e) for n, e in [
        ("Rastou Bank", 5000), ("Vykaexfun Holdings", 160), ("Ulm Savings", None),
        ("Brin Holdings", 90), (DMC, None)]]
    kept, ended = ended_members(table, rows, ROSTER)
    # the body's own row is no member that left; the current members stay, in order
    assert [r.values["name"] for r in kept] == ["Rastou Bank", "Ulm Savings", DMC]
    assert [r.values for r in ended] == [{"name": "Vykaexfun Holdings", "employees": 160},
                                         {"name": "Brin Holdings", "employees": 90}]
    (c,) = ended[0].provenance.corrections
    assert (c.column, c.old, c.new, c.reason, c.by) == ("name", "Vykaexfun Holdings", None,
                                                        "ended", "as-stated")
    assert c.evidence_quote.startswith("Former members: Vykaexfun Holdings (left 1992)")


@pytest.mark.parametrize("text,ended", [
    (f"Vykaexfun Holdings was a company of the {DMC} from 1980 until it left in 1992.",
     ["Vykaexfun Holdings"]),
    (f"Vykaexfun Holdings is no longer a member of the {DMC}.", ["Vykaexfun Holdings"]),
    (f"Vykaexfun Holdings is a company of the {DMC}.", []),
    (f"Vykaexfun Holdings left the Kessel Board in 1990; it joined the {DMC} in 1992.", []),
    # a list of former members in a text that never names the body ends nothing
    ("Former members: Vykaexfun Holdings (left 1992).", []),
])
def test_which_clauses_end_a_membership(text, ended) -> None:
    table = _group_table("drournlia_markets_commission")
    kept, gone = ended_members(table, [row(table.name, "c", name="Vykaexfun Holdings")], text)
    assert [r.values["name"] for r in gone] == ended
    assert len(kept) + len(gone) == 1


def test_a_table_that_can_hold_the_end_or_names_no_body_keeps_its_rows() -> None:
    vyk = "Vykaexfun Holdings"
    with_end = _group_table("drournlia_markets_commission", {"name": "left_year",
                                                             "type": "INT"})
    kept, ended = ended_members(with_end, [row(with_end.name, "c", name=vyk)], ROSTER)
    assert (len(kept), ended) == (1, [])
    companies = _group_table("companies")
    kept, ended = ended_members(companies, [row("companies", "c", name=vyk)], ROSTER)
    assert (len(kept), ended) == (1, [])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_on_generated_collections_only_former_members_leave_the_body(family) -> None:
    """Differential check on the benchmark's own documents (2 seeds per family): a row of a
    table named after the topic, read from any document naming a member or a former
    member, is set apart exactly for former members."""
    counts = {"member": [0, 0], "former": [0, 0]}
    for seed in (0, 1):
        c = make_collection(family, "set1", seed, per_type=1)
        table = _group_table(slug(c.world.topic))
        roles = {e.name: e.role for e in [*c.world.members, *c.world.distractors]
                 if e.role in ("member", "former")}
        for doc in c.documents:
            for name, role in roles.items():
                if name.lower() in doc.text.lower():
                    _, ended = ended_members(table, [row(table.name, doc.id, name=name)],
                                             doc.text)
                    counts[role][0] += 1
                    counts[role][1] += len(ended)
    assert counts["member"][0] > 10 and counts["former"][0] > 0
    assert counts["member"][1] == 0
    assert counts["former"][1] == counts["former"][0]


def test_clear_leaves_out_a_former_members_rows_from_every_chunk() -> None:
    """The roster says Vykaexfun Holdings left; its own profile gives its employees and no
    end: CLEAR leaves both rows out, and the report names each with the roster's clause."""
    from quaderno.methods.docsage.clear import ClearConfig, run_clear
    from quaderno.methods.docsage.extract import ExtractionSettings
    schema = schema_of({"tables": [{"name": "drournliamarketscommission", "columns": [
        {"name": "name"}, {"name": "employees", "type": "INT"}]}]})
    roster = Chunk(id="d1#0", text=ROSTER)
    profile = Chunk(id="d2#0", text="Vykaexfun Holdings employs 160 people.")
    read = {"d1#0": [{"name": "Rastou Bank"}, {"name": "Vykaexfun Holdings"}],
            "d2#0": [{"name": "Vykaexfun Holdings", "employees": 160}]}

    def respond(request):
        chunk = "d1#0" if "Former members" in request.messages[-1].content else "d2#0"
        return json.dumps({"drournliamarketscommission": read[chunk]})
    result = asyncio.run(run_clear(LM(FakeLLM(respond=respond)), schema, [roster, profile],
                                   config=ClearConfig(level_a=False, level_b=False),
                                   settings=ExtractionSettings(confidence="none")))
    assert [r.values["name"] for r in result.rows] == ["Rastou Bank"]
    said = "Former members: Vykaexfun Holdings (left 1992), Brin Holdings (left 2010)."
    assert [(e["chunk_id"], e["quote"], e["said_in"]) for e in result.report.links_ended] == [
        ("d1#0", said, "d1#0"), ("d2#0", said, "d1#0")]


@pytest.mark.parametrize("text,ended", [
    # a name around the group's is no mention of it
    (f"The {DMC} regulates banks. Vykaexfun Holdings left the {DMC} Tower in 2005.", []),
    # a list of former members in a text that lists the group among others' members
    ("Members of the Kessel Board include Drournlia Markets Commission, Ulm Savings. "
     "Former members: Vykaexfun Holdings (left 1992).", []),
    # ... or that never calls a list the group's members
    (f"{DMC}\nFormer members: Vykaexfun Holdings (left 1992).", []),
    (f"{DMC} \u2014 members, part 2\nFormer members: Vykaexfun Holdings (left 1992).",
     ["Vykaexfun Holdings"]),
])
def test_a_list_of_former_members_ends_only_the_groups_own(text, ended) -> None:
    """The review of dab297e: a former-members list ended a member of a table named after
    a company the roster lists, and a building named after the group ended membership."""
    table = _group_table("drournlia_markets_commission")
    _, gone = ended_members(table, [row(table.name, "c", name="Vykaexfun Holdings")], text)
    assert [r.values["name"] for r in gone] == ended


def test_a_member_listed_in_a_table_named_after_another_member_stays() -> None:
    table = _group_table("rastou_bank")
    kept, ended = ended_members(table, [row(table.name, "c", name="Vykaexfun Holdings")], ROSTER)
    assert (len(kept), ended) == (1, [])


def test_names_are_whole_segments_no_longer_than_asked() -> None:
    """The review of dab297e: every span of a long run of capitals was tried (cubic in its
    length). Names are now cut at the longest name wanted, and a run ends at its line."""
    text = "\n".join(f"Bank of Town{i}" for i in range(2000)) + "\n" + "A of " * 2000
    names = list(_names_in(text, 20))
    assert names and all(len(n.replace(" ", "")) <= 20 for n in names)
    assert "Bank of Town7" in names and not any("\n" in n for n in names)
    assert group_named(_group_table("bank_of_town1999"), text) == "Bank of Town1999"
