"""Evaluation harness: datasets, runner (resume, kill -9, faults), reports, CLI."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quaderno.errors import ConfigError, InputFormatError, NotFoundError
from quaderno.eval.datasets import DATASETS, load_dataset
from quaderno.eval.report import load_run, write_report
from quaderno.eval.runner import EvalRunner, RunConfig, read_results
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.openai_http import OpenAIChatLLM
from quaderno.llm.testing import FakeOpenAIServer
from quaderno.llm.types import ChatRequest

FIXTURE = Path(__file__).parent / "data" / "eval" / "hotpot_ircot_8.jsonl"


def records(n=8):
    return load_dataset(str(FIXTURE), fmt="hotpot-ircot", limit=n)


def oracle(request: ChatRequest) -> str:
    """Answers with the first document's title: deterministic, depends on retrieval."""
    text = request.messages[0].content
    first = text.split("[1] ", 1)[1].split("\n", 1)[0] if "[1] " in text else "unknown"
    return f"Looking at the documents. <answer>{first}</answer>"


def config(**kw) -> RunConfig:
    base = {"dataset": "hotpot-fixture", "method": "vanilla-rag", "k": 3, "model": "fake:oracle"}
    return RunConfig(**{**base, **kw})


def run(cfg, run_dir, lm, recs=None, concurrency=3):
    runner = EvalRunner(cfg, run_dir, lm=lm, concurrency=concurrency)
    return asyncio.run(runner.run(recs or records())), runner


# -- datasets -----------------------------------------------------------------------------
def test_fixture_records_have_pools_and_support():
    recs = records()
    assert len(recs) == 8 and recs[0].answers == ["Chief of Protocol"]
    assert len(recs[0].contexts) == 10 and len(recs[0].supporting_ids) == 2


def test_every_named_dataset_loads(shared_data):
    for name in DATASETS:
        recs = load_dataset(name, data=shared_data, limit=2)
        assert len(recs) == 2 and all(r.question and r.answers for r in recs), name
    assert load_dataset("huatuo", data=shared_data, limit=1)[0].long_form
    pool = load_dataset("2wiki-bge-pool", data=shared_data, limit=1)[0]
    assert len(pool.contexts) == 10


def test_2wiki_comparison_keeps_only_comparison_questions(shared_data):
    every = load_dataset("2wiki", data=shared_data)
    comp = load_dataset("2wiki-comparison", data=shared_data)
    assert 150 < len(comp) < len(every)
    assert all(" or " in r.question or "both" in r.question.lower() for r in comp)
    kept = {r.id for r in comp}
    left = [r.question for r in every if r.id not in kept]
    assert "Who was born later, Greg Pipes or Ma Xiaolei?" in {r.question for r in comp}
    assert not any(q.startswith("Who was born first,") for q in left)


