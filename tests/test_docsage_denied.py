"""A page saying its subject is not the question's group's is another entity's page.

abstain-docsage-set1: "Systhou Vhyrnbraex is a laureate of the Viandbround Medal. It is not the
laureate of the same name in the Stedrurial Medal. Records give 1939 for the birth of Systhou
Vhyrnbraex." and the Stedrurial laureate's page (born 1970) keyed one row of
``laureates(name, nationality, birth_year)``; the FD conflict emptied 1970, and the average
the question asked for lost one of its three values."""

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
from quaderno.methods.docsage.clear import ClearConfig, run_clear
from quaderno.methods.docsage.denied import denied_entity, set_apart_denied
from quaderno.methods.docsage.extract import ChunkResult
from quaderno.methods.docsage.schema import Schema

SM, VM = "Stedrurial Medal", "Viandbround Medal"
QUESTION = ("What is the average birth year of the laureates in the Stedrurial Medal whose "
            "nationality is Kraxryndia?")
# award-set1-s0 d00001 and d00007
NAMESAKE = (f"Systhou Vhyrnbraex is a laureate of the {VM}. It is not the laureate of the same "
            f"name in the {SM}. Records give 1939 for the birth of Systhou Vhyrnbraex.")
MEMBER = (f"Born in 1970, Systhou Vhyrnbraex (S. Vhyrnbraex) is a laureate of the {SM}. As "
          "for nationality, S. Vhyrnbraex is recorded under Kraxryndia.")
SCHEMA = schema_of({"tables": [{"name": "laureates", "primary_key": ["name"], "columns": [
    {"name": "name"}, {"name": "nationality"}, {"name": "birth_year", "type": "INT"}]}]})


def _denied(text: str, question: str = QUESTION, title: str = "",
            keys=("Systhou Vhyrnbraex", "Gryrnstu Pougryrn", VM)) -> str | None:
    found = denied_entity(title, text, list(keys), question)
    return found[0] if found else None


SV, GP = "Systhou Vhyrnbraex", "Gryrnstu Pougryrn"


@pytest.mark.parametrize("text,entity", [
    # the benchmark's namesake ("It": the title's entity) and outsider pages
    (NAMESAKE, SV),
    (f"{SV} is a laureate of the {VM}, not of the {SM}.", SV),
    (f"{SV} is a laureate of the {VM} and not of the {SM}.", SV),
    (f"It is a laureate of the {VM}, not of the {SM}.", SV),
    (f"{SV} (S. Vhyrnbraex) is not the namesake in the {SM}.", SV),
    (f"{SV} is not to be confused with the laureate of the same name in the {SM}.", SV),
    (f"{SV}, not to be confused with the laureate of the same name in the {SM}, was born "
     "in 1939.", SV),
    (f"He is not the homonym in the {SM}.", SV),
    # said of another entity of the page, directly before its verb
    (f"{GP} said that {SV} is not the laureate of the same name in the {SM}.", SV),
    (f"It is said that {GP} is not the laureate of the same name in the {SM}.", GP),
    # no entity of the page is the denial's subject (review of dd873d0)
    (f"{SV}'s brother is not the laureate of the same name in the {SM}.", None),
    (f"He said his rival was not the laureate of the same name in the {SM}.", None),
    (f"The prize {SV} won is not the namesake in the {SM}.", None),
    # plain denials: a member may be "not a juror of" or "not a laureate ... until 1995"
    (f"{SV} is not a member of the {SM}.", None),
    (f"{SV} has never been a critic of the {SM}.", None),
    (f"{SV} was never part of the {SM}.", None),
    (f"{SV} is not the only laureate of the {SM} from Kraxryndia.", None),
    (f"It is not to be confused with the ceremony of the {SM} in 1990.", None),
    # the group followed by a time or a noun: no namesake of the group
    (f"It is not the laureate of the same name in the {SM} until 1995.", None),
    (f"It is not the laureate of the same name in the {SM} committee.", None),
    (MEMBER, None),
    # the member's own page denying the other medal, which the question does not name
    (f"{SV} is a laureate of the {SM}. It is not the laureate of the same name in the {VM}.",
     None),
    # a page that says the entity is the group's too
    (f"{SV} is a laureate of the {SM}. It is not the laureate of the same name in the {SM}.",
     None),
])
def test_which_clauses_deny_the_questions_group(text, entity) -> None:
    assert _denied(text, title="Systhou Vhyrnbraex") == entity


