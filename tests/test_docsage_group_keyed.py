"""A member's row keyed by the group's own name is the row of the chunk's subject.

members-docsage-set2: the measuring model keyed five members' rows of
``drournliamarketscommission(company_name, employees, chief_executive)`` by the commission's
name (Roustoustus Systems' page among them: 51,090 employees, the fewest, chief executive
Distaend Rinbaernvaer, the gold answer). CLEAR took the five for one company and kept one
value of each column, and the answer was lost."""

from __future__ import annotations

import asyncio
import json

import pytest
from docsage_fakes import read_twice, row, schema_of
from quaderno.corpus.chunk import Chunk
from quaderno.eval.synth.collection import make_collection
from quaderno.eval.synth.families import FAMILIES
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.committee import committee_ballots, tally
from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.extract import ExtractionSettings
from quaderno.methods.docsage.group_keyed import named_for_subject
from quaderno.methods.docsage.store import TupleStore

DMC = "Drournlia Markets Commission"
# two of the documents the measuring run misread (regulator-set2-s0 d00021 and d00033), cut
ROUSTOUSTUS = (f"Roustoustus Systems (Roustoustus) is a company of the {DMC}. The company is "
               "active in the energy sector. Tallies of employees put the company at 51090. "
               f"It registered with the {DMC} in 2006. The company, whose chief executive is "
               "Distaend Rinbaernvaer, keeps a low profile.")
RASTOU = (f"Rastou has been part of the {DMC} since 2009. A total of 97,040 employees was "
          "recorded for Rastou. The company reports to Grernril Nyrkrar (chief executive).")
VYKAEXFUN = (f"Vykaexfun Holdings was a company of the {DMC} from 1964 until it left in 1992. "
             "It reports 160 employees.")
SCHEMA = schema_of({"tables": [{"name": "drournliamarketscommission", "columns": [
    {"name": "company_name"}, {"name": "employees", "type": "INT"},
    {"name": "chief_executive"}]}]})
TABLE = SCHEMA.tables[0]


def _renamed(title: str, text: str, table=TABLE, **values) -> str:
    values = {"company_name": DMC, **values}
    (out,) = named_for_subject(table, [row(table.name, "c", **values)], title, text)
    return out.values[next(iter(values))]


@pytest.mark.parametrize("title,text,name", [
    ("Roustoustus Systems", ROUSTOUSTUS, "Roustoustus Systems"),
    ("Rastou \u2014 news", RASTOU, "Rastou"),          # the title's head, before its dash
    ("Drergrex-2 trial \u2014 report", f"Drergrex-2 trial (DRERGREX-2) is a trial of the {DMC}.",
     "Drergrex-2 trial"),                               # a head with a small word in it
    ("Dr. Moskia \u2014 news", f"Dr. Moskia became a member of the {DMC} in 2001.",
     "Dr. Moskia"),                                     # a title, no sentence's end
    ("Kelskyrn", f"Skoustil Kelskyrn (S. Kelskyrn) is a company of the {DMC}.", "Kelskyrn"),
])
def test_a_members_row_keyed_by_the_group_takes_the_titles_name(title, text, name) -> None:
    assert _renamed(title, text, employees=1) == name


def test_the_renamed_cell_carries_the_clause() -> None:
    (out,) = named_for_subject(TABLE, [row(TABLE.name, "c", company_name=DMC, employees=51090,
                                           chief_executive="Distaend Rinbaernvaer")],
                               "Roustoustus Systems", ROUSTOUSTUS)
    assert out.values == {"company_name": "Roustoustus Systems", "employees": 51090,
                          "chief_executive": "Distaend Rinbaernvaer"}
    (c,) = out.provenance.corrections
    assert (c.column, c.old, c.new, c.reason, c.by) == (
        "company_name", DMC, "Roustoustus Systems", "group-name", "as-stated")
    assert c.evidence_quote == f"Roustoustus Systems (Roustoustus) is a company of the {DMC}."


