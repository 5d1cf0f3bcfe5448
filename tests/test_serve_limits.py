"""Safe by default: loopback unless a token is set, the bearer token (401), request and upload
size limits (413), questions in flight per client and in all (429), what /v1/info says."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from quaderno.cli.main import app as cli
from quaderno.errors import ConfigError
from quaderno.llm.fake import FakeLLM
from quaderno.serve.guard import InflightLimiter, token_matches
from quaderno.serve.settings import ServeSettings, is_loopback, token_from_env
from test_serve_api import assert_error, call, client, make_app, make_home

TOKEN = "s3cret-token-0123456789"


@pytest.fixture
def kb_home(tmp_path):  # noqa: ANN001, ANN201
    return make_home(tmp_path / "home")


# -- binding and the token ------------------------------------------------------------------
@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("localhost", True),
                                            ("::1", True), ("127.1.2.3", True),
                                            ("0.0.0.0", False), ("192.168.1.4", False),
                                            ("example.org", False)])
def test_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_public_address_without_token_is_refused():
    assert ServeSettings().host == "127.0.0.1"
    with pytest.raises(ConfigError, match="--token-env"):
        ServeSettings(host="0.0.0.0").check()
    ServeSettings(host="0.0.0.0", token=SecretStr(TOKEN)).check()


def test_token_from_env(monkeypatch):
    monkeypatch.setenv("QS_TOKEN", TOKEN)
    assert token_from_env("QS_TOKEN").get_secret_value() == TOKEN
    assert TOKEN not in repr(ServeSettings(token=token_from_env("QS_TOKEN")))
    monkeypatch.setenv("QS_SHORT", "abc")
    with pytest.raises(ConfigError, match="at least 16"):
        token_from_env("QS_SHORT")
    with pytest.raises(ConfigError, match="QS_UNSET is unset"):
        token_from_env("QS_UNSET")
    assert token_from_env(None) is None


def test_cli_refuses_to_serve_beyond_loopback_without_a_token(monkeypatch):
    runner = CliRunner()
    res = runner.invoke(cli, ["serve", "--host", "0.0.0.0"])
    assert res.exit_code == 2 and "--token-env" in res.output
    res = runner.invoke(cli, ["mcp", "--transport", "http", "--host", "0.0.0.0"])
    assert res.exit_code == 2 and "--token-env" in res.output
    res = runner.invoke(cli, ["serve", "--token-env", "QS_NOT_SET"])
    assert res.exit_code == 2 and "QS_NOT_SET is unset" in res.output
    res = runner.invoke(cli, ["serve", "--ssl-certfile", "cert.pem"])
    assert res.exit_code == 2 and "go together" in res.output
    res = runner.invoke(cli, ["mcp", "--transport", "carrier-pigeon"])
    assert res.exit_code == 2 and "stdio or http" in res.output


def test_token_compare():
    assert token_matches(TOKEN, SecretStr(TOKEN))
    assert not token_matches(TOKEN[:-1], SecretStr(TOKEN))
    assert not token_matches("", SecretStr(TOKEN))


def test_bearer_token_is_required_when_set(kb_home):
    app = make_app(kb_home, token=SecretStr(TOKEN))
    res = call(app, "GET", "/v1/kbs")
    err = assert_error(res, 401, "no bearer token")
    assert res.headers["www-authenticate"] == "Bearer" and err["hint"]
    assert_error(call(app, "GET", "/v1/kbs", headers={"Authorization": "Bearer wrong"}),
                 401, "not this server's")
    assert_error(call(app, "GET", "/v1/kbs", headers={"Authorization": f"Basic {TOKEN}"}),
                 401)
    ok = call(app, "GET", "/v1/kbs", headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and ok.json()[0]["name"] == "mma"
    assert call(app, "GET", "/v1/health").status_code == 200  # open for probes
    info = call(app, "GET", "/v1/info", headers={"Authorization": f"Bearer {TOKEN}"})
    assert info.json()["auth"] is True and TOKEN not in info.text


# -- sizes ----------------------------------------------------------------------------------
def test_request_body_over_the_limit_is_413(kb_home):
    app = make_app(kb_home, max_request_bytes=2048)
    res = call(app, "POST", "/v1/ask", json={"question": "x" * 3000})
    assert_error(res, 413)
    ok = call(app, "POST", "/v1/search", json={"query": "Dutch"})
    assert ok.status_code == 200

    async def chunked():  # noqa: ANN202 - a body sent without a Content-Length
        yield b'{"question": "'
        yield b"x" * 3000
        yield b'"}'

    async def go() -> int:
        async with client(app) as c:
            res = await c.post("/v1/ask", content=chunked(),
                               headers={"content-type": "application/json"})
            return res.status_code

    assert asyncio.run(go()) == 413


def test_upload_over_its_limit_is_413_but_larger_than_a_request_is_fine(kb_home):
    app = make_app(kb_home, max_request_bytes=2048, max_upload_bytes=8192)
    line = b'{"id": "d%d", "text": "Some document text that is long enough."}\n'
    small = b"".join(line.replace(b"%d", str(i).encode()) for i in range(60))  # ~4 kB
    assert 2048 < len(small) < 8192
    res = call(app, "POST", "/v1/kbs", data={"name": "small"},
               files={"file": ("docs.jsonl", small)})
    assert res.status_code == 202, res.text
    big = small * 3
    assert_error(call(app, "POST", "/v1/kbs", data={"name": "big"},
                      files={"file": ("docs.jsonl", big)}), 413)


# -- questions in flight --------------------------------------------------------------------
def test_limiter_counts_per_client_and_in_all():
    limiter = InflightLimiter(total=3, per_client=2)
    limiter.acquire("a")
    limiter.acquire("a")
    with pytest.raises(Exception, match="for this client"):
        limiter.acquire("a")
    limiter.acquire("b")
    with pytest.raises(Exception, match="answering 3 questions"):
        limiter.acquire("c")
    limiter.release("a")
    limiter.acquire("c")
    assert limiter.in_flight == 3
    with pytest.raises(ConfigError):
        InflightLimiter(0, 1)


def _slow(kb_home, **settings):  # noqa: ANN001, ANN202
    return make_app(kb_home, FakeLLM(respond=lambda r: "<answer>slow</answer>",
                                     latency_s=0.4), **settings)


async def _wait_in_flight(app, n: int) -> None:  # noqa: ANN001
    for _ in range(200):
        if app.state.quaderno.limiter.in_flight >= n:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"never {n} in flight")


def test_third_question_from_one_client_is_429(kb_home):
    app = _slow(kb_home, max_inflight=8, max_inflight_per_client=2)
    body = {"question": "q", "method": "vanilla-llm"}

    async def go() -> None:
        async with client(app) as c:
            first = [asyncio.create_task(c.post("/v1/ask", json=body)) for _ in range(2)]
            await _wait_in_flight(app, 2)
            third = await c.post("/v1/ask", json=body)
            stream = await c.post("/v1/ask/stream", json=body)
            chat = await c.post("/v1/chat/completions", json={
                "model": "quaderno-vanilla-llm", "messages": [{"role": "user",
                                                               "content": "q"}]})
            async with client(app, peer=("10.0.0.9", 1)) as other:
                fine = await other.post("/v1/ask", json=body)  # another client is served
            done = await asyncio.gather(*first)
        for res in (third, stream, chat):
            assert_error(res, 429, "for this client")
            assert res.headers["retry-after"] == "1"
        assert fine.status_code == 200
        assert [r.status_code for r in done] == [200, 200]
        assert app.state.quaderno.limiter.in_flight == 0

    asyncio.run(go())


def test_questions_beyond_the_server_limit_are_429(kb_home):
    app = _slow(kb_home, max_inflight=2, max_inflight_per_client=2)
    body = {"question": "q", "method": "vanilla-llm"}

    async def go() -> None:
        a, b = client(app, peer=("10.0.0.1", 1)), client(app, peer=("10.0.0.2", 1))
        async with a, b, client(app, peer=("10.0.0.3", 1)) as c:
            first = [asyncio.create_task(a.post("/v1/ask", json=body)),
                     asyncio.create_task(b.post("/v1/ask", json=body))]
            await _wait_in_flight(app, 2)
            refused = await c.post("/v1/ask", json=body)
            await asyncio.gather(*first)
            again = await c.post("/v1/ask", json=body)
        assert_error(refused, 429, "answering 2 questions")
        assert again.status_code == 200

    asyncio.run(go())


# -- the embedded model -----------------------------------------------------------------------
def test_info_says_the_embedded_model_serializes_requests(tmp_path):
    from quaderno.serve.app import create_app

    app = create_app(ServeSettings(home=tmp_path / "home", llm={"backend": "llama-cpp"}))
    info = call(app, "GET", "/v1/info").json()["llm"]
    assert info["backend"] == "llama-cpp" and info["serialized"] is True
    assert "one request at a time" in info["note"]
    app = create_app(ServeSettings(home=tmp_path / "home", llm={
        "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}))
    info = call(app, "GET", "/v1/info").json()["llm"]
    assert info["serialized"] is False


def test_embedded_backend_holds_one_lock():
    """The llama.cpp backend runs one call at a time (what /v1/info reports)."""
    import inspect

    from quaderno.llm.llama_cpp_backend import LlamaCppLLM

    source = inspect.getsource(LlamaCppLLM)
    assert "self._lock = threading.Lock()" in source and "with self._lock:" in source