def test_the_group_must_be_the_questions_and_the_only_one_it_names() -> None:
    # a question about another group: the page's denial says nothing of its entity
    assert _denied(NAMESAKE, "Who was born first among the laureates of the Viandbround "
                             "Medal?", "Systhou Vhyrnbraex") is None
    # a question about both medals may ask for the namesake's own rows
    assert _denied(NAMESAKE, f"{QUESTION[:-1]} or the {VM}?", "Systhou Vhyrnbraex") is None
    assert _denied(f"Systhou Vhyrnbraex is a laureate of the {VM}, not of the {SM}.",
                   f"How many laureates do the {SM} and the {VM} have?") is None
    # "It" with no title names nobody
    assert _denied(NAMESAKE) is None
    # a question with a negation may count those who are not of a group (review of dd873d0)
    assert _denied(NAMESAKE, f"How many laureates of the {SM} are not laureates of the "
                             f"{VM}?", "Systhou Vhyrnbraex") is None
    # a group of another kind the question names too is no rival: the namesake is still
    # not the medal's laureate
    kral = f"{NAMESAKE} Systhou Vhyrnbraex is a member of the Kral Society."
    assert _denied(kral, f"{QUESTION[:-1]} and members of the Kral Society?",
                   "Systhou Vhyrnbraex") == "Systhou Vhyrnbraex"
    assert _denied(f"{NAMESAKE} Systhou Vhyrnbraex is a laureate of the Kral Society.",
                   f"{QUESTION[:-1]} or the Kral Society?", "Systhou Vhyrnbraex") is None
    # the page's own group said with a pronoun or "won", the question naming both (review
    # of df946d0): the Stedrurial laureate's page is no namesake's
    both = f"{QUESTION[:-1]} or the {VM}?"
    for own in (f"It is a laureate of the {SM}.", f"He is a laureate of the {SM}.",
                f"Systhou Vhyrnbraex won the {SM} in 2015."):
        page = f"{own} It is not the laureate of the same name in the {VM}."
        assert _denied(page, both, "Systhou Vhyrnbraex") is None, own
        assert _denied(page, f"Who of the laureates of the {VM} was born first?",
                       "Systhou Vhyrnbraex") == "Systhou Vhyrnbraex", own


def _respond(request) -> str:
    user = request.messages[-1].content
    if "1939" in user:
        read = {"name": "Systhou Vhyrnbraex", "nationality": None, "birth_year": 1939}
    else:
        read = {"name": "Systhou Vhyrnbraex", "nationality": "Kraxryndia", "birth_year": 1970}
    return json.dumps({"laureates": [read]})


def _clear(question: str):
    chunks = [Chunk(id="d7#0", title="Systhou Vhyrnbraex", text=MEMBER),
              Chunk(id="d1#0", title="Systhou Vhyrnbraex", text=NAMESAKE)]
    return asyncio.run(run_clear(LM(FakeLLM(respond=_respond)), SCHEMA, chunks,
                                 config=ClearConfig(level_a=False, correction=False),
                                 question=question))


