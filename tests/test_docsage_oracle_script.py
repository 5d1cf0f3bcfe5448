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
        assert t.column_names == [c for c, _ in stored[t.name]["columns"]]
        assert [list(r.values.values()) for r in rows if r.table == t.name] == \
            stored[t.name]["rows"]
    laureates = schema.table("laureates")
    assert {c.name: c.type for c in laureates.columns}["birth_year"] == "INT"
    assert rows[0].provenance.chunk_id.startswith("gold:")


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
