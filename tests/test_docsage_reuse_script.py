"""benchmarks/docsage_reuse.py: the second of two questions over the same entities, answered
by the whole method through one tuple store, reads no chunk the first one read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from benchmark_scripts import load
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer
from quaderno.methods.registry import make_method
from test_docsage_method import SCHEMA, Model, Retriever

QUESTIONS = [{"id": "q1", "question": "Which member institution is the oldest?",
              "category": "Comparison", "gold": {"answer": "Varnholt University"}},
             {"id": "q2", "question": "What is the mean staff of the member institutions?",
              "category": "Statistics", "gold": {"answer": "1363.3"}}]


def answerer(model: Model, options: dict):
    async def answer(question: str, trace: Trace, store: Path) -> Answer:
        method = make_method("docsage", LM(FakeLLM(respond=model)), Retriever(),
                             {**options, "store_dir": str(store)})
        return await method.answer(question, trace=trace)
    return answer


def test_the_second_question_reads_nothing_the_first_one_read(tmp_path):
    script = load("docsage_reuse")
    model = Model()
    rows = asyncio.run(script.measure(answerer(model, {"confidence": "none"}), QUESTIONS,
                                      tmp_path / "store"))
    first, second = rows
    # the first question reads each of the four chunks once (ASK's trial stores what the
    # final extraction re-uses); every extraction prompt the model saw was one of them
    assert first["reading_calls"] == 4 == model.extractions()
    assert first["store_hits"] > 0       # CLEAR re-used the trial's reads
    assert second["reading_calls"] == 0 and second["store_hits"] >= 4
    assert second["offered"] == ["institution(name TEXT, founded INT, staff INT)"]
    assert first["tables"] == second["tables"] == ["institution"]
    assert first["answer"] == "Varnholt University"
    assert script.ratio_line(rows).startswith("second/first reading calls: 0/4 = 0.00 (within")
    table = script.table_lines(rows)
    assert len(table) == 4 and "| q2 | 1363.3 |" in table[3]


class CopiesTheOffer(Model):
    """Drafts an offered table as the offer shows it, names and types without the column
    descriptions and units, as the measuring model did (2026-11-29: 12 reading calls)."""

    def __call__(self, request):
        user = request.messages[-1].content
        if user.startswith("Design the smallest") and "- institution(" in user:
            self.copied = getattr(self, "copied", 0) + 1
            return json.dumps({**SCHEMA, "tables": [{
                "name": "institution", "primary_key": ["name"],
                "columns": [{"name": "name"}, {"name": "founded", "type": "INT"},
                            {"name": "staff", "type": "INT"}]}]})
        return super().__call__(request)


def test_a_draft_that_copies_the_offer_without_its_wording_still_reads_nothing(tmp_path):
    model = CopiesTheOffer()
    rows = asyncio.run(load("docsage_reuse").measure(
        answerer(model, {"confidence": "none"}), QUESTIONS, tmp_path / "store"))
    first, second = rows
    assert model.copied == 1      # the second question's draft copied the offer
    assert first["reading_calls"] == 4 and second["reading_calls"] == 0
    assert second["store_hits"] >= 4


def test_without_offer_known_a_renamed_draft_would_read_again_and_the_ratio_says_so():
    rows = [{"reading_calls": 10}, {"reading_calls": 4}]
    assert load("docsage_reuse").ratio_line(rows) == \
        "second/first reading calls: 4/10 = 0.40 (above the 0.30 target)"
    assert "no ratio" in load("docsage_reuse").ratio_line([{"reading_calls": 0}] * 2)


def test_committee_and_backtracking_re_reads_are_not_reading_calls():
    trace = Trace()
    with trace.span("docsage.clear"):
        with trace.span("docsage.extract") as read:
            read.outputs = {"calls": 3, "store_hits": 2}
        with trace.span("docsage.clear.committee"):
            with trace.span("docsage.extract") as vote:
                vote.outputs = {"calls": 5, "store_hits": 0}
        with trace.span("docsage.clear.backtrack"):
            with trace.span("docsage.other"):
                with trace.span("docsage.extract") as deep:
                    deep.outputs = {"calls": 7, "store_hits": 1}
    assert load("docsage_reuse").reading(trace) == {"reading_calls": 3, "store_hits": 2}


def test_questions_are_picked_by_category_or_by_id_and_a_wrong_id_is_named():
    script = load("docsage_reuse")
    qs = [{"id": "a", "category": "Statistics"}, {"id": "b", "category": "Comparison"},
          {"id": "c", "category": "Relationship"}]
    assert [q["id"] for q in script.pick(qs, None, None)] == ["b", "a"]
    assert [q["id"] for q in script.pick(qs, "c", "a")] == ["c", "a"]
    with pytest.raises(SystemExit, match="no question 'zz'"):
        script.pick(qs, "zz", None)


def test_the_record_names_the_code_it_ran_at():
    """Review 20: the committed record did not say which commit it measured."""
    from quaderno.eval.runner import code_version
    out = load("docsage_reuse").record({"max_chunks": 12}, [{"id": "q1"}])
    assert out == {"code_version": code_version(), "options": {"max_chunks": 12},
                   "rows": [{"id": "q1"}]}
