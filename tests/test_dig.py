"""Document information gain (PAGER A.3): the calibration of Eq. 13-14 by hand, DIG with a
scripted scorer, and its place in evaluation runs."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from quaderno.errors import ConfigError
from quaderno.eval.dig import DIGParams, calibrated_log_probability, information_gain, smooth
from quaderno.eval.runner import EvalRunner, RunConfig, read_results
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from tests.test_eval import oracle, records


def test_sliding_window_smoothing_by_hand():
    assert smooth([0.2, 0.4, 0.6], 3) == pytest.approx([0.3, 0.4, 0.5])
    assert smooth([0.2, 0.4, 0.6, 0.8, 1.0], 5) == pytest.approx([0.4, 0.5, 0.6, 0.7, 0.8])
    assert smooth([0.7], 3) == [0.7]
    assert smooth([0.1, 0.9], 1) == [0.1, 0.9]


def test_calibrated_probability_by_hand():
    logprobs = [math.log(0.2), math.log(0.4), math.log(0.6)]
    params = DIGParams(window=3, head=1, head_weight=2.0, alpha=0.5)
    # smoothed 0.3, 0.4, 0.5; exponents 2*0.5 = 1 for the head token, 1-0.5 for the others
    expected = math.log(0.3) + 0.5 * math.log(0.4) + 0.5 * math.log(0.5)
    assert calibrated_log_probability(logprobs, params) == pytest.approx(expected)


def test_without_smoothing_or_weights_it_is_the_sequence_probability():
    logprobs = [-0.1, -2.3, -0.7, -1.2]
    plain = DIGParams(window=1, head=0, alpha=0.0)
    assert calibrated_log_probability(logprobs, plain) == pytest.approx(sum(logprobs))


def test_params_are_validated_with_the_bad_value_named():
    with pytest.raises(ValueError, match="window must be odd.*got 4"):
        DIGParams(window=4)
    with pytest.raises(ValueError, match="alpha"):
        DIGParams(alpha=1.5)
    with pytest.raises(ValueError, match="at least one token"):
        calibrated_log_probability([], DIGParams())


def knowing_scorer(messages, reply):
    """The gold answer is likely when the prompt's knowledge mentions it, unlikely otherwise."""
    prompt = messages[-1].content
    knows = "Knowledge:" in prompt and reply in prompt.split("Question:")[0]
    return [-0.1 if knows else -3.0] * len(reply.split())


def test_information_gain_rises_when_the_context_holds_the_answer():
    lm = LM(FakeLLM(echo=True, scorer=knowing_scorer))
    q = "Who wrote Hamlet?"
    good = asyncio.run(information_gain(lm, q, "Hamlet is a play by William Shakespeare.",
                                        ["William Shakespeare"]))
    bad = asyncio.run(information_gain(lm, q, "Paris is in France.", ["William Shakespeare"]))
    assert good["dig"] > 0.5 and good["dig_p_with"] > good["dig_p_without"]
    assert bad["dig"] == pytest.approx(0.0)
    # no context or no gold: nothing to measure
    assert asyncio.run(information_gain(lm, q, "   ", ["x"])) is None
    assert asyncio.run(information_gain(lm, q, "text", [""])) is None


def test_scores_are_cached_and_traced(tmp_path):
    from quaderno.llm.cache import SQLiteCache
    from quaderno.llm.trace import Trace

    fake = FakeLLM(echo=True, scorer=knowing_scorer)
    lm = LM(fake, cache=SQLiteCache(tmp_path / "c.sqlite"))
    trace = Trace()
    first = asyncio.run(lm.score("Question: q", "an answer", trace=trace, step="s"))
    again = asyncio.run(lm.score("Question: q", "an answer", trace=trace, step="s"))
    other = asyncio.run(lm.score("Question: q", "another answer"))
    assert first == again and len(fake.scored) == 2 and len(other) == 2
    assert [c.cached for c in trace.calls] == [False, True]
    assert (trace.calls[0].usage.prompt_tokens, trace.calls[0].usage.completion_tokens) == (2, 2)


