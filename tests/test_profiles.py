"""Generation profiles (issue 14.2-3): `paper` sends PAGER's authors' sampling to a real HTTP
server, per-step token budgets and the official answer step; `deterministic` leaves requests
and cache keys as they were; a server that refuses the extra parameters says what to do."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quaderno.errors import ConfigError, LLMBadRequestError
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.openai_http import OpenAIChatLLM
from quaderno.llm.profiles import apply_profile, get_profile, profile_options
from quaderno.llm.testing import FakeOpenAIServer
from quaderno.llm.types import ChatRequest
from quaderno.methods.pager import Pager
from quaderno.methods.registry import get_spec
from test_pager import QUESTION, Scripted
from test_pager_loop import ListRetriever

FIXTURE = Path(__file__).parent / "data" / "eval" / "hotpot_ircot_8.jsonl"


def test_deterministic_requests_keep_their_cache_keys():
    req = ChatRequest.of("hi", max_tokens=5, seed=0)
    body = req.model_dump(mode="json")
    for key in ("top_k", "repetition_penalty", "chat_template_kwargs"):
        assert body.pop(key) is None
    old = hashlib.sha256(json.dumps({"model": "m", **body}, sort_keys=True, ensure_ascii=False,
                                    separators=(",", ":")).encode()).hexdigest()
    assert req.cache_key("m") == old  # caches written before these fields still answer
    assert ChatRequest.of("hi", max_tokens=5, seed=0, top_k=20).cache_key("m") != old
    with pytest.raises(ConfigError, match="top_k must be at least 1"):
        ChatRequest.of("hi", top_k=0)
    with pytest.raises(ConfigError, match="repetition_penalty"):
        ChatRequest.of("hi", repetition_penalty=3)


def test_paper_profile_reaches_the_server_with_step_budgets():
    with FakeOpenAIServer(reply=lambda body: Scripted()(ChatRequest.of(body["messages"]))) as srv:
        lm = apply_profile(LM(OpenAIChatLLM("fake-model", srv.url)), "paper")
        pager = Pager(lm, ListRetriever(), answer_step="official")
        asyncio.run(pager.answer(QUESTION))
        bodies = [r["body"] for r in srv.requests]
    first = bodies[0]
    assert first["temperature"] == 0.7 and first["top_p"] == 0.8 and first["seed"] == 66
    assert first["top_k"] == 20 and first["repetition_penalty"] == 1.02
    assert first["repeat_penalty"] == 1.02  # llama.cpp servers' name for it
    assert first["chat_template_kwargs"] == {"enable_thinking": False}
    budgets = [b["max_tokens"] for b in bodies]
    assert budgets[0] == 4096  # the outline
    assert budgets[-1] == 1024  # the answer
    assert 96 in budgets  # sub-queries keep their own budget
    # the deterministic profile sends none of them
    with FakeOpenAIServer(reply=lambda body: "<answer>x</answer>") as srv:
        lm = apply_profile(LM(OpenAIChatLLM("fake-model", srv.url)), "deterministic")
        asyncio.run(lm.chat(lm.request("hi")))
        body = srv.requests[0]["body"]
    assert not {"top_k", "repetition_penalty", "repeat_penalty", "chat_template_kwargs"} & set(
        body)
    assert body["temperature"] == 0.0
    with pytest.raises(ConfigError, match="unknown generation profile 'creative'"):
        get_profile("creative")


def test_a_server_refusing_the_extra_parameters_says_what_to_do():
    with FakeOpenAIServer(reply=lambda body: "x") as srv:
        srv.script(("status", 400, {}, "Unrecognized request argument supplied: top_k"))
        lm = apply_profile(LM(OpenAIChatLLM("fake-model", srv.url)), "paper")
        with pytest.raises(LLMBadRequestError, match="--profile deterministic") as exc:
            asyncio.run(lm.chat(lm.request("hi")))
    assert "top_k" in str(exc.value)


def test_official_answer_step_without_a_tag_is_no_answer_and_never_reasked():
    calls = []

    def reply(request):
        text = request.messages[-1].content
        if "following the knowledge on the page" in text:
            calls.append(len(request.messages))
            return "The answer is mixed martial arts."  # no tag
        return Scripted()(request)

    pager = Pager(LM(FakeLLM(respond=reply)), ListRetriever(), answer_step="official")
    answer = asyncio.run(pager.answer(QUESTION))
    assert answer.answer == "" and calls == [1]  # one call, no repair re-ask
    assert any("no <answer> tag: no answer" in f for f in answer.trace.fallbacks)
    # with the tag: its text as it is (no span reduction)
    pager = Pager(LM(FakeLLM(respond=lambda r: Scripted(
        answer="<answer>Both are mixed martial artists.</answer>")(r)
        if "following the knowledge" not in r.messages[-1].content
        else "So: <answer>Both are mixed martial artists.</answer>")), ListRetriever(),
        answer_step="official")
    assert asyncio.run(pager.answer(QUESTION)).answer == "Both are mixed martial artists."
    # the default keeps quaderno's answer step (span, re-ask, first-line fallback)
    assert get_spec("pager").validate({}).answer_step == "quaderno"
    assert profile_options("paper", get_spec("pager").options.model_fields, {}) == {
        "answer_step": "official"}
    assert profile_options("paper", get_spec("vanilla-rag").options.model_fields, {}) == {}
    assert profile_options("paper", get_spec("pager").options.model_fields,
                           {"answer_step": "quaderno"}) == {"answer_step": "quaderno"}


def test_eval_with_the_paper_profile_records_it(tmp_path):
    from quaderno.cli.main import app

    with FakeOpenAIServer(reply=lambda body: "<answer>Chief of Protocol</answer>") as srv:
        res = CliRunner().invoke(app, [
            "eval", "--dataset", str(FIXTURE), "--format", "hotpot-ircot", "--limit", "2",
            "-m", "vanilla-llm", "--llm", "openai", "--model", "fake-model", "--base-url", srv.url,
            "--out", str(tmp_path / "runs"), "--home", str(tmp_path / "home"),
            "--profile", "paper", "--seed", "7"])
        assert res.exit_code == 0, res.output
        assert srv.requests[0]["body"]["top_k"] == 20
        assert srv.requests[0]["body"]["seed"] == 7  # an explicit flag wins over the profile
    config = json.loads(next((tmp_path / "runs").iterdir()).joinpath("config.json").read_text())
    gen = config["generation"]
    assert gen["profile"] == "paper" and gen["top_k"] == 20 and gen["temperature"] == 0.7
    assert gen["seed"] == 7 and gen["step_max_tokens"]["pager.outline"] == 4096
    res = CliRunner().invoke(app, ["eval", "--dataset", str(FIXTURE), "--format",
                                   "hotpot-ircot", "-m", "vanilla-llm", "--profile", "hot"])
    assert res.exit_code != 0 and "unknown generation profile 'hot'" in res.output


def test_the_paper_profile_gives_the_ablations_the_official_answer_step_too():
    from quaderno.methods.registry import make_method

    for name in ("pager-parallel", "pager-no-outline", "pager-no-iter"):
        options = profile_options("paper", get_spec(name).options.model_fields, {"k": 2})
        assert options["answer_step"] == "official", name
        method = make_method(name, LM(FakeLLM(respond=lambda r: Scripted()(r)
                                              if "following the knowledge" not in
                                              r.messages[-1].content else "no tag here")),
                             ListRetriever(), options)
        answer = asyncio.run(method.answer(QUESTION))
        assert answer.answer == "", name  # the official rule: no tag, no answer
