"""The call log: written for every call (cached, fresh, failed; cache on or off), named
append-only migrations, an old cache file migrated without losing rows, `quaderno llm log`."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading

import pytest
from typer.testing import CliRunner

from quaderno.cli.main import app
from quaderno.errors import LLMAuthError, LLMServerError
from quaderno.llm.cache import SQLiteCache
from quaderno.llm.calllog import MIGRATIONS, CallLog
from quaderno.llm.config import LLMConfig, make_lm
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.openai_http import OpenAIChatLLM
from quaderno.llm.testing import FakeOpenAIServer
from quaderno.llm.trace import Trace
from quaderno.llm.types import ChatRequest, ChatResponse, Usage

runner = CliRunner()

# the schema of quaderno's cache file before the call log was separate, verbatim
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    retries INTEGER NOT NULL,
    cached INTEGER NOT NULL
);
"""


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def old_cache_file(path, lm_model_id: str, prompts: list[str]) -> list[str]:
    """A cache file as the old code wrote it: one response and two calls per prompt (a
    miss, then a hit). Returns the keys."""
    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA)
    keys = []
    for i, prompt in enumerate(prompts):
        key = ChatRequest.of(prompt, temperature=0.0, top_p=1.0, seed=0).cache_key(lm_model_id)
        old = {"text": f"old reply {i}", "model": "fake-model",
               "usage": {"prompt_tokens": 3, "completion_tokens": 2}, "finish_reason": "stop",
               "logprobs": None, "latency_s": 0.5, "retries": 1, "cached": False,
               "constrained": False}  # no `structured`/`downgrade`: those fields are new
        conn.execute("INSERT INTO responses VALUES (?, ?, ?, ?)",
                     (key, "fake-model", json.dumps(old), 1000.0 + i))
        conn.execute("INSERT INTO calls (ts, model, key, prompt_tokens, completion_tokens, "
                     "latency_s, retries, cached) VALUES (?, ?, ?, 3, 2, 0.5, 1, 0)",
                     (1000.0 + i, "fake-model", key))
        conn.execute("INSERT INTO calls (ts, model, key, prompt_tokens, completion_tokens, "
                     "latency_s, retries, cached) VALUES (?, ?, ?, 3, 2, 0.0, 0, 1)",
                     (1000.5 + i, "fake-model", key))
        keys.append(key)
    conn.commit()
    conn.close()
    return keys


def test_an_old_cache_file_migrates_without_losing_rows(tmp_path, server):
    path = tmp_path / "cache" / "llm.sqlite"
    path.parent.mkdir()
    keys = old_cache_file(path, "openai:fake-model", ["first", "second", "third"])
    cfg = LLMConfig(backend="openai", model="fake-model", base_url=server.url)
    lm = make_lm(cfg, cache_path=path)
    # old responses still answer: no request reaches the server
    reply = asyncio.run(lm.chat(lm.request("second"), step="s", trace=Trace(label="q7")))
    assert reply.cached and reply.text == "old reply 1" and server.requests == []
    assert reply.structured is None and reply.usage == Usage(prompt_tokens=3, completion_tokens=2)
    fresh = asyncio.run(lm.chat(lm.request("fourth")))
    assert not fresh.cached and len(server.requests) == 1
    rows = CallLog(path).latest(100)
    assert len(rows) == 6 + 2
    old = rows[:6]  # every old row, in order, with its values; the new columns null
    assert [r.key for r in old] == [k for k in keys for _ in (0, 1)]
    assert [r.cached for r in old] == [False, True] * 3
    assert [(r.ts, r.retries, r.latency_s) for r in old[:2]] == [(1000.0, 1, 0.5),
                                                                  (1000.5, 0, 0.0)]
    assert all(r.step is None and r.label is None and r.error is None and r.span_id is None
               and r.structured is None for r in old)
    hit, new = rows[6:]
    assert (hit.key, hit.cached, hit.step, hit.label) == (keys[1], True, "s", "q7")
    assert (new.cached, new.model, new.completion_tokens) == (False, "openai:fake-model", 1)
    assert SQLiteCache(path).stats() == {"entries": 4, "calls": 8, "cache_hits": 4}


def test_migrations_are_named_idempotent_and_append_only(tmp_path):
    path = tmp_path / "log.sqlite"
    log = CallLog(path)
    names = [name for name, _ in MIGRATIONS]
    assert log.applied() == names
    assert CallLog(path).migrate(MIGRATIONS) == []  # opening again applies nothing
    assert CallLog(path).applied() == names
    log.append(ts=1.0, model="m", key="k", step="a")
    # a later version appends a migration: only it runs, and the rows stay
    added = []

    def m003(conn):
        added.append(1)
        conn.execute("ALTER TABLE calls ADD COLUMN cost_usd REAL")

    newer = [*MIGRATIONS, ("0003_calls_cost", m003)]
    assert CallLog(path, migrations=newer).applied() == [*names, "0003_calls_cost"]
    assert CallLog(path, migrations=newer).migrate(newer) == [] and added == [1]
    assert [r.step for r in CallLog(path).latest()] == ["a"]


