"""benchmarks/docsage_oracle_tables.py: DocSage's reasoning steps over a generated
collection's gold tables, scored against the gold answers."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from benchmark_scripts import load
from quaderno.eval.synth import make_collection, write_collection
from quaderno.eval.synth.collection import load_questions
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM

oracle = load("docsage_oracle_tables")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_collection(make_collection("award", "set1", 0, per_type=1),
                            tmp_path_factory.mktemp("oracle"))


def _reader(folder, sql_for):
    """A model that writes ``sql_for(question)`` and answers with result row 1's first
    value, as the synthesis prompt shows it; over the tables, 'not found'."""
    questions = load_questions(folder)

    def respond(request):
        user = request.messages[-1].content
        if user.startswith("Write one DuckDB SELECT"):
            q = next(q for q in questions if q.question in user)
            return json.dumps({"sql": sql_for(q)})
        if user.startswith("Answer the question from the query result"):
            first = re.search(r"\[1\] (\"[^\"]*\"|[^,\n]+)", user)
            return json.dumps({"answer": first[1].strip('"') if first else "not found",
                               "cited_rows": [1] if first else []})
        if user.startswith("Answer the question from these tables"):
            return json.dumps({"answer": "not found"})
        raise AssertionError(f"unexpected prompt {user[:80]!r}")
    return respond


def test_the_gold_tables_load_as_a_schema_with_every_row(folder) -> None:
    schema, rows = oracle.gold_database(folder)
    stored = {p.stem: json.loads(p.read_text()) for p in (folder / "tables").glob("*.json")}
    assert sorted(t.name for t in schema.tables) == sorted(stored)
    for t in schema.tables:
        # a keyword takes DocSage's trailing underscore (award's "grant"), as a draft's does
        assert t.column_names == [f"{c}_" if c == "grant" else c
                                  for c, _ in stored[t.name]["columns"]]
        assert [list(r.values.values()) for r in rows if r.table == t.name] == \
            stored[t.name]["rows"]
    laureates = schema.table("laureates")
    assert {c.name: c.type for c in laureates.columns}["birth_year"] == "INT"
    assert rows[0].provenance.chunk_id.startswith("gold:")
    assert "grant_" in laureates.column_names and all(
        "grant" not in r.values for r in rows if r.table == "laureates")


def test_the_gold_query_scores_one_and_a_wrong_one_does_not(folder) -> None:
    right = asyncio.run(oracle.run(LM(FakeLLM(respond=_reader(folder, lambda q: q.sql))),
                                   [folder], "questions.jsonl", 3, ["sql"]))
    assert [x["score"] for x in right] == [1.0, 1.0, 1.0]
    assert all(x["calls"] == 2 and x["reasoning"] == "sql" for x in right)
    assert [x["sql"][-1]["sql"] for x in right] == [q.sql for q in load_questions(folder)[:3]]
    assert all(x["sql"][-1]["stage"] == "ok" for x in right)

    def wrong(q):        # the right table, the first name in it
        return "SELECT name FROM laureates ORDER BY name LIMIT 1"
    lines = asyncio.run(oracle.run(LM(FakeLLM(respond=_reader(folder, wrong))), [folder],
                                   "questions.jsonl", 3, ["sql", "tables"]))
    assert [x["reasoning"] for x in lines] == ["sql", "tables"] * 3
    assert sum(x["score"] for x in lines) < 3 and all(
        x["score"] == 0.0 and x["sql"] == [] for x in lines if x["reasoning"] == "tables")
    report = oracle.report(right + lines)
    assert "| sql | all | 6 |" in report and "| tables | all | 3 | 0.00 |" in report


def test_a_folder_without_gold_tables_is_refused(tmp_path) -> None:
    with pytest.raises(SystemExit, match="no tables"):
        oracle.gold_database(tmp_path)


def test_every_folder_is_read_before_the_first_paid_call(folder, tmp_path) -> None:
    """A bad second folder (no tables, or no such questions file) ends the run before the
    first folder's questions are asked: nothing is bought and then thrown away."""
    calls = []

    def respond(request):
        calls.append(request)
        return json.dumps({"sql": "SELECT 1"})
    lm = LM(FakeLLM(respond=respond))
    with pytest.raises(SystemExit, match="no tables"):
        asyncio.run(oracle.run(lm, [folder, tmp_path], "questions.jsonl", 3, ["sql"]))
    other = write_collection(make_collection("award", "set1", 1, per_type=1),
                             tmp_path / "second")
    (other / "questions.jsonl").rename(other / "renamed.jsonl")
    with pytest.raises(SystemExit, match="no such questions file"):
        asyncio.run(oracle.run(lm, [folder, other], "questions.jsonl", 3, ["sql"]))
    (other / "questions.jsonl").write_text("{not json\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="not a questions file"):
        asyncio.run(oracle.run(lm, [folder, other], "questions.jsonl", 3, ["sql"]))
    assert calls == []


def test_the_gold_tables_say_what_they_hold_unless_bare(folder, tmp_path) -> None:
    """The run of ba7124a showed the gold schema bare: nothing said ``laureates`` holds only
    the medal's current members, and the model filtered ``achievement`` by the medal. The
    described tables name the topic, the members' table, the money unit and membership."""
    topic = json.loads((folder / "manifest.json").read_text())["topic"]
    schema, _ = oracle.gold_database(folder)
    laureates, membership = schema.table("laureates"), schema.table("membership")
    assert f"every current member of the {topic}" in laureates.description
    grant = next(c for c in laureates.columns if c.name == "grant_")
    assert (grant.description, grant.unit) == ("research grant", "million dollars")
    assert "NULL for a current member" in next(
        c.description for c in membership.columns if c.name == "left_year")
    assert f"TABLE laureates -- every current member of the {topic}" in schema.describe()
    bare, _ = oracle.gold_database(folder, described=False)
    assert all(t.description == "" and all(c.description == "" for c in t.columns)
               for t in bare.tables)
    # a folder without its manifest is refused described, and read bare
    copy = tmp_path / "copy"
    (copy / "tables").mkdir(parents=True)
    for p in (folder / "tables").glob("*.json"):
        (copy / "tables" / p.name).write_text(p.read_text())
    with pytest.raises(SystemExit, match="no manifest"):
        oracle.gold_database(copy)
    assert [t.name for t in oracle.gold_database(copy, described=False)[0].tables] == \
        [t.name for t in bare.tables]


def test_membership_is_told_with_the_familys_own_verb_and_a_bad_manifest_is_named(
        folder, tmp_path) -> None:
    """The review of 4adb017: every family's membership said "joined", where the award's
    questions say "received"; an unreadable manifest raised a JSON error."""
    topic = json.loads((folder / "manifest.json").read_text())["topic"]
    schema, _ = oracle.gold_database(folder)
    membership = schema.table("membership")
    assert membership.description == (f"every laureate who received the {topic}, current "
                                      "and former")
    assert {c.name: c.description for c in membership.columns}["joined"] == \
        f"the year they received the {topic}"
    copy = tmp_path / "copy"
    (copy / "tables").mkdir(parents=True)
    for p in (folder / "tables").glob("*.json"):
        (copy / "tables" / p.name).write_text(p.read_text())
    (copy / "manifest.json").write_text("{not json")
    with pytest.raises(SystemExit, match="not a manifest naming a family and a topic"):
        oracle.gold_database(copy)