def test_an_llm_that_cannot_score_is_refused_before_the_run(tmp_path):
    cfg = RunConfig(dataset="hotpot-fixture", method="vanilla-rag", k=3, model="fake:oracle",
                    dig=DIGParams())
    with pytest.raises(ConfigError, match="DIG needs the answering LLM to score"):
        EvalRunner(cfg, tmp_path / "r", lm=LM(FakeLLM(respond=oracle)))
    with pytest.raises(ConfigError, match="cannot score a given reply"):
        asyncio.run(LM(FakeLLM(echo=True)).score("q", "a"))


def test_run_with_dig_keeps_the_method_cost_apart(tmp_path):
    recs = records(4)
    base = {"dataset": "hotpot-fixture", "method": "vanilla-rag", "k": 3, "model": "fake:oracle"}
    plain = asyncio.run(EvalRunner(RunConfig(**base), tmp_path / "plain",
                                   lm=LM(FakeLLM(respond=oracle))).run(recs))
    fake = FakeLLM(respond=oracle, scorer=knowing_scorer)
    with_dig = asyncio.run(EvalRunner(RunConfig(**base, dig=DIGParams()), tmp_path / "dig",
                                      lm=LM(fake)).run(recs))
    by_id = {r["id"]: r for r in plain}
    for r in with_dig:
        assert {"dig", "dig_p_with", "dig_p_without"} <= set(r["metrics"])
        assert -1 <= r["metrics"]["dig"] <= 1 and r["context"].startswith("[1] ")
        same = by_id[r["id"]]  # DIG's scoring calls are not the method's
        assert (r["llm_calls"], r["prompt_tokens"]) == (same["llm_calls"], same["prompt_tokens"])
        assert r["eval_calls"]["llm_calls"] == 2 * len(r["answers"][:3])
    saved = json.loads((tmp_path / "dig" / "config.json").read_text())
    assert saved["dig"] == DIGParams().model_dump()
    # the scored prompt holds the documents the answer was generated from
    assert all("Knowledge:\n[1] " in m[-1].content for m, _ in fake.scored[::2])


def test_a_run_started_before_an_option_existed_still_resumes(tmp_path):
    recs = records(3)
    cfg = RunConfig(dataset="hotpot-fixture", method="vanilla-rag", k=3, model="fake:oracle")
    asyncio.run(EvalRunner(cfg, tmp_path / "r", lm=LM(FakeLLM(respond=oracle))).run(recs[:2]))
    path = tmp_path / "r" / "config.json"
    old = json.loads(path.read_text())
    del old["dig"]  # as written by an older quaderno
    path.write_text(json.dumps(old))
    fake = FakeLLM(respond=oracle)
    results = asyncio.run(EvalRunner(cfg, tmp_path / "r", lm=LM(fake)).run(recs))
    assert len(results) == 3 and len(fake.requests) == 1
    assert len(read_results(tmp_path / "r" / "results.jsonl")) == 3


def test_eval_cli_with_dig_over_a_vllm_style_server(tmp_path):
    from typer.testing import CliRunner

    from quaderno.cli.main import app
    from quaderno.llm.testing import FakeOpenAIServer
    from quaderno.llm.types import ChatRequest
    from tests.test_eval import FIXTURE

    def logprob(prompt, token):
        return -0.1 if token.strip() in prompt.split("Question:")[0] else -3.0

    runner = CliRunner()
    with FakeOpenAIServer(reply=lambda body: oracle(ChatRequest.of(body["messages"])),
                          token_logprob=logprob) as srv:
        config = tmp_path / "config.toml"
        config.write_text(f'[llm]\nbackend = "openai"\nmodel = "fake-model"\n'
                          f'base_url = "{srv.url}"\nscoring = "vllm"\n')
        args = ["eval", "--dataset", str(FIXTURE), "--format", "hotpot-ircot", "--limit", "3",
                "-m", "vanilla-rag", "--out", str(tmp_path / "runs"), "--home",
                str(tmp_path / "home"), "--k", "3", "--dig", "--config", str(config)]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        refused = runner.invoke(app, [*args[:-2], "--llm", "openai", "--model", "fake-model",
                                      "--base-url", srv.url, "--name", "plain"])
        likely = runner.invoke(app, [*args, "--dig-alias", "likely", "--name", "likely"])
        bogus = runner.invoke(app, [*args, "--dig-alias", "best", "--name", "bogus"])
    assert refused.exit_code != 0 and "DIG needs the answering LLM" in refused.output
    assert likely.exit_code == 0, likely.output
    assert json.loads((tmp_path / "runs" / "likely" / "config.json").read_text())["dig"][
        "alias"] == "likely"
    assert bogus.exit_code != 0 and "--dig-alias must be one of" in bogus.output
    assert not (tmp_path / "runs" / "bogus").exists()
    run = next(p for p in (tmp_path / "runs").iterdir() if p.name != "likely")
    results = read_results(run / "results.jsonl")
    assert len(results) == 3 and all("dig" in r["metrics"] for r in results)
    # the gold answer is in the retrieved documents for some questions: a positive gain
    assert max(r["metrics"]["dig"] for r in results) > 0.5


