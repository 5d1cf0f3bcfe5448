"""Typed evaluation records: ResultRecord round trips, old committed runs, the results reader."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import shutil
import statistics
from pathlib import Path

import pytest

from quaderno.errors import InputFormatError
from quaderno.eval.datasets import Context, QARecord
from quaderno.eval.records import EvalCost, ResultRecord, read_results
from quaderno.eval.report import load_run
from quaderno.eval.runner import EvalRunner, RunConfig
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.answer import Answer
from quaderno.methods.baselines import RAG_ANSWER
from quaderno.methods.base import BaseMethod
from quaderno.methods.details import ChainDetails, NotesDetails, PagerDetails
from quaderno.methods.episode import Episode, format_docs
from quaderno.methods.page import Page, Section
from quaderno.methods.registry import METHODS
from tests.test_eval import config, oracle, records

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
# the keys every line has carried since the first runs (older tools read these)
FIRST_KEYS = {"id", "question", "answers", "prediction", "method", "metrics",
              "retrieval_rounds", "page", "llm_calls", "cached_calls", "prompt_tokens",
              "completion_tokens", "fallbacks", "latency_s"}


def page() -> Page:
    return Page(title="Corliss Archer", sections=[
        Section(title="Actress", content="Shirley Temple played her.", filled=True,
                sub_query="who played Corliss Archer", chunk_ids=["c1", "c2"]),
        Section(title="Office")])


def record(**kw) -> ResultRecord:
    base = dict(id="q1", question="q?", answers=["a"], prediction="a", method="pager",
                metrics={"em": 1.0}, llm_calls=3, prompt_tokens=10, completion_tokens=5,
                latency_s=0.5)
    return ResultRecord(**{**base, **kw})


def committed_runs() -> list[Path]:
    runs = sorted(p.parent for p in RESULTS.glob("*/*/results.jsonl"))
    assert len(runs) >= 5, f"the committed runs under {RESULTS} are missing"
    return runs


# -- the record ---------------------------------------------------------------------------
def test_a_record_with_pager_details_round_trips(tmp_path):
    original = record(details=PagerDetails(page=page()), page=page().render(),
                      eval_calls=EvalCost(llm_calls=2, prompt_tokens=4, completion_tokens=1,
                                          llm_seconds=0.1))
    line = original.model_dump_json()
    assert json.loads(line)["details"]["kind"] == "pager"
    back = ResultRecord.model_validate_json(line)
    assert back == original
    assert isinstance(back.details, PagerDetails)
    section = back.details.page.sections[0]
    assert isinstance(section, Section) and section.chunk_ids == ["c1", "c2"]
    assert section.sub_query == "who played Corliss Archer"
    assert not back.details.page.sections[1].filled
    assert back.page == page().render() and back.eval_calls.llm_calls == 2
    path = tmp_path / "results.jsonl"
    path.write_text(line + "\n")
    (read,) = read_results(path)
    assert read.details.page == page()


@pytest.mark.parametrize("details", [NotesDetails(notes=["n1", "n2"]),
                                     ChainDetails(steps=["s1"], queries=["q1"]), None])
def test_every_details_kind_comes_back_as_its_model(details):
    back = ResultRecord.model_validate_json(record(details=details).model_dump_json())
    assert back.details == details and type(back.details) is type(details)


def test_a_record_reads_by_key_as_the_dict_records_did():
    r = record()
    assert r["prediction"] == "a" and r["metrics"] == {"em": 1.0} and r.get("nope", 7) == 7
    with pytest.raises(KeyError):
        r["nope"]


def test_keys_stay_those_older_tools_read():
    data = json.loads(record().model_dump_json())
    assert FIRST_KEYS <= set(data)
    assert set(data) - FIRST_KEYS == {"context", "eval_calls", "details"}


# -- reading results files ----------------------------------------------------------------
def test_read_results_cuts_a_torn_line_skips_garbage_and_names_a_bad_record(tmp_path, caplog):
    path = tmp_path / "results.jsonl"
    path.write_text(record(id="a").model_dump_json() + "\nnot json\n"
                    + record(id="b").model_dump_json() + '\n{"id": "torn", "pre')
    with caplog.at_level(logging.WARNING):
        assert [r.id for r in read_results(path)] == ["a", "b"]
    assert "line 2 is not JSON" in caplog.text and "partial record" in caplog.text
    assert path.read_text().endswith("\n")  # the torn line is gone
    path.write_text(path.read_text() + '{"id": "c", "question": "q"}\n')
    with pytest.raises(InputFormatError, match=r"line 4, field 'answers'.*not a result record"):
        read_results(path)


def test_every_committed_run_loads_through_result_record(tmp_path):
    loaded = {}
    for run in committed_runs():
        copy = tmp_path / run.parent.name / run.name  # reading never writes the originals
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns("workspace"))
        raw = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()
               if line.strip()]
        results = read_results(copy / "results.jsonl")
        assert len(results) == len(raw) and all(isinstance(r, ResultRecord) for r in results)
        assert [r.id for r in results] == [d["id"] for d in raw]
        assert all(r.metrics == d["metrics"] and r.prediction == d["prediction"]
                   for r, d in zip(results, raw))
        loaded[f"{run.parent.name}/{run.name.split('-SmolLM2')[0]}"] = results
        summary = load_run(copy)
        assert summary["n"] == len(raw)
        assert raw, f"{run} has no answered question: do not commit an empty run"
        for metric in raw[0]["metrics"]:  # every measure the run took, cover_em or synth_score
            values = [d["metrics"][metric] for d in raw if metric in d["metrics"]]
            assert summary["mean"][metric] == pytest.approx(statistics.mean(values)), metric
        assert summary["tokens"]["prompt_tokens"] == pytest.approx(
            statistics.mean(d["prompt_tokens"] for d in raw))
    assert {name: len(rs) for name, rs in loaded.items() if name.startswith("hotpotqa")} == {
        "hotpotqa-20-dig/hotpotqa-pager": 20, "hotpotqa-20-dig/hotpotqa-vanilla-rag": 20,
        "hotpotqa-50/hotpotqa-pager": 50, "hotpotqa-50/hotpotqa-vanilla-llm": 50,
        "hotpotqa-50/hotpotqa-vanilla-rag": 50,
        "hotpotqa-paper-measuring-20/hotpotqa-pager-measuring": 20,
        "hotpotqa-paper-measuring-20/hotpotqa-pager-section-measuring": 20,
        "hotpotqa-paper-measuring-20/hotpotqa-pager-section-before-fix": 20,
        "hotpotqa-paper-measuring-20/hotpotqa-vanilla-rag-measuring": 20,
        "hotpotqa-span-measuring/hotpotqa-vanilla-rag-before": 40,
        "hotpotqa-span-measuring/hotpotqa-vanilla-rag-after": 40}
    first = loaded["hotpotqa-50/hotpotqa-vanilla-llm"][0]
    assert (first.id, first.answers) == ("5a8c7595554299585d9e36b6", ["Chief of Protocol"])
    assert first.retrieval_rounds == [] and first.page is None
    # written before DIG: no context, no measuring cost, no details
    assert all(r.context == "" and r.eval_calls is None and r.details is None
               for r in loaded["hotpotqa-50/hotpotqa-pager"])
    assert all(r.page.startswith("# ") for r in loaded["hotpotqa-50/hotpotqa-pager"])
    dig = loaded["hotpotqa-20-dig/hotpotqa-vanilla-rag"]
    assert all("dig" in r.metrics and r.eval_calls.llm_calls == 2 and r.context for r in dig)


def test_every_committed_run_resumes_with_nothing_to_redo(tmp_path):
    def scorer(messages, reply):
        return [-1.0] * len(reply.split())

    for run in committed_runs():
        copy = tmp_path / run.parent.name / run.name
        copy.mkdir(parents=True)
        for name in ("config.json", "results.jsonl"):
            shutil.copy(run / name, copy / name)
        saved = (copy / "config.json").read_text()
        done = read_results(copy / "results.jsonl")
        # the questions already answered, each with a pool (as the dataset gives them)
        questions = [QARecord(id=r.id, question=r.question, answers=r.answers,
                              contexts=[Context(id="c", text="t")]) for r in done]
        fake = FakeLLM(respond=oracle, scorer=scorer)
        cfg = RunConfig.from_saved(json.loads(saved))
        results = asyncio.run(EvalRunner(cfg, copy, lm=LM(fake)).run(questions))
        assert [r.id for r in results] == [r.id for r in done], run
        assert fake.requests == [] and fake.scored == []
        assert (copy / "config.json").read_text() == saved  # accepted unchanged


# -- the runner writes records ------------------------------------------------------------
class OnePageRAG(BaseMethod):
    """Vanilla RAG whose documents become a page (a method with PAGER's details)."""

    name = "one-page-rag"

    def __init__(self, lm, retriever, *, k: int = 5) -> None:
        super().__init__(lm, retriever)
        self.k = k

    async def run(self, episode: Episode) -> Answer:
        hits = await episode.retrieve(episode.question, self.k)
        sections = [Section(title=h.chunk.title, content=h.chunk.text, filled=True,
                            sub_query=episode.question, chunk_ids=[h.chunk.id]) for h in hits]
        built = Page(title=episode.question, sections=sections)
        answer, raw = await episode.answer_step(RAG_ANSWER, docs=format_docs(hits),
                                                question=episode.question)
        return episode.finish(answer, explanation=raw, context=built.render(),
                              details=PagerDetails(page=built))


def test_the_runner_writes_the_answers_details_and_reads_them_back(tmp_path):
    spec = dataclasses.replace(METHODS["vanilla-rag"], name="one-page-rag",
                               factory=lambda lm, r, o: OnePageRAG(lm, r, **o.model_dump()))
    runner = EvalRunner(config(method="one-page-rag"), tmp_path / "r",
                        lm=LM(FakeLLM(respond=oracle)), methods=METHODS.with_specs(spec))
    results = asyncio.run(runner.run(records(3)))
    assert len(results) == 3
    for r in results:
        assert isinstance(r.details, PagerDetails)
        assert r.page == r.details.page.render() == r.context
        assert [c for s in r.details.page.sections for c in s.chunk_ids] == r.retrieval_rounds[0]
    lines = [json.loads(x) for x in (tmp_path / "r" / "results.jsonl").read_text().splitlines()]
    assert all(FIRST_KEYS <= set(d) and d["details"]["kind"] == "pager" for d in lines)
    assert read_results(tmp_path / "r" / "results.jsonl") == results
