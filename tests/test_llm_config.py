from __future__ import annotations

import threading

import pytest

from quaderno.errors import ConfigError
from quaderno.llm.cache import SQLiteCache
from quaderno.llm.config import resolve
from quaderno.llm.types import ChatRequest, ChatResponse, Usage


def test_precedence_flag_env_file_default(tmp_path):
    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text('[llm]\nbackend = "openai"\nmodel = "from-file"\nmax_concurrency = 16\n'
                        'base_url = "http://file:1/v1"\n')
    assert resolve({}, env={}).backend == "llama-cpp"  # default
    c = resolve({}, env={}, config_path=cfg_file)
    assert (c.model, c.max_concurrency, c.base_url) == ("from-file", 16, "http://file:1/v1")
    c = resolve({}, env={"QUADERNO_MODEL": "from-env"}, config_path=cfg_file)
    assert c.model == "from-env" and c.max_concurrency == 16
    c = resolve({"model": "from-flag", "base_url": None}, env={"QUADERNO_MODEL": "from-env"},
                config_path=cfg_file)
    assert c.model == "from-flag" and c.base_url == "http://file:1/v1"


def test_invalid_configuration_is_named(tmp_path):
    with pytest.raises(ConfigError, match="backend"):
        resolve({"backend": "gpt"}, env={})
    with pytest.raises(ConfigError, match="needs --model"):
        resolve({"backend": "openai"}, env={})
    bad = tmp_path / "c.toml"
    bad.write_text("[llm\nmodel=")
    with pytest.raises(ConfigError, match="not valid TOML"):
        resolve({}, env={}, config_path=bad)
    extra = tmp_path / "e.toml"
    extra.write_text('[llm]\napi_key = "sk-should-not-be-here"\n')
    with pytest.raises(ConfigError, match="api_key"):
        resolve({}, env={}, config_path=extra)


def test_request_validation_names_the_parameter():
    with pytest.raises(ConfigError, match="temperature must be in"):
        ChatRequest.of("x", temperature=5)
    with pytest.raises(ConfigError, match="max_tokens must be positive"):
        ChatRequest.of("x", max_tokens=0)


def test_cache_key_depends_on_everything_that_changes_the_reply():
    base = ChatRequest.of("hi", max_tokens=5)
    keys = {base.cache_key("m"), base.cache_key("other-model"),
            ChatRequest.of("hi", max_tokens=6).cache_key("m"),
            ChatRequest.of("hi", max_tokens=5, seed=1).cache_key("m"),
            ChatRequest.of("hi", max_tokens=5, json_schema={"type": "object"}).cache_key("m"),
            ChatRequest.of("hi!", max_tokens=5).cache_key("m")}
    assert len(keys) == 6
    assert ChatRequest.of("hi", max_tokens=5).cache_key("m") == base.cache_key("m")


def test_cache_is_safe_under_concurrent_writers(tmp_path):
    cache = SQLiteCache(tmp_path / "c.sqlite")
    errors = []

    def writer(n):
        try:
            for i in range(50):
                key = f"{n}-{i}"
                resp = ChatResponse(text=key, model="m", usage=Usage(prompt_tokens=i))
                cache.put(key, resp)
                cache.log_call(key, resp)
                assert cache.get(key).text == key
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert cache.stats() == {"entries": 400, "calls": 400, "cache_hits": 0}
    # a second process/connection sees the same rows
    assert SQLiteCache(tmp_path / "c.sqlite").get("7-49").usage.prompt_tokens == 49


def test_timeout_from_the_environment_and_a_bad_one_is_named():
    assert resolve({}, env={"QUADERNO_TIMEOUT": "600"}).timeout == 600.0
    assert resolve({}, env={}).timeout == 120.0
    with pytest.raises(ConfigError, match="timeout"):
        resolve({}, env={"QUADERNO_TIMEOUT": "soon"})