def test_a_method_whose_spec_measures_dig_gets_it_without_dig_in_the_config(tmp_path):
    import dataclasses

    from quaderno.methods.registry import METHODS

    spec = dataclasses.replace(METHODS["vanilla-rag"], name="dig-rag", measures=("dig",))
    cfg = RunConfig(dataset="hotpot-fixture", method="dig-rag", k=3, model="fake:oracle")
    fake = FakeLLM(respond=oracle, scorer=knowing_scorer)
    results = asyncio.run(EvalRunner(cfg, tmp_path / "r", lm=LM(fake),
                                     methods=METHODS.with_specs(spec)).run(records(2)))
    for r in results:  # measured with the default calibration, its cost apart
        assert {"dig", "dig_p_with", "dig_p_without"} <= set(r.metrics)
        assert r.llm_calls == 1 and r.eval_calls.llm_calls == 2 * len(r.answers[:3])
    assert json.loads((tmp_path / "r" / "config.json").read_text())["dig"] is None


def alias_scorer(messages, reply):
    """With the knowledge, "Shakespeare" is likeliest; "Bard" gains more (it is unlikely
    without the knowledge and fairly likely with it)."""
    with_knowledge = "Knowledge:" in messages[-1].content
    table = {("Shakespeare", True): -0.05, ("Shakespeare", False): -0.2,
             ("Bard", True): -0.3, ("Bard", False): -5.0, ("Marlowe", True): -4.0,
             ("Marlowe", False): -4.0}
    return [table[(reply, with_knowledge)]] * len(reply.split())


@pytest.mark.parametrize(("rule", "alias"), [("first", 0), ("likely", 1), ("max_gain", 2)])
def test_the_gold_alias_is_chosen_by_a_rule_that_does_not_look_at_the_gain(rule, alias):
    lm = LM(FakeLLM(echo=True, scorer=alias_scorer))
    golds = ["Marlowe", "Shakespeare", "Bard"]
    gain = asyncio.run(information_gain(lm, "Who wrote Hamlet?", "Hamlet is by the Bard.",
                                        golds, DIGParams(alias=rule)))
    assert gain["dig_alias"] == alias
    alone = asyncio.run(information_gain(lm, "Who wrote Hamlet?", "Hamlet is by the Bard.",
                                         [golds[alias]]))
    assert {k: v for k, v in gain.items() if k != "dig_alias"} == \
        {k: v for k, v in alone.items() if k != "dig_alias"}
    if rule != "max_gain":  # the default and "likely" report less than the optimistic pick
        best = asyncio.run(information_gain(lm, "Who wrote Hamlet?", "Hamlet is by the Bard.",
                                            golds, DIGParams(alias="max_gain")))
        assert gain["dig"] < best["dig"]


def test_a_dig_run_saved_before_the_alias_rule_resumes_as_it_ran():
    saved = {"dataset": "d", "method": "vanilla-rag", "model": "m",
             "dig": {"window": 3, "head": 3, "head_weight": 2.0, "alpha": 0.5,
                     "max_answers": 3}}
    assert RunConfig.from_saved(saved).dig.alias == "max_gain"
    assert RunConfig(dataset="d", method="vanilla-rag", model="m",
                     dig=DIGParams()).dig.alias == "first"