def test_dataset_errors(tmp_path):
    with pytest.raises(ConfigError, match="not a known dataset"):
        load_dataset("nope.jsonl")
    with pytest.raises(NotFoundError, match="QUADERNO_DATA"):
        load_dataset("hotpotqa", data=tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_text": "q", "answers_objects": [], "question_id": "1"}\n')
    with pytest.raises(InputFormatError, match="line 1, field 'answers_objects'"):
        load_dataset(str(bad), fmt="hotpot-ircot")


# -- runner -------------------------------------------------------------------------------
def test_run_writes_one_scored_record_per_question(tmp_path):
    results, _ = run(config(), tmp_path / "r", LM(FakeLLM(respond=oracle)))
    assert len(results) == 8 and len({r["id"] for r in results}) == 8
    first = next(r for r in results if r["id"] == "5a8c7595554299585d9e36b6")
    assert set(first["metrics"]) >= {"em", "f1", "cover_em", "acc", "recall@2", "recall@5"}
    assert first["llm_calls"] == 1 and first["retrieval_rounds"] and first["prediction"]
    saved = json.loads((tmp_path / "r" / "config.json").read_text())
    assert saved["method"] == "vanilla-rag" and saved["k"] == 3 and saved["code_version"]


def test_resume_after_interruption_same_results_no_duplicates(tmp_path):
    clean, _ = run(config(), tmp_path / "clean", LM(FakeLLM(respond=oracle)))
    calls = {"n": 0}

    def dying(request):
        calls["n"] += 1
        if calls["n"] > 4:
            raise KeyboardInterrupt  # an interruption, not an LLM error
        return oracle(request)

    with pytest.raises(KeyboardInterrupt):
        run(config(), tmp_path / "r", LM(FakeLLM(respond=dying)), concurrency=1)
    partial = read_results(tmp_path / "r" / "results.jsonl")
    assert 0 < len(partial) < 8
    with open(tmp_path / "r" / "results.jsonl", "a") as fh:
        fh.write('{"id": "torn-by-a-kill", "predic')  # a write cut short
    fake = FakeLLM(respond=oracle)
    resumed, _ = run(config(), tmp_path / "r", LM(fake))
    assert len(fake.requests) == 8 - len(partial)  # nothing redone
    assert sorted(r["id"] for r in resumed) == sorted(r["id"] for r in clean)
    by_id = {r["id"]: r for r in clean}
    assert all(r["prediction"] == by_id[r["id"]]["prediction"] and
               r["metrics"] == by_id[r["id"]]["metrics"] for r in resumed)


def test_warm_cache_keeps_token_counts_and_the_report_says_so(tmp_path):
    from quaderno.llm.cache import SQLiteCache

    cache = SQLiteCache(tmp_path / "llm.sqlite")
    cold, _ = run(config(), tmp_path / "cold", LM(FakeLLM(respond=oracle), cache=cache))
    fake = FakeLLM(respond=oracle)
    warm, _ = run(config(), tmp_path / "warm", LM(fake, cache=cache))
    assert fake.requests == []  # every call came from the cache
    by_id = {r["id"]: r for r in cold}
    for r in warm:  # a method's token cost does not depend on the cache's state
        assert r["cached_calls"] == r["llm_calls"] == 1
        assert (r["prompt_tokens"], r["completion_tokens"]) == (
            by_id[r["id"]]["prompt_tokens"], by_id[r["id"]]["completion_tokens"])
        assert r["prompt_tokens"] > 0
    assert load_run(tmp_path / "cold")["cached_share"] == 0.0
    assert load_run(tmp_path / "warm")["cached_share"] == 1.0
    md = write_report([tmp_path / "warm"], tmp_path / "report")["markdown"].read_text()
    assert "| cached calls |" in md and "| 100% |" in md


@pytest.mark.slow
def test_resume_after_kill_9(tmp_path):
    run_dir = tmp_path / "killed"
    script = textwrap.dedent(f"""
        import asyncio, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_eval import config, records, oracle
        from quaderno.eval.runner import EvalRunner
        from quaderno.llm.fake import FakeLLM
        from quaderno.llm.lm import LM
        lm = LM(FakeLLM(respond=oracle, latency_s=0.3))
        asyncio.run(EvalRunner(config(), {str(run_dir)!r}, lm=lm, concurrency=1).run(records()))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    results = run_dir / "results.jsonl"
    # generous: on a loaded 2-core machine the child's imports alone took over a minute
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 3:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(read_results(results))
    assert 3 <= done_before < 8
    fake = FakeLLM(respond=oracle)
    resumed, _ = run(config(), run_dir, LM(fake))
    assert len(resumed) == 8 and len({r["id"] for r in resumed}) == 8
    assert len(fake.requests) == 8 - done_before


def test_faulty_server_gives_the_same_results_as_a_clean_one(tmp_path):
    def reply(body):
        return oracle(ChatRequest.of(body["messages"]))

    outcomes = {}
    for label, fail_rate in (("clean", 0.0), ("faulty", 0.2)):
        with FakeOpenAIServer(reply=reply, fail_rate=fail_rate, seed=3) as server:
            backend = OpenAIChatLLM("fake-model", server.url, backoff_base=0.01, max_retries=8)
            results, runner = run(config(model="openai:fake-model"), tmp_path / label,
                                  LM(backend), concurrency=4)
            failures = sum(1 for r in server.requests) - len(results)
        outcomes[label] = ({r["id"]: (r["prediction"], r["metrics"]) for r in results}, failures)
        assert runner.failures == []
    assert outcomes["faulty"][0] == outcomes["clean"][0]
    assert outcomes["faulty"][1] > 0 and outcomes["clean"][1] == 0  # faults really happened


def test_llm_failures_are_left_out_for_the_next_resume(tmp_path):
    from quaderno.errors import LLMError
    fake = FakeLLM(respond=oracle)
    fake._respond = lambda r: (_ for _ in ()).throw(LLMError("down")) \
        if "Corliss Archer" in r.messages[0].content else oracle(r)
    results, runner = run(config(), tmp_path / "r", LM(fake))
    assert len(results) == 7 and len(runner.failures) == 1
    results, runner = run(config(), tmp_path / "r", LM(FakeLLM(respond=oracle)))
    assert len(results) == 8 and runner.failures == []


def test_resume_with_another_configuration_is_refused(tmp_path):
    run(config(), tmp_path / "r", LM(FakeLLM(respond=oracle)), recs=records(2))
    with pytest.raises(ConfigError, match="differs in k"):
        run(config(k=4), tmp_path / "r", LM(FakeLLM(respond=oracle)), recs=records(2))


def test_a_run_grows_to_a_larger_limit_and_keeps_what_it_answered(tmp_path):
    run(config(limit=2), tmp_path / "r", LM(FakeLLM(respond=oracle)), recs=records(2))
    other = LM(FakeLLM(respond=lambda r: "<answer>something else</answer>"))
    results, _ = run(config(limit=4), tmp_path / "r", other, recs=records(4))
    predictions = [r["prediction"] for r in results]
    assert len(results) == 4 and predictions.count("something else") == 2  # only the new two
    saved = json.loads((tmp_path / "r" / "config.json").read_text())
    assert saved["limit"] == 4 and saved["limits"] == [2, 4]
    with pytest.raises(ConfigError, match="may grow, never shrink"):
        run(config(limit=3), tmp_path / "r", other, recs=records(3))


def test_a_resumed_run_records_each_code_version_it_ran_with(tmp_path, monkeypatch):
    from quaderno.eval import runner as R
    monkeypatch.setattr(R, "code_version", lambda: "0.1.0+aaaaaaa")
    run(config(limit=2), tmp_path / "r", LM(FakeLLM(respond=oracle)), recs=records(2))
    path = tmp_path / "r" / "config.json"
    before = path.read_text()
    monkeypatch.setattr(R, "code_version", lambda: "0.1.0+bbbbbbb")
    run(config(limit=2), tmp_path / "r", LM(FakeLLM(respond=oracle)), recs=records(2))
    assert path.read_text() == before  # nothing left to answer: nothing ran, nothing to add
    run(config(limit=4), tmp_path / "r", LM(FakeLLM(respond=oracle)), recs=records(4))
    saved = json.loads(path.read_text())
    assert saved["code_version"] == "0.1.0+aaaaaaa"
    assert saved["code_versions"] == ["0.1.0+aaaaaaa", "0.1.0+bbbbbbb"]
    assert saved["limits"] == [2, 4]


def test_pooled_and_no_retrieval_methods(tmp_path):
    results, _ = run(config(pool="pooled"), tmp_path / "pooled", LM(FakeLLM(respond=oracle)))
    assert len(results) == 8
    assert len(list((tmp_path / "pooled" / "workspace" / "kbs").iterdir())) == 1
    llm_only, _ = run(config(method="vanilla-llm"), tmp_path / "llm",
                      LM(FakeLLM(respond=lambda r: "<answer>x</answer>")))
    assert all(r["retrieval_rounds"] == [] and "recall@2" not in r["metrics"] for r in llm_only)


def test_judges_context_recall_and_quality(tmp_path):
    def judge(request):
        text = request.messages[0].content
        if "analyze the context or evidence knowledge" in text:
            return '{"contexts": [{"context": "A"}, {"context": "B"}]}'
        if "attributed" in text or "binary classification" in text:
            return ('{"classification": [{"statement": "A", "attributed": 1, "reason": "r"},'
                    ' {"statement": "B", "attributed": 0, "reason": "r"}]}')
        return ('{"knowledge_structuring": 4, "document_refinement": 3, '
                '"coherence_logical_flow": 5, "correctness_argumentation": 2}')

    runner = EvalRunner(config(judge_model="fake:judge", judges=["context_recall", "quality"]),
                        tmp_path / "j", lm=LM(FakeLLM(respond=oracle)),
                        judge=LM(FakeLLM(respond=judge)))
    results = asyncio.run(runner.run(records(2)))
    m = results[0]["metrics"]
    assert m["context_recall"] == 0.5 and m["quality_avg"] == 3.5
    with pytest.raises(ConfigError, match="judge LLM"):
        config(judges=["quality"]).check()


# -- reports and CLI ----------------------------------------------------------------------
def test_report_table_markdown_html_and_plots(tmp_path):
    run(config(), tmp_path / "rag", LM(FakeLLM(respond=oracle)))
    run(config(method="vanilla-llm"), tmp_path / "llm",
        LM(FakeLLM(respond=lambda r: "<answer>Chief of Protocol</answer>")))
    paths = write_report([tmp_path / "rag", tmp_path / "llm"], tmp_path / "report")
    md = paths["markdown"].read_text()
    assert "| method | hotpot-fixture |" in md
    assert "| vanilla-llm | 12.5 |" in md  # 1 of 8 answers is "Chief of Protocol"
    assert "<table>" in paths["html"].read_text()
    for png in ("scores.png", "cost.png", "by_iteration.png"):
        assert (tmp_path / "report" / png).stat().st_size > 1000
    assert load_run(tmp_path / "llm")["mean"]["cover_em"] == 0.125


def test_eval_and_report_cli_over_http(tmp_path):
    from quaderno.cli.main import app
    runner = CliRunner()
    with FakeOpenAIServer(reply=lambda body: oracle(ChatRequest.of(body["messages"]))) as srv:
        args = ["eval", "--dataset", str(FIXTURE), "--format", "hotpot-ircot", "--limit", "4",
                "-m", "vanilla-rag", "-m", "vanilla-llm", "--llm", "openai", "--model",
                "fake-model", "--base-url", srv.url, "--out", str(tmp_path / "runs"),
                "--home", str(tmp_path / "home"), "--k", "3"]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        n_requests = len(srv.requests)
        res = runner.invoke(app, args)  # resume: nothing left to do
        assert res.exit_code == 0 and len(srv.requests) == n_requests
    runs = sorted((tmp_path / "runs").iterdir())
    assert [p.name for p in runs] == ["hotpot_ircot_8-vanilla-llm-fake-model",
                                      "hotpot_ircot_8-vanilla-rag-fake-model"]
    res = runner.invoke(app, ["report", *map(str, runs), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    assert "vanilla-rag" in res.output and (tmp_path / "rep" / "report.md").exists()


# -- measures: from the configuration, the method's spec, a dataset's extra measures -------
class AnswerCheck:
    """A custom measure: the answering LLM re-reads the answer (one call per question)."""

    name = "answer_check"
    title = "answer check"
    needs_judge = False
    needs_scoring = False

    def __init__(self, lm):
        self.lm = lm

    @classmethod
    def build(cls, tools):
        return cls(tools.lm)

    async def measure(self, record, answer, *, trace):
        reply = await self.lm.complete(f"Is this right?\n[1] {answer.answer}\n",
                                       trace=trace, step="measure.answer_check")
        return {"answer_words": float(len(answer.answer.split())),
                "answer_check": 1.0 if answer.answer in reply else 0.0}  # the oracle agrees


def measured_registries(*spec_measures):
    import dataclasses

    from quaderno.eval.measures import MEASURES
    from quaderno.methods.registry import METHODS

    spec = dataclasses.replace(METHODS["vanilla-rag"], name="measured-rag",
                               measures=spec_measures)
    return METHODS.with_specs(spec), MEASURES.with_measures(AnswerCheck)


def test_a_method_spec_adds_its_measures_and_their_cost_stays_apart(tmp_path):
    methods, measures = measured_registries("answer_check")
    plain, _ = run(config(), tmp_path / "plain", LM(FakeLLM(respond=oracle)))
    fake = FakeLLM(respond=oracle)
    measured = asyncio.run(EvalRunner(config(method="measured-rag"), tmp_path / "m", lm=LM(fake),
                                      methods=methods, measures=measures).run(records()))
    assert len(fake.requests) == 2 * 8  # the answer and the measure's call per question
    by_id = {r.id: r for r in plain}
    for r in measured:
        assert r.metrics["answer_words"] == len(r.prediction.split())
        assert r.metrics["answer_check"] == 1.0
        same = by_id[r.id]  # the measure's call is not the method's
        assert (r.llm_calls, r.prompt_tokens, r.completion_tokens) == (
            same.llm_calls, same.prompt_tokens, same.completion_tokens)
        assert r.eval_calls is not None and r.eval_calls.llm_calls == 1
        assert r.eval_calls.prompt_tokens > 0
    assert all("answer_check" not in r.metrics and r.eval_calls is None for r in plain)


def test_a_runs_extra_measures_are_recorded_and_checked_on_resume(tmp_path):
    _, measures = measured_registries()
    cfg = config(measures=["answer_check"])
    results = asyncio.run(EvalRunner(cfg, tmp_path / "r", lm=LM(FakeLLM(respond=oracle)),
                                     measures=measures).run(records(2)))
    assert all(r.metrics["answer_check"] == 1.0 for r in results)
    saved = json.loads((tmp_path / "r" / "config.json").read_text())
    assert saved["measures"] == ["answer_check"]
    with pytest.raises(ConfigError, match="differs in measures"):
        asyncio.run(EvalRunner(config(), tmp_path / "r", lm=LM(FakeLLM(respond=oracle)),
                               measures=measures).run(records(2)))


def test_a_config_saved_before_measures_existed_still_resumes(tmp_path):
    run(config(), tmp_path / "r", LM(FakeLLM(respond=oracle)), recs=records(2))
    path = tmp_path / "r" / "config.json"
    old = json.loads(path.read_text())
    del old["measures"]  # as written by an older quaderno
    path.write_text(json.dumps(old))
    fake = FakeLLM(respond=oracle)
    results, _ = run(config(), tmp_path / "r", LM(fake), recs=records(3))
    assert len(results) == 3 and len(fake.requests) == 1


def test_unknown_measures_are_config_errors_naming_the_known_ones(tmp_path):
    lm = LM(FakeLLM(respond=oracle))
    with pytest.raises(ConfigError, match=r"unknown measure 'nope'; choose one of "
                                          r"context_recall, quality, dig"):
        EvalRunner(config(measures=["nope"]), tmp_path / "a", lm=lm)
    methods, measures = measured_registries("answer_check", "missing")
    with pytest.raises(ConfigError, match="unknown measure 'missing'.*answer_check"):
        EvalRunner(config(method="measured-rag"), tmp_path / "b", lm=lm, methods=methods,
                   measures=measures)
    with pytest.raises(ConfigError, match="unknown measure 'answer_check'"):
        EvalRunner(config(measures=["answer_check"]), tmp_path / "c", lm=lm)  # not registered
    assert not (tmp_path / "a").exists()  # refused before anything was written


def test_measures_the_runs_llms_cannot_serve_are_refused(tmp_path):
    lm = LM(FakeLLM(respond=oracle))  # cannot score
    with pytest.raises(ConfigError, match="representation quality needs a judge LLM"):
        EvalRunner(config(measures=["quality"]), tmp_path / "a", lm=lm)
    methods, _ = measured_registries("dig")
    with pytest.raises(ConfigError, match="DIG needs the answering LLM to score.*method "
                                          "'measured-rag' always measures dig"):
        EvalRunner(config(method="measured-rag"), tmp_path / "b", lm=lm, methods=methods)


# -- context recall as the missing-knowledge paper (Eq. 4, Figs. 6-7; checklist A19) --------
HANNIBAL_Q = "who played hannibal lecturer in silence of the lambs"
HANNIBAL_CONTEXTS = [  # Fig. 7's retrieved contexts (QA pairs as the paper prints them)
    "who played hannibal lecturer in silence of the lambs Anthony Hopkins, Anthony Hopkins as "
    "Dr. Hannibal Lecter",
    "who played hannibal lecturer in silence of the lamb Anthony Hopkins, Anthony Hopkins as "
    "Dr. Hannibal Lecter",
    "who was the actor in silence of the lambs Frank Theodore \"Ted\" Levine, Frank Theodore Ted "
    "Levine ( born May 29 , 1957 ) is an American actor . He is known for his roles as Buffalo "
    "Bill in The Silence of the Lambs and as Captain Leland Stottlemeyer in the television "
    "series Monk .",
    "who starred in the silence of the lambs Jodie Foster, Anthony Hopkins, Scott Glenn, Ted "
    "Levine, The Silence of the Lambs Theatrical release posterDirected by Jonathan Demme "
    "Produced by Kenneth Utt Edward Saxon Ron Bozman Screenplay by Ted Tally Based on The "
    "Silence of the Lambs by Thomas Harris Starring Jodie Foster Anthony Hopkins Scott Glenn "
    "Ted Levine Music by Howard Shore"]
HANNIBAL_GT = [
    "Anthony Hopkins is a Welsh actor, director, and producer.",
    "Anthony Hopkins portrayed the character Hannibal Lecter in the 1991 film The Silence of "
    "the Lambs.",
    "The Silence of the Lambs is a 1991 American horror-thriller film directed by Jonathan "
    "Demme and starring Jodie Foster and Anthony Hopkins."]
# the judge's two replies as Fig. 7 prints them: bare objects, no wrapping key
FIG7_GROUND_TRUTH = ", ".join(json.dumps({"context": s}) for s in HANNIBAL_GT)
FIG7_CLASSIFICATION = "```\n" + ",\n".join(json.dumps(
    {"statement": s, "attributed": label, "reason": "as Fig. 7"}, indent=2)
    for s, label in zip(HANNIBAL_GT, (0, 1, 1))) + "\n```"
GT_INSTRUCTION = "analyze the context or evidence knowledge"


def fig7_judge(request):
    return FIG7_GROUND_TRUTH if GT_INSTRUCTION in request.messages[0].content \
        else FIG7_CLASSIFICATION


def test_the_papers_fig7_hannibal_example_scores_two_thirds():
    from quaderno.eval.judges import context_recall
    from quaderno.eval.measures import ContextRecall, MeasureTools
    from quaderno.llm.trace import Trace
    from quaderno.methods.answer import Answer, Evidence

    judge = FakeLLM(respond=fig7_judge)
    recall = asyncio.run(context_recall(LM(judge), HANNIBAL_Q, ["Anthony Hopkins"],
                                        HANNIBAL_CONTEXTS))
    assert recall == pytest.approx(2 / 3)
    assert len(judge.requests) == 2  # ground truth, then classification
    shown = judge.requests[1].messages[0].content
    assert all(c in shown for c in HANNIBAL_CONTEXTS)
    assert all(json.dumps({"context": s}) in shown for s in HANNIBAL_GT)
    # the same through the measure, over an answer's evidence
    answer = Answer(question=HANNIBAL_Q, answer="Anthony Hopkins", method="m", evidence=[
        Evidence(chunk_id=str(i), kb="nq-qa", title="", text=t, score=1.0, query=HANNIBAL_Q)
        for i, t in enumerate(HANNIBAL_CONTEXTS)])
    record = load_dataset(str(FIXTURE), fmt="hotpot-ircot", limit=1)[0].model_copy(
        update={"question": HANNIBAL_Q, "answers": ["Anthony Hopkins"]})
    measure = ContextRecall.build(MeasureTools(LM(FakeLLM()), LM(FakeLLM(respond=fig7_judge))))
    assert asyncio.run(measure.measure(record, answer, trace=Trace())) == {
        "context_recall": pytest.approx(2 / 3)}


def test_context_recall_reads_context_keys_yes_no_labels_and_scores_empty_contexts_zero():
    from quaderno.eval.judges import context_recall, context_recalls

    def judge(request):
        if GT_INSTRUCTION in request.messages[0].content:
            return '{"contexts": [{"statement": "A"}, {"context": "B"}, {"context": "C"}]}'
        return ('{"classification": [{"context": "A", "attributed": "Yes", "reason": "r"},'
                ' {"context": "B", "attributed": false}, {"context": "C", "attributed": "No"}]}')

    assert asyncio.run(context_recall(LM(FakeLLM(respond=judge)), "q", ["a"],
                                      ["some context"])) == pytest.approx(1 / 3)
    silent = FakeLLM(respond=judge)
    assert asyncio.run(context_recalls(LM(silent), "q", ["a"], {"all": [], "qa": []})) == {
        "all": 0.0, "qa": 0.0}
    assert silent.requests == []  # nothing retrieved: 0 without asking (RAGAS gave 1)


def test_a_judge_json_failure_is_retried_once_then_nan_and_not_stored(tmp_path):
    from quaderno.eval.judges import GroundTruthStore, context_recall
    from quaderno.llm.trace import Trace

    bad = FakeLLM(respond=lambda r: "I think both statements are supported.")
    store = GroundTruthStore(tmp_path / "gt.sqlite")
    trace = Trace()
    assert asyncio.run(context_recall(LM(bad), "q", ["a"], ["ctx"], store=store,
                                      trace=trace)) is None
    assert len(bad.requests) == 2  # the re-ask, then NaN
    assert any("NaN" in f for f in trace.fallbacks)
    assert len(store) == 0  # no ground truth: the next run asks again

    def attribution_fails(request):
        return FIG7_GROUND_TRUTH if GT_INSTRUCTION in request.messages[0].content else "no"
    judge = FakeLLM(respond=attribution_fails)
    assert asyncio.run(context_recall(LM(judge), HANNIBAL_Q, ["Anthony Hopkins"], ["ctx"],
                                      store=store)) is None
    assert len(judge.requests) == 3 and len(store) == 1  # the ground truth was good


def split_judge(request):
    """Ground truth: two statements; the first is in the QA pair, the second in a passage."""
    text = request.messages[0].content
    if GT_INSTRUCTION in text:
        return '{"contexts": [{"context": "Hopkins played Lecter"}, {"context": "Demme"}]}'
    shown = text.split("Contexts:", 1)[1].split("Ground Truth:", 1)[0]
    labels = [int("Answer: Anthony Hopkins" in shown), int("Jonathan Demme" in shown)]
    return json.dumps({"classification": [
        {"statement": s, "attributed": a} for s, a in zip(("Hopkins played Lecter", "Demme"),
                                                          labels)]})


def test_context_recall_is_split_by_source_against_one_ground_truth():
    from quaderno.eval.measures import ContextRecall, MeasureTools, is_qa_pair_text
    from quaderno.llm.trace import Trace
    from quaderno.methods.answer import Answer, Evidence

    texts = ["Question: who played hannibal lecter?\nAnswer: Anthony Hopkins",
             "The Silence of the Lambs was directed by Jonathan Demme.",
             "Question: who wrote the novel?\nAnswer: Thomas Harris",
             "Jodie Foster played Clarice Starling."]
    assert [is_qa_pair_text(t) for t in texts] == [True, False, True, False]
    evidence = [Evidence(chunk_id=str(i), kb="kb", title="", text=t, score=1.0, query="q")
                for i, t in enumerate(texts)]
    record = records(1)[0]
    fake = FakeLLM(respond=split_judge)
    measure = ContextRecall.build(MeasureTools(LM(FakeLLM()), LM(fake)))
    answer = Answer(question="q", answer="Anthony Hopkins", method="m", evidence=evidence)
    out = asyncio.run(measure.measure(record, answer, trace=Trace()))
    assert out == {"context_recall": 1.0, "context_recall_qa": 0.5,
                   "context_recall_passage": 0.5}
    prompts = [r.messages[0].content for r in fake.requests]
    assert sum(GT_INSTRUCTION in p for p in prompts) == 1  # one ground truth, three judgments
    assert len(prompts) == 4
    one_source = answer.model_copy(update={"evidence": evidence[1::2]})
    assert asyncio.run(measure.measure(record, one_source, trace=Trace())) == {
        "context_recall": 0.5}  # passages only: no split


def judge_with_statements(*statements):
    """Writes ``statements`` as ground truth; attributes every statement it is shown."""
    from quaderno.eval.judges import json_objects

    def judge(request):
        text = request.messages[0].content
        if GT_INSTRUCTION in text:
            return json.dumps({"contexts": [{"context": s} for s in statements]})
        shown = json_objects(text.split("Ground Truth:", 1)[1])
        return json.dumps({"classification": [{"statement": o["context"], "attributed": 1}
                                              for o in shown]})
    return FakeLLM(respond=judge, model="judge")


def test_ground_truth_is_written_once_per_question_and_shared_across_methods(tmp_path):
    from quaderno.eval.judges import GroundTruthStore

    methods, _ = measured_registries()  # measured-rag: another method over the same pool
    out = tmp_path / "runs"
    cfg = dict(judge_model="fake:judge", judges=["context_recall"])
    first = judge_with_statements("A", "B")
    asyncio.run(EvalRunner(config(**cfg), out / "rag", lm=LM(FakeLLM(respond=oracle)),
                           judge=LM(first)).run(records(3)))
    assert sum(GT_INSTRUCTION in r.messages[0].content for r in first.requests) == 3
    store = GroundTruthStore(out / "ground_truth.sqlite")
    assert len(store) == 3
    rec = records(1)[0]
    assert store.get("fake:judge", rec.question, rec.answers) == ["A", "B"]
    # a later run of another method, its judge uncached and ready to write other statements
    second = judge_with_statements("X")
    results = asyncio.run(EvalRunner(config(method="measured-rag", **cfg), out / "other",
                                     lm=LM(FakeLLM(respond=oracle)), judge=LM(second),
                                     methods=methods).run(records(3)))
    assert not any(GT_INSTRUCTION in r.messages[0].content for r in second.requests)
    assert len(second.requests) == 3  # one classification per question
    assert all('{"context": "A"}\n{"context": "B"}' in r.messages[0].content
               for r in second.requests)
    assert all(r.metrics["context_recall"] == 1.0 for r in results)
    assert all(r.eval_calls.llm_calls == 1 for r in results)  # what measuring cost this run
    # another judge model gets its own statements
    assert store.get("fake:other", rec.question, rec.answers) is None
    plain = tmp_path / "plain"
    run(config(), plain / "r", LM(FakeLLM(respond=oracle)), recs=records(1))
    assert not (plain / "ground_truth.sqlite").exists()  # only context recall makes one


def test_a_damaged_ground_truth_store_is_an_error_naming_the_file(tmp_path):
    from quaderno.eval.judges import GroundTruthStore

    path = tmp_path / "ground_truth.sqlite"
    path.write_text("not a database " * 200)
    with pytest.raises(InputFormatError, match="ground_truth.sqlite.*move the file away"):
        GroundTruthStore(path).get("fake:judge", "q", ["a"])


def test_nan_scores_are_counted_by_the_report_not_averaged_as_zero(tmp_path):
    def judge(request):
        text = request.messages[0].content
        if GT_INSTRUCTION in text:
            return '{"contexts": [{"context": "A"}, {"context": "B"}]}'
        if "Corliss Archer" in text:  # this question's judgment never parses
            return "Both are attributed."
        return '{"classification": [{"statement": "A", "attributed": 1}, ' \
               '{"statement": "B", "attributed": 0}]}'

    fake = FakeLLM(respond=judge)
    results = asyncio.run(EvalRunner(
        config(judge_model="fake:judge", judges=["context_recall"]), tmp_path / "r",
        lm=LM(FakeLLM(respond=oracle)), judge=LM(fake)).run(records(3)))
    failed = [r for r in results if "Corliss Archer" in r.question]
    assert len(failed) == 1 and "context_recall" not in failed[0].metrics
    assert failed[0].metrics["context_recall_nan"] == 1.0
    assert all(r.metrics["context_recall"] == 0.5 for r in results if r not in failed)
    summary = load_run(tmp_path / "r")
    assert summary["nan"] == {"context_recall": 1}
    assert summary["mean"]["context_recall"] == 0.5  # over the 2 scored questions
    assert "context_recall_nan" not in summary["mean"]
    md = write_report([tmp_path / "r"], tmp_path / "rep", plots=False)["markdown"].read_text()
    assert "| NaN (judge failed) |" in md and "| context_recall 1/3 |" in md
    from quaderno.cli.main import app
    res = CliRunner().invoke(app, ["report", str(tmp_path / "r"), "--out",
                                   str(tmp_path / "rep2"), "--no-plots"])
    assert res.exit_code == 0, res.output
    assert "NaN" in res.output and "context_recall 1/3" in res.output


# -- paired differences in reports ---------------------------------------------------------
def test_report_gives_paired_differences_against_a_baseline(tmp_path):
    from quaderno.eval.paired import bootstrap_ci
    from quaderno.eval.report import paired

    rag, _ = run(config(), tmp_path / "rag", LM(FakeLLM(respond=oracle)))
    llm, _ = run(config(method="vanilla-llm"), tmp_path / "llm",
                 LM(FakeLLM(respond=lambda r: "<answer>Chief of Protocol</answer>")))
    runs = [load_run(tmp_path / "llm"), load_run(tmp_path / "rag")]
    ((dataset, d),) = paired(runs, "cover_em", baseline="vanilla-llm")
    base = {r.id: r.metrics["cover_em"] for r in llm}
    diffs = [r.metrics["cover_em"] - base[r.id] for r in rag]  # matched by id
    assert (dataset, d.a, d.b, d.n) == ("hotpot-fixture", "vanilla-rag", "vanilla-llm", 8)
    assert d.mean_b == 0.125 and d.diff == pytest.approx(sum(diffs) / 8)
    assert (d.ci_low, d.ci_high) == bootstrap_ci(diffs)
    assert d.better == sum(x > 0 for x in diffs) and d.worse == sum(x < 0 for x in diffs)
    assert d.mcnemar_p is not None
    # without a baseline: every later run against every earlier one
    ((_, same),) = paired(runs, "cover_em")
    assert (same.a, same.b, same.diff) == ("vanilla-rag", "vanilla-llm", d.diff)
    ((_, f1),) = paired(runs, "f1")
    assert f1.mcnemar_p is None or all(
        r.metrics["f1"] in (0.0, 1.0) for r in rag + llm)  # McNemar only for 0/1 scores
    md = write_report([tmp_path / "llm", tmp_path / "rag"], tmp_path / "report", plots=False,
                      baseline="vanilla-llm")["markdown"].read_text()
    assert "## Paired differences: cover_em" in md
    assert (f"| hotpot-fixture | vanilla-rag | vanilla-llm | 8 | {d.mean_a * 100:.1f} | 12.5 | "
            f"{d.diff * 100:+.1f} | [{d.ci_low * 100:+.1f}, {d.ci_high * 100:+.1f}] |") in md
    with pytest.raises(ConfigError, match="no run is 'pager': give --baseline one of "
                                          "vanilla-llm, vanilla-rag"):
        paired(runs, "cover_em", baseline="pager")


def test_runs_of_one_method_on_one_dataset_are_named_by_directory(tmp_path):
    from quaderno.eval.report import paired, run_labels, table

    run(config(), tmp_path / "rag-k3", LM(FakeLLM(respond=oracle)), recs=records(4))
    run(config(k=2), tmp_path / "rag-k2", LM(FakeLLM(respond=oracle)), recs=records(4))
    run(config(method="vanilla-llm"), tmp_path / "llm",
        LM(FakeLLM(respond=lambda r: "<answer>x</answer>")), recs=records(4))
    runs = [load_run(tmp_path / n) for n in ("rag-k3", "rag-k2", "llm")]
    assert run_labels(runs) == ["rag-k3", "rag-k2", "vanilla-llm"]
    methods, _, cells = table(runs, "cover_em")
    assert methods == ["rag-k3", "rag-k2", "vanilla-llm"] and len(cells) == 3
    assert [(d.a, d.b) for _, d in paired(runs, "cover_em", baseline="rag-k2")] == [
        ("rag-k3", "rag-k2"), ("vanilla-llm", "rag-k2")]
    with pytest.raises(ConfigError, match="2 runs on hotpot-fixture are 'vanilla-rag'.*rag-k3"):
        paired(runs, "cover_em", baseline="vanilla-rag")


def test_report_cli_prints_paired_differences_of_the_committed_runs(tmp_path):
    import shutil

    from quaderno.cli.main import app

    committed = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "hotpotqa-50"
    dirs = []
    for name in ("vanilla-llm", "vanilla-rag"):
        src = committed / f"hotpotqa-{name}-SmolLM2-135M-Instruct.Q4_1"
        shutil.copytree(src, tmp_path / src.name)
        dirs.append(str(tmp_path / src.name))
    res = CliRunner().invoke(app, ["report", *dirs, "--out", str(tmp_path / "rep"),
                                   "--no-plots", "--baseline", "vanilla-llm"])
    assert res.exit_code == 0, res.output
    assert "paired differences of cover_em" in res.output
    md = (tmp_path / "rep" / "report.md").read_text()
    # 6 questions only vanilla-rag covers, none the other way: McNemar p = 2 / 2^6
    assert "| hotpotqa | vanilla-rag | vanilla-llm | 50 | 12.0 | 0.0 | +12.0 |" in md
    assert "| 6 | 0 | 44 | 0.0312 |" in md


def test_report_splits_by_closed_book_knowledge_and_shows_pager_degeneration(tmp_path):
    from test_pager import Scripted

    run(config(), tmp_path / "rag", LM(FakeLLM(respond=oracle)))
    run(config(method="vanilla-llm"), tmp_path / "llm",
        LM(FakeLLM(respond=lambda r: "<answer>Chief of Protocol</answer>")))
    run(config(method="pager"), tmp_path / "pager", LM(FakeLLM(respond=Scripted())))
    md = write_report([tmp_path / "rag", tmp_path / "llm", tmp_path / "pager"],
                      tmp_path / "report", plots=False)["markdown"].read_text()
    # Table 3: the one question the closed-book LLM gets right, and the seven others
    llm = load_run(tmp_path / "llm")["scores"]
    known = [q for q, m in llm.items() if m["cover_em"] > 0]
    assert len(known) == 1
    rag = load_run(tmp_path / "rag")["scores"]
    conflict = rag[known[0]]["cover_em"] * 100
    utilization = sum(m["cover_em"] for q, m in rag.items() if q not in known) / 7 * 100
    assert f"| vanilla-rag | hotpot-fixture | {conflict:.1f} (n=1) | {utilization:.1f} (n=7) |" \
        in md
    assert "| vanilla-llm | hotpot-fixture |" not in md.split("## Knowledge conflict")[1] \
        .split("##")[0]
    # PAGER's degeneration: a good outline, 3 distinct retrievals per question
    section = md.split("## PAGER: did it degenerate")[1].split("\n## ")[0]
    assert "| pager | hotpot-fixture | 8 | 0% | 0% |" in section
    assert "vanilla-rag" not in section


def test_quality_judge_uses_the_full_fig13_rubric_and_warns_on_self_judging(tmp_path, caplog):
    prompts = []

    def judge(request):
        prompts.append(request.messages[-1].content)
        return ('{"knowledge_structuring": 4, "document_refinement": 3, '
                '"coherence_logical_flow": 5, "correctness_argumentation": 2}')

    runner = EvalRunner(config(judge_model="fake:judge", judges=["quality"]), tmp_path / "j",
                        lm=LM(FakeLLM(respond=oracle)), judge=LM(FakeLLM(respond=judge)))
    asyncio.run(runner.run(records(1)))
    prompt = prompts[0]
    # the four dimensions with their negative indicators, and the scale's descriptions
    for text in ("**Negative Indicators**: Fragmented information, lack of a main thread",
                 "**Negative Indicators**: Mechanical repetition, concatenation of excerpts",
                 "**Negative Indicators**: Logical jumps, self-contradiction",
                 "**Negative Indicators**: Missing key evidence",
                 "**3 (Satisfactory)**: Acceptable performance",
                 "**0 (Failure)**: Completely irrelevant"):
        assert text in prompt
    assert not runner.config.self_judged
    # the answering model judging its own pages: warned, and said in the report
    caplog.set_level("WARNING")
    own = config(judge_model="fake:fake", model="fake:fake", judges=["quality"])
    assert own.self_judged
    lm = LM(FakeLLM(respond=lambda r: judge(r) if "Knowledge Context" in
                    r.messages[-1].content else oracle(r)))
    runner = EvalRunner(own, tmp_path / "own", lm=lm, judge=lm)
    asyncio.run(runner.run(records(1)))
    assert any("judges its own pages" in r.message for r in caplog.records)
    md = write_report([tmp_path / "own"], tmp_path / "rep", plots=False)["markdown"].read_text()
    assert "is the answering model itself" in md
