"""OpenAIChatLLM against a real HTTP server run in-process (no SDK mocks)."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from pydantic import BaseModel, Field

from quaderno.errors import (ConfigError, LLMAuthError, LLMBadRequestError, LLMConnectionError,
                             LLMContextLengthError, LLMModelNotFoundError, LLMRateLimitError,
                             LLMServerError, LLMTimeoutError, StepError)
from quaderno.llm.cache import SQLiteCache
from quaderno.llm.lm import LM
from quaderno.llm.openai_http import OpenAIChatLLM
from quaderno.llm.steps import Step
from quaderno.llm.testing import FakeOpenAIServer
from quaderno.llm.trace import Trace
from quaderno.llm.types import ChatRequest


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def client(server, **kw) -> OpenAIChatLLM:
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("timeout", 2.0)
    return OpenAIChatLLM("fake-model", server.url, **kw)


def ask(llm, prompt="hello world", **params):
    return asyncio.run(llm.achat(ChatRequest.of(prompt, **params)))


class Answer(BaseModel):
    answer: str = Field(min_length=1, description="a short answer span")
    confidence: float


def test_success_with_usage_and_body(server):
    r = ask(client(server), "say something", max_tokens=7, temperature=0.3, top_p=0.9,
            stop=("\n",), seed=66)
    assert r.text == "say something" and r.retries == 0
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (2, 2)
    body = server.requests[0]["body"]
    assert body["model"] == "fake-model" and body["max_tokens"] == 7
    assert body["temperature"] == 0.3 and body["top_p"] == 0.9
    assert body["stop"] == ["\n"] and body["seed"] == 66
    assert "response_format" not in body


def test_json_schema_request_body(server):
    schema = Answer.model_json_schema()
    ask(client(server), json_schema=schema, schema_name="answer")
    fmt = server.requests[0]["body"]["response_format"]
    # Answer is an open object: not eligible for OpenAI's strict mode
    assert fmt == {"type": "json_schema",
                   "json_schema": {"name": "answer", "schema": schema, "strict": False}}
    closed = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
              "additionalProperties": False}
    ask(client(server), json_schema=closed)
    assert server.requests[1]["body"]["response_format"]["json_schema"]["strict"] is True
    ask(client(server, structured="none"), json_schema=schema)
    assert "response_format" not in server.requests[2]["body"]


def test_extra_body_for_qwen3_thinking_switch(server):
    ask(client(server, extra_body={"chat_template_kwargs": {"enable_thinking": False}}))
    assert server.requests[0]["body"]["chat_template_kwargs"] == {"enable_thinking": False}


def test_429_honours_retry_after(server):
    server.script(("status", 429, {"Retry-After": "0.4"}))
    t0 = time.perf_counter()
    r = ask(client(server))
    assert time.perf_counter() - t0 >= 0.4
    assert r.retries == 1 and len(server.requests) == 2


def test_429_forever_is_a_rate_limit_error(server):
    server.script(*[("status", 429, {"Retry-After": "0"})] * 3)
    with pytest.raises(LLMRateLimitError, match="rate-limiting"):
        ask(client(server, max_retries=2))
    assert len(server.requests) == 3


def test_500_then_success(server):
    server.script(("status", 500, {}), ("status", 503, {}))
    assert ask(client(server)).retries == 2


def test_500_forever(server):
    server.script(*[("status", 500, {})] * 2)
    with pytest.raises(LLMServerError, match="500"):
        ask(client(server, max_retries=1))


def test_timeout_is_retried_then_typed(server):
    server.script(("timeout", 1.0))
    assert ask(client(server, timeout=0.3)).retries == 1
    server.script(("timeout", 1.0), ("timeout", 1.0))
    with pytest.raises(LLMTimeoutError, match="did not answer within"):
        ask(client(server, timeout=0.3, max_retries=1))


def test_connection_reset_is_retried(server):
    server.script("reset", "reset")
    r = ask(client(server))
    assert r.retries == 2 and r.text == "hello world"


def test_unreachable_server():
    llm = OpenAIChatLLM("m", "http://127.0.0.1:9/v1", max_retries=1, backoff_base=0.01)
    with pytest.raises(LLMConnectionError, match="cannot reach the LLM server at http://127.0.0.1:9/v1"):
        ask(llm)


def test_wrong_model_name(server):
    with pytest.raises(LLMModelNotFoundError, match="does not serve model 'nope'"):
        ask(OpenAIChatLLM("nope", server.url))


def test_missing_api_key_names_the_variable(server, monkeypatch):
    monkeypatch.delenv("MY_KEY", raising=False)
    server.script(("status", 401, {}))
    with pytest.raises(LLMAuthError, match=r"\$MY_KEY, which is NOT set"):
        ask(client(server, api_key_env="MY_KEY"))


def test_context_too_long_and_other_400s(server):
    server.script(("status", 400, {}, "This model's maximum context length is 4096 tokens. "
                                      "However, you requested 9000 tokens"))
    with pytest.raises(LLMContextLengthError, match="does not fit model 'fake-model'.*4096"):
        ask(client(server))
    server.script(("status", 400, {}, "temperature must be <= 2"))
    with pytest.raises(LLMBadRequestError, match="rejected the request.*temperature"):
        ask(client(server))
    assert len(server.requests) == 2  # a 400 is not retried


def test_body_that_is_not_a_completion(server):
    server.script(("body", "<html>proxy error</html>"))
    with pytest.raises(LLMServerError, match="not a chat completion"):
        ask(client(server))


def test_logprobs_are_returned(server):
    r = ask(client(server), "two words", logprobs=True)
    assert server.requests[0]["body"]["logprobs"] is True
    # llama-cpp-python's server sends none without top_logprobs
    assert server.requests[0]["body"]["top_logprobs"] == 1
    assert [t.token for t in r.logprobs] == ["two", "words"]


def test_think_blocks_are_stripped(server):
    server.reply = "<think>hmm, let me see</think>\nParis"
    assert ask(client(server)).text == "Paris"
    # a block cut off by the token limit stays: the caller sees the truncation
    server.reply = "<think>still thinking when max_tokens ran ou"
    assert ask(client(server)).text == server.reply


def test_one_think_stripper_for_backends_and_parsers():
    from quaderno.llm.parsing import extract_tag, strip_thinking

    text = "<THINK>a</THINK>\n\nB <think>c</think> D <think>cut"
    assert strip_thinking(text) == "B D "
    assert strip_thinking(text, unclosed=False) == "B D <think>cut"
    assert extract_tag("<think>no <answer>x</answer></think><answer>Paris</answer>",
                       "answer") == "Paris"


def test_concurrency_limit_is_honoured():
    with FakeOpenAIServer(latency_s=0.15) as server:
        llm = OpenAIChatLLM("fake-model", server.url, max_concurrency=3)

        async def many():
            return await asyncio.gather(*[llm.achat(ChatRequest.of(f"q{i}")) for i in range(12)])

        t0 = time.perf_counter()
        results = asyncio.run(many())
        elapsed = time.perf_counter() - t0
    assert [r.text for r in results] == [f"q{i}" for i in range(12)]
    assert server.max_inflight == 3
    assert elapsed >= 4 * 0.15  # 12 requests, 3 at a time


def test_malformed_json_is_repaired_then_typed_error(server):
    replies = iter(['Sure! {"answer": "Paris", "confidence": 0.9', "no json at all", "still none"])
    server.reply = lambda body: next(replies)
    step = Step(name="answer", instruction="Q: {question}", inputs=("question",), output=Answer)
    lm = LM(client(server))
    result = asyncio.run(step.run(lm, question="capital of France?"))
    assert result.value == Answer(answer="Paris", confidence=0.9) and not result.repaired
    trace = Trace()
    with pytest.raises(StepError, match="step 'answer': no valid output after a repair re-ask"):
        asyncio.run(step.run(lm, question="again?", trace=trace))
    repair_prompt = server.requests[-1]["body"]["messages"][-1]["content"]
    assert "could not be used: no JSON object found" in repair_prompt
    assert server.requests[-1]["body"]["messages"][-2] == {"role": "assistant",
                                                           "content": "no json at all"}
    assert len(trace.calls) == 2 and len(trace.fallbacks) == 2


def test_cache_hit_on_second_call_and_key_never_stored(server, tmp_path, monkeypatch, caplog):
    secret = "sk-very-secret-value-123"
    monkeypatch.setenv("TEST_KEY", secret)
    cache = SQLiteCache(tmp_path / "llm.sqlite")
    lm = LM(client(server, api_key_env="TEST_KEY"), cache=cache)
    caplog.set_level(logging.DEBUG)
    trace = Trace()
    req = lm.request("cache me")
    first = asyncio.run(lm.chat(req, trace=trace))
    second = asyncio.run(lm.chat(req, trace=trace))
    assert len(server.requests) == 1
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {secret}"
    assert not first.cached and second.cached and second.text == first.text
    assert [c.cached for c in trace.calls] == [False, True]
    assert cache.stats() == {"entries": 1, "calls": 2, "cache_hits": 1}
    asyncio.run(lm.chat(req, use_cache=False))
    assert len(server.requests) == 2
    # the key is in no cache key, row, log line or trace; the base URL neither
    raw = (tmp_path / "llm.sqlite").read_bytes()
    for wal in tmp_path.glob("llm.sqlite*"):
        raw += wal.read_bytes()
    assert secret.encode() not in raw and server.url.encode() not in raw
    assert secret not in caplog.text
    assert secret not in trace.model_dump_json()
    assert req.cache_key(lm.model_id) == req.cache_key("openai:fake-model")
    assert secret not in repr(lm.backend)


# -- scoring a given reply through vLLM's prompt_logprobs ---------------------------------
def test_vllm_prompt_logprobs_score_the_reply_tokens():
    def logprob(prompt, token):  # the reply is likely when the prompt says it
        return -0.2 if token.strip() in prompt.split("<|assistant|>")[0] else -4.0

    with FakeOpenAIServer(token_logprob=logprob) as srv:
        llm = client(srv, scoring="vllm", extra_body={"chat_template_kwargs": {"x": 1}})
        lm = LM(llm)
        assert lm.supports_scoring
        scored = asyncio.run(lm.score("Hamlet was written by William Shakespeare. Who wrote "
                                      "Hamlet?", "William Shakespeare"))
        assert [(t.token, t.logprob) for t in scored] == [("William", -0.2),
                                                          (" Shakespeare", -0.2)]
        body = srv.requests[-1]["body"]
        assert body["messages"][-1] == {"role": "assistant", "content": "William Shakespeare"}
        assert (body["prompt_logprobs"], body["continue_final_message"],
                body["add_generation_prompt"], body["max_tokens"]) == (0, True, False, 1)
        assert body["chat_template_kwargs"] == {"x": 1}
        unknown = asyncio.run(llm.ascore(ChatRequest.of("Who wrote it?").messages, "Marlowe"))
        assert [t.logprob for t in unknown.logprobs] == [-4.0]
        # <|user|> Who wrote it? <|assistant|> | Marlowe
        assert (unknown.usage.prompt_tokens, unknown.usage.completion_tokens) == (5, 1)


def test_scoring_errors_are_clear(server):
    with pytest.raises(ConfigError, match="scoring must be 'none' or 'vllm', got 'yes'"):
        client(server, scoring="yes")
    plain = client(server)
    assert not LM(plain).supports_scoring
    with pytest.raises(ConfigError, match="needs a vLLM server"):
        asyncio.run(plain.ascore(ChatRequest.of("q").messages, "a"))
    vllm = client(server, scoring="vllm", max_retries=0)
    server.script(("body", '{"choices": [{"message": {"content": "x"}}]}'))
    with pytest.raises(LLMServerError, match="no usable prompt_logprobs"):
        asyncio.run(vllm.ascore(ChatRequest.of("q").messages, "a"))
    # a server that ignores continue_final_message appends a generation prompt: refused
    no_continue = client(server, scoring="vllm", extra_body={"continue_final_message": False})
    with pytest.raises(LLMServerError, match="does not end with the reply"):
        asyncio.run(no_continue.ascore(ChatRequest.of("q").messages, "an answer"))