@pytest.mark.parametrize("title,text", [
    # a roster: the title names the group itself
    (f"{DMC} \u2014 members, part 1", f"Members of the {DMC} (DMC) include Rastou, Ulm Bank."),
    # a denial, and a namesake's page
    ("Viathpox Systems", f"Viathpox Systems is a company of the Sopael Markets Commission, "
                         f"not of the {DMC}."),
    ("Viathpox Systems", "Viathpox Systems is a company of the Sopael Markets Commission. "
                         f"It is not the company of the same name in the {DMC}."),
    # named beside the group, as no member of it
    ("Groltor Institute", f"Groltor Institute is listed as a home institution in the records "
                          f"of the {DMC}."),
    ("Kessel Pharma", f"Kessel Pharma is a sponsor of trials in the {DMC}."),
    # the title's entity and the group in different clauses only
    ("Ulm Bank", f"Ulm Bank opened in 1901. The {DMC} is based in Ulm."),
    # two entities of the title are members: whose row it is, the chunk does not say
    ("Rastou and Ulm Bank", f"Rastou is part of the {DMC}. Ulm Bank is part of the {DMC}."),
    # no title
    ("", ROUSTOUSTUS),
    # the review of 560a45f: no membership said of the title's entity
    ("Rastou", f"Rastou entered into a supply agreement with the {DMC}."),
    ("Ulm Bank", f"Ulm Bank advises members of the {DMC}."),
    ("Qyssi Nourbrisix", f"Qyssi Nourbrisix, a member of the {DMC} board, leads Kriarngyrtia "
                         "Energy, which has 500 employees."),
])
def test_a_row_keyed_by_the_group_stays_as_read_without_one_member_to_name(title, text) -> None:
    assert _renamed(title, text) == DMC


@pytest.mark.parametrize("text,values", [
    # a table about the group: the group's own row, its values said of the group
    (f"Rastou joined the {DMC} in 2009. The {DMC}, founded in 1950, is headquartered in Ulm.",
     {"employees": 1950, "chief_executive": "Ulm"}),
    # another member's figure on the subject's page
    (f"Rastou is part of the {DMC}. Ulm Bank, also a member, reports 4,200 employees.",
     {"employees": 4200}),
])
def test_a_row_whose_values_are_said_of_another_stays_as_read(text, values) -> None:
    assert _renamed("Rastou \u2014 news", text, **values) == DMC


def test_two_rows_keyed_by_the_group_in_one_chunk_stay_as_read() -> None:
    rows = [row(TABLE.name, "c", company_name=n, employees=e)
            for n, e in ((DMC, 97040), (f"the {DMC}", 51090))]
    assert named_for_subject(TABLE, rows, "Rastou \u2014 news", RASTOU) == rows


def test_only_the_groups_own_key_in_a_table_named_after_it_is_renamed() -> None:
    # a row keyed by another name, a table named after no group, a chief executive's page
    # (the row gives the title's entity in another column), a link table of two names
    assert _renamed("Roustoustus Systems", ROUSTOUSTUS, company_name="Roustoustus") == \
        "Roustoustus"
    companies = schema_of({"tables": [{"name": "companies", "columns": [
        {"name": "company_name"}, {"name": "employees", "type": "INT"}]}]}).tables[0]
    assert _renamed("Roustoustus Systems", ROUSTOUSTUS, table=companies) == DMC
    ceo = f"Qyssi Nourbrisix, a member of the {DMC} board, leads Kriarngyrtia Energy."
    assert _renamed("Qyssi Nourbrisix", ceo, chief_executive="Qyssi Nourbrisix") == DMC
    link = schema_of({"tables": [{"name": "drournlia_markets_commission",
                                  "primary_key": ["company_name", "sector"], "columns": [
                                      {"name": "company_name"}, {"name": "sector"}]}]}).tables[0]
    assert _renamed("Roustoustus Systems", ROUSTOUSTUS, table=link, sector="energy") == DMC
    # "the Drournlia Markets Commission", written with its article, is the group too
    assert _renamed("Rastou \u2014 news", RASTOU, company_name=f"the {DMC}") == "Rastou"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_on_generated_collections_a_renamed_row_is_its_documents_subject(family) -> None:
    """Differential check on the benchmark's documents (2 seeds per family): a row keyed by
    the topic, read from any document, is renamed only to the entity the document is about
    (its name or an alias), a member or a former member, never a link's or a rival's."""
    renamed = kept = 0
    for seed in (0, 1):
        c = make_collection(family, "set1", seed, per_type=1)
        table = schema_of({"tables": [{"name": slug(c.world.topic), "columns": [
            {"name": "name"}, {"name": "employees", "type": "INT"}]}]}).tables[0]
        named = {n: e for e in c.world.members for n in (e.name, *e.aliases)}
        named.update({n: e for e in c.world.distractors if e.role == "former"
                      for n in (e.name, *e.aliases)})
        for doc in c.documents:
            (out,) = named_for_subject(table, [row(table.name, doc.id, name=c.world.topic)],
                                       doc.title, doc.text)
            name = out.values["name"]
            if name == c.world.topic:
                kept += 1
                continue
            renamed += 1
            assert name in named and named[name].name == doc.subject, (doc.title, name)
    assert renamed >= 20 and kept >= 20