def test_clear_sets_the_namesakes_rows_apart_before_any_conflict() -> None:
    result = _clear(QUESTION)
    assert [r.values for r in result.rows] == [
        {"name": "Systhou Vhyrnbraex", "nationality": "Kraxryndia", "birth_year": 1970}]
    assert result.report.violations_initial.get("fd", 0) == 0
    (apart,) = result.report.namesakes
    assert apart["chunk_id"] == "d1#0" and apart["values"]["birth_year"] == 1939
    assert apart["quote"] == f"It is not the laureate of the same name in the {SM}."
    assert result.report.tuples_extracted == 2 and result.report.tuples_removed == 1
    # without the question, the two pages are one key's conflicting rows, as before
    blind = _clear("")
    assert blind.report.namesakes == [] and blind.report.violations_initial["fd"] == 1


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_on_generated_collections_only_a_distractors_page_is_denied(family) -> None:
    """Differential check on the benchmark's documents (2 seeds per family), the question
    naming the topic: an entity is found only on a namesake's or an outsider's page, and it
    is that page's subject; every member's, former member's, roster and link page is left
    as read, whatever rows it keys."""
    found = 0
    for seed in (0, 1):
        c = make_collection(family, "set1", seed, per_type=1)
        question = f"How many members does the {c.world.topic} have?"
        names = [n for e in [*c.world.members, *c.world.distractors]
                 for n in (e.name, *e.aliases)]
        for doc in c.documents:
            denied = denied_entity(doc.title, doc.text, names, question)
            if denied is None:
                continue
            found += 1
            assert doc.kind == "distractor" and denied[0] == doc.subject, (doc.title, denied)
            role = next(e.role for e in c.world.distractors if e.name == doc.subject)
            assert role in ("namesake", "outsider"), (doc.title, role)
    assert found >= 2


def test_the_namesakes_ended_links_are_set_apart_too() -> None:
    """Review of dd873d0: the namesake's "until he left in 2005" ended the member's own
    membership of the Kral Society (every row of an ended link is left out, ended.py)."""
    memberships = schema_of({"tables": [{"name": "memberships",
                                         "primary_key": ["name", "society"], "columns": [
                                             {"name": "name"}, {"name": "society"}]}]})
    ended = row("memberships", "d1#0", name="Systhou Vhyrnbraex", society="Kral Society")
    other = row("memberships", "d1#0", name="Dyrte Fourzixze", society="Kral Society")
    result = ChunkResult(chunk_id="d1#0", rows={"memberships": [other]}, ended=[ended])
    chunks = {"d1#0": Chunk(id="d1#0", title="Systhou Vhyrnbraex", text=NAMESAKE)}
    (kept,), apart = set_apart_denied(memberships, [result], chunks, QUESTION)
    assert kept.ended == [] and kept.rows == {"memberships": [other]}
    assert [r.values for r in apart] == [ended.values]
    assert apart[0].provenance.corrections[-1].reason == "namesake"


def test_a_namesakes_row_referring_to_it_is_set_apart_too() -> None:
    """final-no-clear-set1: the namesake's page gave ``stedrurial_medal`` the row
    (Viandbround Medal, 1939, laureate_name Systhou Vhyrnbraex); kept, it made the
    laureate's join repeat his rows. A row referring to another laureate stays."""
    schema = Schema.model_validate({"tables": [
        {"name": "stedrurial_medal", "columns": [{"name": "award_name"},
                                                 {"name": "year", "type": "INT"},
                                                 {"name": "laureate_name"}],
         "foreign_keys": [{"cols": ["laureate_name"], "ref_table": "laureates",
                           "ref_cols": ["name"]}]},
        {"name": "laureates", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "birth_year", "type": "INT"}]}]})
    own = row("laureates", "d1#0", name="Systhou Vhyrnbraex", birth_year=1939)
    award = row("stedrurial_medal", "d1#0", award_name=VM, year=1939,
                laureate_name="Systhou Vhyrnbraex")
    other = row("stedrurial_medal", "d1#0", award_name=SM, year=2004,
                laureate_name="Zouzand Grialforn")
    result = ChunkResult(chunk_id="d1#0", rows={"laureates": [own],
                                                "stedrurial_medal": [award, other]})
    chunks = {"d1#0": Chunk(id="d1#0", title="Systhou Vhyrnbraex", text=NAMESAKE)}
    (kept,), apart = set_apart_denied(schema, [result], chunks, QUESTION)
    assert kept.rows == {"laureates": [], "stedrurial_medal": [other]}
    assert [(r.table, r.provenance.corrections[-1].column) for r in apart] == [
        ("laureates", "name"), ("stedrurial_medal", "laureate_name")]