def test_a_failing_migration_applies_nothing(tmp_path):
    path = tmp_path / "log.sqlite"
    CallLog(path)

    def broken(conn):
        conn.execute("ALTER TABLE calls ADD COLUMN half_done TEXT")
        raise sqlite3.OperationalError("disk on fire")

    with pytest.raises(sqlite3.OperationalError, match="disk on fire"):
        CallLog(path, migrations=[*MIGRATIONS, ("0003_broken", broken)])
    columns = {r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(calls)")}
    assert "half_done" not in columns and "0003_broken" not in CallLog(path).applied()


def test_concurrent_openers_and_writers(tmp_path):
    path = tmp_path / "log.sqlite"
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        try:
            barrier.wait()
            log = CallLog(path)  # eight first openings at once: migrations run once
            for i in range(25):
                log.append(ts=float(i), model="m", key=f"{n}-{i}", cached=i % 5 == 0)
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    log = CallLog(path)
    assert log.applied() == [name for name, _ in MIGRATIONS]
    assert log.stats() == {"calls": 200, "cache_hits": 40}


def test_every_call_is_logged_cached_fresh_and_failed(tmp_path):
    fake = FakeLLM(echo=True)
    log = CallLog(tmp_path / "log.sqlite")
    lm = LM(fake, cache=SQLiteCache(tmp_path / "cache.sqlite"), log=log)
    trace = Trace(label="question 3")
    asyncio.run(lm.chat(lm.request("hello there"), trace=trace, step="outline"))
    asyncio.run(lm.chat(lm.request("hello there"), trace=trace, step="outline"))
    fake._echo = False
    fake.enqueue(LLMServerError("http://x failed (503: overloaded)"))
    with pytest.raises(LLMServerError):
        asyncio.run(lm.chat(lm.request("something else"), trace=trace, step="fill"))
    fresh, hit, failed = log.latest()
    assert (fresh.cached, hit.cached, failed.cached) == (False, True, False)
    assert fresh.key == hit.key == lm.request("hello there").cache_key(lm.model_id)
    assert (fresh.prompt_tokens, fresh.completion_tokens) == (2, 2)
    assert (hit.prompt_tokens, hit.latency_s) == (2, 0.0)  # a hit keeps its usage
    assert (fresh.step, fresh.label, failed.step, failed.label) == (
        "outline", "question 3", "fill", "question 3")
    assert failed.error == "http://x failed (503: overloaded)" and fresh.error is None
    assert (failed.model, failed.prompt_tokens) == ("fake:fake", 0)
    # the cache file holds no calls: the log is elsewhere
    tables = {r[0] for r in sqlite3.connect(tmp_path / "cache.sqlite").execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "calls" not in tables and "responses" in tables


def test_the_log_names_the_open_span(tmp_path):
    log = CallLog(tmp_path / "log.sqlite")
    lm = LM(FakeLLM(echo=True), log=log)
    trace = Trace(label="q")

    async def run() -> None:
        with trace.span("fill"):
            await lm.chat(lm.request("inside"), trace=trace, step="fill")
        await lm.chat(lm.request("outside"), trace=trace, step="answer")

    asyncio.run(run())
    inside, outside = log.latest()
    if hasattr(trace, "current_span_id"):  # traces whose spans have ids
        assert inside.span_id == trace.spans[0].id and inside.span_id
    else:
        assert inside.span_id is None
    assert outside.span_id is None


def test_failed_http_call_is_logged_without_the_key(tmp_path, server, monkeypatch):
    monkeypatch.setenv("SECRET_KEY_VAR", "sk-do-not-log-me")
    server.script(("status", 401, {}, "bad key"))
    log = CallLog(tmp_path / "log.sqlite")
    lm = LM(OpenAIChatLLM("fake-model", server.url, api_key_env="SECRET_KEY_VAR"), log=log)
    with pytest.raises(LLMAuthError):
        asyncio.run(lm.chat(lm.request("hi"), step="probe"))
    (row,) = log.latest()
    assert "refused the credentials (401: bad key)" in row.error and "$SECRET_KEY_VAR" in row.error
    assert row.latency_s > 0 and not row.cached
    assert b"sk-do-not-log-me" not in b"".join(p.read_bytes() for p in tmp_path.iterdir())


def test_logging_is_independent_of_the_cache(tmp_path, server):
    path = tmp_path / "llm.sqlite"
    cfg = LLMConfig(backend="openai", model="fake-model", base_url=server.url)
    off = make_lm(cfg, cache_path=path, cache=False)  # --no-cache on ask / eval
    assert off.cache is None and off.log is not None
    for _ in range(2):
        asyncio.run(off.chat(off.request("same question")))
    assert len(server.requests) == 2  # nothing read (nor written) with the cache off
    assert [r.cached for r in CallLog(path).latest()] == [False, False]
    on = make_lm(cfg, cache_path=path)
    asyncio.run(on.chat(on.request("same question")))
    asyncio.run(on.chat(on.request("same question")))
    assert len(server.requests) == 3
    assert [r.cached for r in CallLog(path).latest()] == [False, False, False, True]
    # use_cache=False on one call: not read, and the fresh reply refreshes the entry
    asyncio.run(on.chat(on.request("same question"), use_cache=False))
    assert len(server.requests) == 4 and CallLog(path).latest(1)[0].cached is False
    # no path: neither; an LM without a log works as before
    assert make_lm(cfg).log is None and make_lm(cfg).cache is None
    bare = LM(FakeLLM(echo=True))
    assert bare.log is None and asyncio.run(bare.complete("works")) == "works"
    cache_only = LM(FakeLLM(echo=True), cache=SQLiteCache(tmp_path / "c.sqlite"), log=None)
    asyncio.run(cache_only.complete("no log"))
    assert SQLiteCache(tmp_path / "c.sqlite").stats()["calls"] == 0


def test_the_old_cache_api_still_counts_calls(tmp_path):
    cache = SQLiteCache(tmp_path / "c.sqlite")
    resp = ChatResponse(text="x", model="m", usage=Usage(prompt_tokens=4), cached=True)
    cache.log_call("k", resp)
    (row,) = cache.call_log().latest()
    assert (row.key, row.model, row.prompt_tokens, row.cached) == ("k", "m", 4, True)
    assert cache.stats() == {"entries": 0, "calls": 1, "cache_hits": 1}


def chat_cli(home, server, *args):
    return runner.invoke(app, ["llm", "chat", *args, "--llm", "openai", "--model", "fake-model",
                               "--base-url", server.url, "--home", str(home)])


def test_cli_no_cache_still_logs_and_llm_log_shows_the_latest(tmp_path, server):
    home = tmp_path / "home"
    for args in (["first"], ["second", "--no-cache"], ["second", "--no-cache"], ["third"],
                 ["third"]):
        res = chat_cli(home, server, *args)
        assert res.exit_code == 0, res.output
    assert len(server.requests) == 4  # --no-cache never read; the last "third" was a hit
    res = runner.invoke(app, ["llm", "log", "-n", "2", "--json", "--home", str(home)])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert len(rows) == 2 and rows[0]["id"] < rows[1]["id"]
    assert [r["cached"] for r in rows] == [False, True]
    assert all(r["label"] == "chat" and r["model"] == "openai:fake-model" and r["error"] is None
               for r in rows)
    all_rows = json.loads(runner.invoke(app, ["llm", "log", "--json", "--home",
                                              str(home)]).output)
    assert [r["cached"] for r in all_rows] == [False, False, False, False, True]
    res = runner.invoke(app, ["llm", "log", "-n", "3", "--home", str(home)],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    for column in ("time", "step", "label", "model", "tokens", "latency", "cached", "retries",
                   "error"):
        assert column in res.output
    assert res.output.count("openai:fake-model") == 3 and "yes" in res.output


def test_cli_log_of_a_fresh_home_and_a_failed_call(tmp_path):
    home = tmp_path / "home"
    res = runner.invoke(app, ["llm", "log", "--json", "--home", str(home)])
    assert res.exit_code == 0 and json.loads(res.output) == []
    assert not (home / "cache" / "llm.sqlite").exists()  # reading made nothing
    config = tmp_path / "config.toml"
    config.write_text("[llm]\nmax_retries = 0\n")
    res = runner.invoke(app, ["llm", "chat", "hi", "--llm", "openai", "--model", "m",
                              "--base-url", "http://127.0.0.1:9/v1", "--config", str(config),
                              "--home", str(home)])
    assert res.exit_code == 2
    (row,) = json.loads(runner.invoke(app, ["llm", "log", "--json", "--home",
                                            str(home)]).output)
    assert "cannot reach the LLM server at http://127.0.0.1:9/v1" in row["error"]


def test_ask_with_no_cache_is_logged(tmp_path, server):
    """The issue's case: `quaderno ask --no-cache` used to log nothing."""
    from quaderno.corpus.chunk import Chunk
    from quaderno.workspace import Workspace

    ws = Workspace(tmp_path / "home")
    ws.add_kb("k", [Chunk(id="a", title="A", text="Paris is the capital of France.")])
    server.reply = "<answer>Paris</answer>"
    res = runner.invoke(app, ["ask", "capital of France?", "--method", "vanilla-llm",
                              "--no-cache", "--json", "--llm", "openai", "--model", "fake-model",
                              "--base-url", server.url, "--home", str(ws.root)])
    assert res.exit_code == 0, res.output
    (row,) = CallLog(ws.root / "cache" / "llm.sqlite").latest()
    assert (row.label, row.cached, row.error) == ("capital of France?", False, None)
    assert row.step and row.completion_tokens == 1


def test_many_first_openings_at_once_never_report_locked(tmp_path):
    # making a new file WAL from several connections at once answers "database is locked"
    # without SQLite's busy handler; seen here in 4 of 60 rounds before the retry
    for round_ in range(40):
        path = tmp_path / f"log{round_}.sqlite"
        errors: list[BaseException] = []
        barrier = threading.Barrier(8)

        def opener() -> None:
            try:
                barrier.wait()
                CallLog(path)  # noqa: B023 - each round's threads finish before the next
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=opener) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [], f"round {round_}: {errors}"
