"""Structured output against servers that differ: json_schema → json_object → none, once per
backend, recorded in the response, the trace, the call log and `quaderno llm info`."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from quaderno.cli.main import app
from quaderno.errors import ConfigError, LLMBadRequestError, LLMContextLengthError
from quaderno.llm.cache import SQLiteCache
from quaderno.llm.calllog import CallLog
from quaderno.llm.config import LLMConfig, make_backend, resolve
from quaderno.llm.lm import LM
from quaderno.llm.openai_http import OpenAIChatLLM
from quaderno.llm.steps import Step
from quaderno.llm.testing import FakeOpenAIServer
from quaderno.llm.trace import Trace
from quaderno.llm.types import ChatRequest

runner = CliRunner()


class Capital(BaseModel):
    city: str
    country: str


STEP = Step(name="capital", instruction="Capital of {country}?", inputs=("country",),
            output=Capital)
SCHEMA = Capital.model_json_schema()


def reply(body) -> str:
    country = body["messages"][-1]["content"].split("Capital of ")[-1].split("?")[0]
    return json.dumps({"city": f"capital of {country}", "country": country})


def client(server, **kw) -> OpenAIChatLLM:
    kw.setdefault("backoff_base", 0.2)
    kw.setdefault("timeout", 5.0)
    return OpenAIChatLLM("fake-model", server.url, **kw)


def ask(llm, prompt="Capital of France?", **params):
    return asyncio.run(llm.achat(ChatRequest.of(prompt, json_schema=SCHEMA, schema_name="capital",
                                                **params)))


def formats(server) -> list[str | None]:
    return [(r["body"].get("response_format") or {}).get("type") for r in server.requests]


def test_a_server_with_json_schema_keeps_it():
    with FakeOpenAIServer(reply=reply) as server:
        llm = client(server)
        r = ask(llm)
        assert (r.structured, r.constrained, r.downgrade) == ("json_schema", True, None)
        assert formats(server) == ["json_schema"] and llm.structured_mode == "json_schema"
        plain = asyncio.run(llm.achat(ChatRequest.of("no schema")))
        assert (plain.structured, plain.constrained) == (None, False)
        assert formats(server)[-1] is None


def test_llama_cpp_python_downgrades_to_json_object_at_once(caplog):
    caplog.set_level(logging.WARNING, logger="quaderno.llm.openai_http")
    with FakeOpenAIServer(reply=reply, structured="llama-cpp-python") as server:
        llm = client(server, backoff_base=5.0)  # a backoff would show in the elapsed time
        t0 = time.perf_counter()
        r = ask(llm)
        assert time.perf_counter() - t0 < 2.0  # the refusal was not retried with backoff
        assert formats(server) == ["json_schema", "json_object"]
        assert (r.structured, r.constrained, r.retries) == ("json_object", False, 0)
        assert json.loads(r.text)["country"] == "France"
        assert "json_schema -> json_object" in r.downgrade and "500" in r.downgrade
        assert "response_format" in llm.downgraded_because
        # the body is the form llama-cpp-python accepts: json_object with the schema
        assert server.requests[1]["body"]["response_format"] == {"type": "json_object",
                                                                 "schema": SCHEMA}
        again = ask(llm, "Capital of Peru?")
        assert formats(server)[2:] == ["json_object"] and again.downgrade is None
        assert llm.structured_mode == "json_object" and not llm.supports_schema
    warnings = [rec for rec in caplog.records if "downgraded" in rec.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING


@pytest.mark.parametrize("refusing", ["none", "none-422"])
def test_a_server_refusing_both_gets_the_schema_in_the_prompt_only(refusing):
    with FakeOpenAIServer(reply=lambda body: "Sure! ```json\n" + reply(body) + "\n```",
                          structured=refusing) as server:
        lm = LM(client(server))
        trace = Trace()
        result = asyncio.run(STEP.run(lm, country="Chile", trace=trace))
        assert result.value == Capital(city="capital of Chile", country="Chile")
        assert formats(server) == ["json_schema", "json_object", None]
        assert lm.backend.structured_mode == "none"
        assert trace.calls[0].constrained is False
        assert any("json_schema -> none" in f for f in trace.fallbacks)
        asyncio.run(STEP.run(lm, country="Peru", trace=trace))
        assert formats(server)[3:] == [None]  # later calls go straight to the prompt
        assert sum("downgraded" in f for f in trace.fallbacks) == 1


def test_downgrade_once_under_concurrency_recorded_in_trace_and_log(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="quaderno.llm.openai_http")
    with FakeOpenAIServer(reply=reply, structured="llama-cpp-python", latency_s=0.05) as server:
        log = CallLog(tmp_path / "llm.sqlite")
        lm = LM(client(server), log=log)
        trace = Trace(label="eight at once")

        async def eight():
            return await asyncio.gather(*[STEP.run(lm, country=f"c{i}", trace=trace)
                                          for i in range(8)])

        results = asyncio.run(eight())
        assert [r.value.country for r in results] == [f"c{i}" for i in range(8)]
        assert formats(server).count("json_schema") == 8  # all were in flight together
        assert formats(server).count("json_object") == 8
        downgrades = [f for f in trace.fallbacks if "downgraded" in f]
        assert len(downgrades) == 1 and downgrades[0].startswith("capital: structured output")
        rows = log.latest(20)
        assert len(rows) == 8 and all(r.structured == "json_object" for r in rows)
        assert sum(r.note is not None for r in rows) == 1
        assert all(r.step == "capital" and r.label == "eight at once" for r in rows)
        asyncio.run(STEP.run(lm, country="later", trace=trace))
        assert formats(server)[-1] == "json_object" and len(server.requests) == 17
    assert sum("downgraded" in rec.getMessage() for rec in caplog.records) == 1


async def sixty(llm):
    return await asyncio.gather(*[llm.achat(ChatRequest.of(f"Capital of c{i}?",
                                                           json_schema=SCHEMA))
                                  for i in range(60)])


def test_injected_transient_500s_never_downgrade():
    with FakeOpenAIServer(reply=reply) as clean_server:
        clean = [r.text for r in asyncio.run(sixty(client(clean_server)))]
    with FakeOpenAIServer(reply=reply, fail_rate=0.2, seed=3) as server:
        llm = client(server, backoff_base=0.001, max_retries=8)
        results = asyncio.run(sixty(llm))
        assert sum(r.retries for r in results) > 5  # faults were injected and retried
        assert [r.text for r in results] == clean
        assert all(r.structured == "json_schema" and r.downgrade is None for r in results)
        assert set(formats(server)) == {"json_schema"}
        assert llm.structured_mode == "json_schema" and llm.downgraded_because is None


def test_a_500_naming_nothing_is_retried_as_a_server_error():
    with FakeOpenAIServer(reply=reply) as server:
        server.script(("status", 500, {}, "CUDA error: out of memory"))
        r = ask(client(server, backoff_base=0.01))
        assert (r.retries, r.structured, r.downgrade) == (1, "json_schema", None)
        assert formats(server) == ["json_schema", "json_schema"]
        # a 500 to a request without response_format is never taken for a refusal
        server.script(("status", 500, {}, "response_format? json_schema?"))
        plain = asyncio.run(client(server, backoff_base=0.01).achat(ChatRequest.of("x")))
        assert plain.retries == 1 and formats(server)[2:] == [None, None]


def test_a_server_that_500s_every_structured_attempt_without_saying_why():
    with FakeOpenAIServer(reply=reply) as server:
        server.script(*[("status", 500, {}, "Internal Server Error")] * 3)
        llm = client(server, backoff_base=0.01, max_retries=2)
        r = ask(llm)  # all retries spent on json_schema, then the next mode works
        assert formats(server) == ["json_schema"] * 3 + ["json_object"]
        assert (r.structured, r.retries) == ("json_object", 2) and "500" in r.downgrade


def test_a_bad_request_is_not_a_refusal_and_leaves_the_mode():
    with FakeOpenAIServer(reply=reply) as server:
        server.script(*[("status", 400, {}, "temperature must be <= 2")] * 3)
        llm = client(server)
        with pytest.raises(LLMBadRequestError, match="temperature must be <= 2"):
            ask(llm)
        assert formats(server) == ["json_schema", "json_object", None]
        assert llm.structured_mode == "json_schema" and llm.downgraded_because is None
        server.script(("status", 400, {}, "This model's maximum context length is 4096 tokens"))
        with pytest.raises(LLMContextLengthError):
            ask(llm)
        assert len(server.requests) == 4 and llm.structured_mode == "json_schema"


def test_a_cached_reply_does_not_repeat_the_downgrade(tmp_path):
    with FakeOpenAIServer(reply=reply, structured="llama-cpp-python") as server:
        lm = LM(client(server), cache=SQLiteCache(tmp_path / "c.sqlite"))
        trace = Trace()
        first = asyncio.run(lm.chat(lm.request("Capital of Peru?", json_schema=SCHEMA),
                                    trace=trace))
        lm2 = LM(client(server), cache=SQLiteCache(tmp_path / "c.sqlite"))  # another process
        hit = asyncio.run(lm2.chat(lm2.request("Capital of Peru?", json_schema=SCHEMA),
                                   trace=trace))
        assert first.downgrade and hit.cached and hit.downgrade is None
        assert hit.structured == "json_object"  # how the cached reply was produced
        assert sum("downgraded" in f for f in trace.fallbacks) == 1


def test_starting_mode_is_configurable():
    assert resolve({"structured": "json_object"}, env={}).structured == "json_object"
    with pytest.raises(ConfigError, match="structured"):
        resolve({"structured": "grammar"}, env={})
    with pytest.raises(ConfigError, match="structured must be one of json_schema, json_object, "
                                          "none; got 'yes'"):
        OpenAIChatLLM("m", structured="yes")
    with FakeOpenAIServer(reply=reply, structured="llama-cpp-python") as server:
        llm = make_backend(LLMConfig(backend="openai", model="fake-model", base_url=server.url,
                                     structured="json_object"))
        r = ask(llm)
        assert formats(server) == ["json_object"] and r.downgrade is None
        assert r.structured == "json_object"
    with pytest.raises(ConfigError, match="llama-cpp-python"):
        FakeOpenAIServer(structured="vllm")


def info(home, server, *args):
    res = runner.invoke(app, ["llm", "info", "--json", "--llm", "openai", "--model", "fake-model",
                              "--base-url", server.url, "--home", str(home), *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


@pytest.mark.parametrize(("refusing", "works"), [("any", "json_schema"),
                                                 ("llama-cpp-python", "json_object"),
                                                 ("none", "none")])
def test_llm_info_probe_reports_the_mode_that_works(tmp_path, refusing, works):
    home = tmp_path / "home"
    with FakeOpenAIServer(reply='{"ok": true}', structured=refusing) as server:
        data = info(home, server)
        assert data["structured"] == "json_schema" and "structured_probe" not in data
        assert server.requests == []  # without --probe, nothing is sent
        data = info(home, server, "--probe")
        assert data["structured_probe"] == works
        assert (data["structured_probe_downgrade"] is None) == (works == "json_schema")
        after = info(home, server)  # the downgrade stays on record, from the call log
        if works == "json_schema":
            assert after["structured_last_downgrade"] is None
        else:
            assert f"json_schema -> {works}" in after["structured_last_downgrade"]
        (row,) = CallLog(home / "cache" / "llm.sqlite").latest()
        assert (row.step, row.structured) == ("llm.probe", works)
