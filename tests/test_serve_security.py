"""The security review of `quaderno serve` (issue 13): what a client may choose (embedders,
options naming server paths, capped work), cross-site requests and DNS rebinding, jobs and
progress streams in flight, a hang-up while the model works in a thread, and what error
text leaves the server."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from quaderno.errors import ConfigError, QuadernoError
from quaderno.llm.calllog import CallLog
from quaderno.llm.fake import FakeLLM
from quaderno.serve.errors import TooManyRequestsError, error_info
from quaderno.serve.jobs import JobManager
from quaderno.serve.policy import OPTION_CAPS, check_embedder
from test_serve_api import assert_error, call, client, make_app, make_home, sse

TOKEN = "s3cret-token-0123456789"


@pytest.fixture
def kb_home(tmp_path):  # noqa: ANN001, ANN201
    return make_home(tmp_path / "home")


def raw(app: Any, method: str, path: str, *, host: str = "127.0.0.1",
        **kwargs: Any) -> httpx.Response:
    """A request as a browser on another site could send it: no X-Quaderno header."""
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as c:
            return await c.request(method, path, **kwargs)

    return asyncio.run(go())


# -- 1. embedders ----------------------------------------------------------------------------
@pytest.mark.parametrize("spec, word", [
    ("openai:text-embedding-3-small@https://evil.example", "not allowed"),
    ("st:/etc/some-model", "not allowed"),
    ("hash:1000000000", "4096"),
    ("hash:abc", "4096"),
])
def test_index_build_refuses_embedders_the_server_did_not_allow(kb_home, spec, word):
    app = make_app(kb_home)
    err = assert_error(call(app, "POST", "/v1/kbs/mma/index", json={"embedder": spec}),
                       422, word)
    if word == "not allowed":
        assert "minilm" in err["message"] and "hash" in err["message"]  # the allowed ones
    assert app.state.quaderno.jobs.list() == []  # refused before any job started


def test_upload_refuses_a_client_chosen_embedder(kb_home):
    app = make_app(kb_home)
    files = {"file": ("d.jsonl", b'{"id": "a", "text": "x"}\n')}
    assert_error(call(app, "POST", "/v1/kbs", files=files,
                      data={"name": "new", "embedder": "openai:m@https://evil.example"}),
                 422, "not allowed")
    assert not (kb_home / "kbs" / "new").exists()


def test_embedder_allowlist_and_hash_within_its_cap(kb_home):
    assert check_embedder(None) is None and check_embedder("none") is None
    assert check_embedder("minilm") == "minilm" and check_embedder("hash:4096") == "hash:4096"
    with pytest.raises(ConfigError, match="st:custom"):  # the refusal names the allowed ones
        check_embedder("st:/other", ["st:custom"])
    assert check_embedder("st:custom", ["st:custom"]) == "st:custom"
    app = make_app(kb_home)
    res = call(app, "POST", "/v1/kbs/mma/index", json={"index": "h", "embedder": "hash:64"})
    assert res.status_code == 202, res.text


# -- 2. cross-site requests and DNS rebinding ------------------------------------------------
def test_a_request_for_another_host_name_is_refused(kb_home):
    app = make_app(kb_home)
    assert raw(app, "GET", "/v1/kbs", host="evil.example").status_code == 400
    assert raw(app, "GET", "/v1/kbs", host="localhost:8765").status_code == 200
    allowed = make_app(kb_home, allowed_hosts=("quaderno.lan",))
    assert raw(allowed, "GET", "/v1/kbs", host="quaderno.lan").status_code == 200


def test_a_cross_site_form_cannot_change_state(kb_home):
    app = make_app(kb_home)
    files = {"file": ("d.jsonl", b'{"id": "a", "text": "x"}\n')}
    # a multipart form post (what <form enctype=multipart/form-data> sends)
    assert_error(raw(app, "POST", "/v1/kbs", data={"name": "evil"}, files=files), 403,
                 "X-Quaderno")
    assert not (kb_home / "kbs" / "evil").exists()
    # a text/plain "JSON" body, a DELETE, and the GET stream that spends model time
    assert_error(raw(app, "POST", "/v1/ask", content=json.dumps({"question": "q"}),
                     headers={"content-type": "text/plain"}), 403)
    assert_error(raw(app, "DELETE", "/v1/kbs/mma"), 403)
    assert_error(raw(app, "GET", "/v1/ask/stream?question=q&method=vanilla-llm"), 403)
    assert (kb_home / "kbs" / "mma").exists()
    # what a script of the same origin sends passes: JSON, or the header
    assert raw(app, "POST", "/v1/search", json={"query": "Dutch"}).status_code == 200
    assert raw(app, "DELETE", "/v1/kbs/mma", headers={"X-Quaderno": "1"}).status_code == 204
    # no CORS: a preflight is never granted
    res = raw(app, "OPTIONS", "/v1/ask", headers={"Origin": "https://evil.example",
                                                  "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in res.headers


def test_a_bearer_token_stands_for_the_header(kb_home):
    app = make_app(kb_home, token=SecretStr(TOKEN))
    files = {"file": ("d.jsonl", b'{"id": "a", "text": "x"}\n')}
    res = raw(app, "POST", "/v1/kbs", data={"name": "tok"}, files=files,
              headers={"Authorization": f"Bearer {TOKEN}"})
    assert res.status_code == 202, res.text


# -- 3. server paths from clients ------------------------------------------------------------
@pytest.mark.parametrize("option", ["calibration", "store_dir"])
def test_options_naming_server_paths_are_refused_on_every_route(kb_home, tmp_path, option):
    data = tmp_path / "data"
    data.mkdir()
    (data / "mini.jsonl").write_text('{"id": "1", "question": "q", "answers": ["a"]}\n')
    app = make_app(kb_home, data_dir=data)
    options = {option: "/etc/passwd"}
    ask = {"question": "q", "method": "docsage", "options": options}
    for path in ("/v1/ask", "/v1/ask/stream"):
        assert_error(call(app, "POST", path, json=ask), 422, option)
    assert_error(call(app, "POST", "/v1/chat/completions", json={
        "model": "quaderno-docsage", "messages": [{"role": "user", "content": "q"}],
        "quaderno": {"options": options}}), 422, option)
    assert_error(call(app, "POST", "/v1/evals", json={
        "dataset": "mini.jsonl", "format": "question-answer", "method": "docsage",
        "options": options}), 422, option)
    from mcp.client.client import Client

    from quaderno.serve.mcp_server import create_mcp

    async def mcp() -> Any:
        async with Client(create_mcp(state=app.state.quaderno)) as c:
            return await c.call_tool("ask", {"question": "q", "method": "docsage",
                                             "options": options})

    out = asyncio.run(mcp())
    assert out.is_error and option in out.content[0].text


# -- 4. limits -------------------------------------------------------------------------------
def test_numeric_options_over_the_cap_are_422(kb_home, tmp_path):
    app = make_app(kb_home)
    cap = OPTION_CAPS["max_iters"]
    err = assert_error(call(app, "POST", "/v1/ask", json={
        "question": "q", "method": "pager", "options": {"max_iters": 10 ** 6}}), 422,
        "max_iters", str(cap))
    assert err["hint"]
    assert_error(call(app, "POST", "/v1/ask", json={
        "question": "q", "method": "docsage", "options": {"call_budget": 10 ** 6}}), 422,
        "call_budget")
    data = tmp_path / "data"
    data.mkdir()
    (data / "mini.jsonl").write_text('{"id": "1", "question": "q", "answers": ["a"]}\n')
    evals = make_app(kb_home, data_dir=data)
    assert_error(call(evals, "POST", "/v1/evals", json={
        "dataset": "mini.jsonl", "format": "question-answer", "method": "docsage",
        "options": {"concurrency": 10 ** 4}}), 422, "concurrency")


def test_jobs_in_flight_are_capped_with_a_429(kb_home):
    app = make_app(kb_home, max_jobs=1)
    jobs = app.state.quaderno.jobs

    async def go() -> httpx.Response:
        hold = asyncio.Event()

        async def work(job: Any) -> dict:
            await hold.wait()
            return {}

        jobs.start("eval", "busy-run", work)
        async with client(app) as c:
            res = await c.post("/v1/kbs/mma/index", json={})
        hold.set()
        await asyncio.sleep(0.01)
        return res

    res = asyncio.run(go())
    assert_error(res, 429, "jobs")
    assert res.headers["retry-after"]


def test_job_progress_streams_are_limited_and_keep_alive():
    async def go() -> None:
        manager = JobManager(max_watchers=1)
        hold = asyncio.Event()

        async def work(job: Any) -> dict:
            await hold.wait()
            return {}

        job = manager.start("eval", "r", work)
        changes, release = manager.watch(job.id)
        with pytest.raises(TooManyRequestsError, match="progress streams"):
            manager.watch(job.id)
        release()
        release()  # once only
        assert manager.watchers == 0
        seen = []
        quiet = manager.changes(job.id, poll_s=0.01, keepalive_s=0.03)
        async for out in quiet:
            seen.append(out)
            if len(seen) == 3:
                break
        await quiet.aclose()
        assert None in seen  # a keep-alive while nothing changed
        hold.set()
        await asyncio.sleep(0.01)

    asyncio.run(go())


def test_job_progress_streams_do_not_spin():
    import inspect

    assert inspect.signature(JobManager.changes).parameters["poll_s"].default >= 0.5


# -- 5. a hang-up while the model works in a thread -----------------------------------------
class BlockingLLM(FakeLLM):
    """A backend whose call blocks a worker thread (as llama.cpp does): cancelling the
    task that awaits it does not stop it."""

    def __init__(self) -> None:
        super().__init__(respond=lambda r: "<answer>x</answer>")
        self.entered = threading.Event()
        self.go = threading.Event()
        self.returned = threading.Event()

    def _block(self) -> None:
        self.entered.set()
        self.go.wait(10)
        self.returned.set()

    async def achat(self, request: Any) -> Any:
        await asyncio.to_thread(self._block)
        return await super().achat(request)


def test_a_hang_up_keeps_the_slot_until_the_threaded_call_returns(kb_home):
    llm = BlockingLLM()
    app = make_app(kb_home, llm)
    state, asker = app.state.quaderno, app.state.asker

    async def go() -> None:
        from quaderno.serve.wire import AskRequest

        events, release = asker.stream(AskRequest(question="q", method="vanilla-llm"), "c1")
        assert (await events.__anext__()).name == "start"
        await asyncio.wait_for(events.__anext__(), 5)  # span_open
        while not llm.entered.is_set():
            await asyncio.sleep(0.01)
        closing = asyncio.create_task(events.aclose())  # the client went away
        await asyncio.sleep(0.2)
        release()
        assert state.limiter.in_flight == 1  # the model still works in its thread
        llm.go.set()
        await asyncio.wait_for(closing, 5)
        release()
        assert llm.returned.is_set() and state.limiter.in_flight == 0

    asyncio.run(go())


def test_a_cancelled_answer_keeps_the_slot_until_the_threaded_call_returns(kb_home):
    llm = BlockingLLM()
    app = make_app(kb_home, llm)
    state, asker = app.state.quaderno, app.state.asker

    async def go() -> None:
        from quaderno.serve.wire import AskRequest

        task = asyncio.create_task(asker.answer(AskRequest(question="q",
                                                           method="vanilla-llm"), "c1"))
        while not llm.entered.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.sleep(0.2)
        assert state.limiter.in_flight == 1
        llm.go.set()
        t0 = time.perf_counter()
        while state.limiter.in_flight and time.perf_counter() - t0 < 5:
            await asyncio.sleep(0.01)
        assert state.limiter.in_flight == 0

    asyncio.run(go())


# -- 6. error text ---------------------------------------------------------------------------
def test_an_unmapped_quaderno_error_is_generic(caplog):
    info = error_info(QuadernoError("token at /srv/secret"))
    assert info.status == 500 and "/srv/secret" not in info.message
    assert "/srv/secret" in caplog.text


def test_an_unknown_gate_does_not_show_server_paths(kb_home):
    res = call(make_app(kb_home), "POST", "/v1/ask",
               json={"question": "q", "method": "vanilla-llm", "gate": "nosuch"})
    assert_error(res, 404, "nosuch")
    assert str(kb_home) not in res.text


def test_llm_log_hides_other_clients_questions_and_errors(kb_home):
    log = CallLog(kb_home / "cache" / "llm.sqlite")
    log.append(ts=time.time(), model="m", key="k1", label="my private question",
               error="LLMConnectionError: http://10.0.0.5:8080 said secret")
    rows = call(make_app(kb_home), "GET", "/v1/llm/log").json()
    assert rows and "private" not in json.dumps(rows) and "secret" not in json.dumps(rows)
    assert rows[-1]["error"] == "failed"
    shown = call(make_app(kb_home, llm_log_details=True), "GET", "/v1/llm/log").json()
    assert shown[-1]["label"] == "my private question"


def test_stream_hides_step_error_text_unless_traced(kb_home):
    def broken(request: Any) -> str:
        raise RuntimeError("at /srv/keys")

    app = make_app(kb_home, FakeLLM(respond=broken))
    events = sse(call(app, "POST", "/v1/ask/stream",
                      json={"question": "q", "method": "vanilla-llm"}).text)
    assert "/srv/keys" not in json.dumps(events)


# -- 7. correctness --------------------------------------------------------------------------
def test_a_validation_error_inside_a_method_is_422(kb_home, monkeypatch):
    from pydantic import BaseModel

    class Inner(BaseModel):
        n: int

    async def failing(*args: Any, **kwargs: Any) -> Any:
        Inner.model_validate({"n": "many"})

    monkeypatch.setattr("quaderno.serve.asking.aask", failing)
    app = make_app(kb_home)
    assert_error(call(app, "POST", "/v1/ask", json={"question": "q", "method": "vanilla-llm"}),
                 422, "n")
    events = sse(call(app, "POST", "/v1/ask/stream",
                      json={"question": "q", "method": "vanilla-llm"}).text)
    assert events[-1][0] == "error" and events[-1][1]["error"]["status"] == 422


def test_models_retrieve_with_the_openai_sdk(kb_home):
    import openai

    from test_serve_openai import sdk

    async def go() -> tuple[str, Any]:
        async with sdk(make_app(kb_home)) as c:
            card = await c.models.retrieve("quaderno-pager")
            try:
                await c.models.retrieve("gpt-4")
            except openai.NotFoundError as exc:
                return card.id, exc
        return card.id, None

    found, missing = asyncio.run(go())
    assert found == "quaderno-pager" and missing is not None


def test_cli_passes_the_new_limits_to_the_settings():
    from quaderno.cli.serve_cmd import _settings

    s = _settings(None, None, "127.0.0.1", 8765, None, {}, max_jobs=2,
                  embedder_allow=("st:custom",), allowed_hosts=("q.lan",),
                  llm_log_details=True)
    assert (s.max_jobs, s.embedder_allow, s.llm_log_details) == (2, ("st:custom",), True)
    assert "q.lan" in s.trusted_hosts() and "evil.example" not in s.trusted_hosts()


def test_server_and_cli_record_the_same_run_config(kb_home, tmp_path):
    """A run started by POST /v1/evals resumes under `quaderno eval` (and back): both build
    its RunConfig with quaderno.eval.run_config, and resuming compares them."""
    from quaderno.eval.run_config import method_options_for, run_config
    from quaderno.eval.runner import RunConfig
    from quaderno.llm.lm import LM
    from quaderno.serve.app import create_app
    from quaderno.serve.settings import ServeSettings
    from test_serve_jobs import wait_job, write_dataset

    data = tmp_path / "data"
    write_dataset(data)
    lm = LM(FakeLLM(respond=lambda r: "<answer>Paris</answer>"),
            defaults={"temperature": 0.0, "top_p": 1.0, "seed": 7})
    app = create_app(ServeSettings(home=kb_home, data_dir=data), lm=lm)

    async def go() -> None:
        async with client(app) as c:
            res = await c.post("/v1/evals", json={"dataset": "mini.jsonl", "name": "mini",
                                                  "format": "question-answer",
                                                  "method": "vanilla-llm"})
            assert (await wait_job(c, res.json()["id"]))["state"] == "succeeded"

    asyncio.run(go())
    saved = json.loads((kb_home / "runs" / "mini" / "config.json").read_text())
    # what `quaderno eval --dataset mini.jsonl --method vanilla-llm` builds with its defaults
    cli = run_config(dataset="mini.jsonl", method="vanilla-llm", lm=lm, roles={},
                     options=method_options_for("vanilla-llm", 10, {}), k=None,
                     pool="per-question", kbs=[], retrieval="bm25", embedder=None,
                     judge=None, judges=[], dig=False, measures=[], gate=None)
    assert RunConfig.from_saved(saved) == cli


def test_the_server_does_not_depend_on_the_cli(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from quaderno.serve.app import create_app; "
            "from quaderno.serve.settings import ServeSettings; "
            f"app = create_app(ServeSettings(home={str(tmp_path)!r})); "
            "app.state.quaderno.llm_info(); "
            "print(sorted(m for m in sys.modules if m.startswith('quaderno.cli')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_eval_job_failures_do_not_echo_the_llm_error_text(kb_home, tmp_path, caplog):
    from quaderno.errors import LLMConnectionError
    from test_serve_jobs import wait_job, write_dataset

    def refused(request: Any) -> str:
        raise LLMConnectionError("connection refused by http://10.0.0.5:8080/v1")

    data = tmp_path / "data"
    write_dataset(data)
    app = make_app(kb_home, FakeLLM(respond=refused), data_dir=data)

    async def go() -> dict:
        async with client(app) as c:
            res = await c.post("/v1/evals", json={"dataset": "mini.jsonl", "name": "down",
                                                  "format": "question-answer",
                                                  "method": "vanilla-llm"})
            return await wait_job(c, res.json()["id"])

    job = asyncio.run(go())
    assert "10.0.0.5" not in json.dumps(job) and "10.0.0.5" in caplog.text
    assert job["state"] == "failed" or job["result"]["failures"]