def test_extraction_renames_a_member_and_then_sets_a_former_member_apart(tmp_path) -> None:
    """On every read, stored or not: Roustoustus Systems' row is its own; Vykaexfun
    Holdings' is renamed, then set apart as a member that left."""
    def respond(request):
        user = request.messages[-1].content
        employees = 51090 if "Roustoustus" in user else 160
        return json.dumps({TABLE.name: [{"company_name": DMC, "employees": employees}]})
    no_longer = f"Vykaexfun Holdings is no longer a member of the {DMC}. It has 160 employees."
    for title, text, name, kept in [("Roustoustus Systems", ROUSTOUSTUS, "Roustoustus Systems",
                                     1), ("Vykaexfun Holdings", VYKAEXFUN, None, 0),
                                    ("Vykaexfun Holdings", no_longer, None, 0)]:
        store = TupleStore(tmp_path / f"{title.split()[0]}{len(text)}")
        first, again = read_twice(FakeLLM(respond=respond), Chunk(id="d#0", title=title,
                                                                  text=text), SCHEMA, store)
        assert len(first) == len(again) == kept
        if kept:
            assert first[0].values["company_name"] == again[0].values["company_name"] == name


def test_committee_ballots_are_renamed_as_the_read_they_vote_on() -> None:
    chunk = Chunk(id="d21#0", title="Roustoustus Systems", text=ROUSTOUSTUS)
    fake = FakeLLM(respond=lambda r: json.dumps({TABLE.name: [
        {"company_name": DMC, "employees": 51090,
         "chief_executive": "Distaend Rinbaernvaer"}]}))
    ballots, _ = asyncio.run(committee_ballots(LM(fake), chunk, TABLE,
                                               ExtractionSettings(confidence="none"), n=3))
    assert [b[0]["company_name"] for b in ballots] == ["Roustoustus Systems"] * 3
    (target,) = named_for_subject(TABLE, [row(TABLE.name, chunk.id, company_name=DMC,
                                              employees=51090)], chunk.title, chunk.text)
    votes = tally(ballots, TABLE, target.values, ["employees"])
    assert (votes["employees"].value, votes["employees"].majority) == (51090, True)


def test_clear_keeps_two_members_keyed_by_the_group_apart() -> None:
    """Before: both rows had the commission's key, CLEAR merged them into one."""
    from quaderno.methods.docsage.clear import ClearConfig, run_clear
    chunks = [Chunk(id="d21#0", title="Roustoustus Systems", text=ROUSTOUSTUS),
              Chunk(id="d33#0", title="Rastou \u2014 news", text=RASTOU)]

    def respond(request):
        user = request.messages[-1].content
        read = (51090, "Distaend Rinbaernvaer") if "Roustoustus" in user else (
            97040, "Grernril Nyrkrar")
        return json.dumps({TABLE.name: [{"company_name": DMC, "employees": read[0],
                                         "chief_executive": read[1]}]})
    result = asyncio.run(run_clear(LM(FakeLLM(respond=respond)), SCHEMA, chunks,
                                   config=ClearConfig(level_a=False, level_b=False),
                                   settings=ExtractionSettings(confidence="none")))
    assert sorted((r.values["company_name"], r.values["employees"], r.values["chief_executive"])
                  for r in result.rows) == [
        ("Rastou", 97040, "Grernril Nyrkrar"),
        ("Roustoustus Systems", 51090, "Distaend Rinbaernvaer")]
