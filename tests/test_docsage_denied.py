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
from docsage_fakes import schema_of
from quaderno.corpus.chunk import Chunk
from quaderno.eval.synth.collection import make_collection
from quaderno.eval.synth.families import FAMILIES
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.clear import ClearConfig, run_clear
from quaderno.methods.docsage.denied import denied_entity

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


@pytest.mark.parametrize("text,entity", [
    # the benchmark's namesake ("It": the title's entity) and outsider pages
    (NAMESAKE, "Systhou Vhyrnbraex"),
    (f"Systhou Vhyrnbraex is a laureate of the {VM}, not of the {SM}.", "Systhou Vhyrnbraex"),
    (f"Systhou Vhyrnbraex is a laureate of the {VM} and not of the {SM}.",
     "Systhou Vhyrnbraex"),
    (f"Systhou Vhyrnbraex is not a member of the {SM}.", "Systhou Vhyrnbraex"),
    (f"Systhou Vhyrnbraex has never been a laureate of the {SM} since 1990.",
     "Systhou Vhyrnbraex"),
    (f"Systhou Vhyrnbraex was never part of the {SM}.", "Systhou Vhyrnbraex"),
    (f"Systhou Vhyrnbraex, not to be confused with the laureate of the {SM}, was born in 1939.",
     "Systhou Vhyrnbraex"),
    (f"He is not the namesake in the {SM}.", "Systhou Vhyrnbraex"),
    # the subject nearest the denial, not a name before it
    (f"Gryrnstu Pougryrn, a laureate of the {SM}, hired Systhou Vhyrnbraex, who is not a "
     f"member of the {SM}.", "Systhou Vhyrnbraex"),
    (f"Gryrnstu Pougryrn said Systhou Vhyrnbraex is not a member of the {SM}.",
     "Systhou Vhyrnbraex"),
    # no denial of membership
    (f"Systhou Vhyrnbraex is not the only laureate of the {SM} from Kraxryndia.", None),
    (f"Systhou Vhyrnbraex is not a founding member of the {SM}.", None),
    (f"Systhou Vhyrnbraex is not a member of the {SM} committee.", None),
    (MEMBER, None),
    # the member's own page denying the other medal, which the question does not name
    (f"Systhou Vhyrnbraex is a laureate of the {SM}. It is not the laureate of the same name "
     f"in the {VM}.", None),
    # a denial with no name that keys a row
    (f"The ceremony's host is not a member of the {SM}.", None),
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
