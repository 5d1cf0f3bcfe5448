"""The HTTP API with a fake LLM through the ASGI transport: every route, and the error tree
mapped to statuses (422/404/409/501/502/504) with bodies that name the problem."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.errors import (DependencyError, LLMConnectionError, LLMTimeoutError,
                             StaleIndexError)
from quaderno.llm.calllog import CallLog
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.registry import METHODS
from quaderno.serve.app import create_app
from quaderno.serve.errors import error_info
from quaderno.serve.settings import ServeSettings
from quaderno.workspace import Workspace
from test_pager import QUESTION, Scripted

XSS = "<img src=x onerror=alert(1)>"


def make_home(root: Path, xss: str = XSS) -> Path:
    """A workspace with the "mma" knowledge base, one document carrying ``xss``."""
    ws = Workspace(root)
    ws.add_kb("mma", [
        Chunk(id="f1", title="Kazuyuki Fujita",
              text="Kazuyuki Fujita is a Japanese mixed martial artist."),
        Chunk(id="y1", title="Gilbert Yvel",
              text=f"Gilbert Yvel is a Dutch mixed martial artist. {xss}"),
    ])
    ws.build_index("mma", embedder=None)
    return ws.root


def make_app(home: Path, llm: Any = None, **settings: Any):  # noqa: ANN201 - a FastAPI app
    """An app over ``home`` answering with ``llm`` (default: PAGER's scripted fake), its call
    log in the workspace."""
    fake = llm if llm is not None else FakeLLM(respond=Scripted())
    lm = LM(fake, log=CallLog(home / "cache" / "llm.sqlite"))
    return create_app(ServeSettings(home=home, **settings), lm=lm)


def client(app: Any, *, peer: tuple[str, int] = ("127.0.0.1", 50000),
           headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    """A client of ``app`` on loopback that sends ``X-Quaderno: 1`` (as the page does)."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=peer),
                             base_url="http://127.0.0.1",
                             headers={"X-Quaderno": "1", **(headers or {})})


def call(app: Any, method: str, path: str, **kwargs: Any) -> httpx.Response:
    async def go() -> httpx.Response:
        async with client(app) as c:
            return await c.request(method, path, **kwargs)

    return asyncio.run(go())


def sse(text: str) -> list[tuple[str, Any]]:
    """(event, data) of a text/event-stream body, comments left out."""
    import json

    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines()
                      if line and not line.startswith(":"))
        if "data" in fields:
            out.append((fields.get("event", "message"), json.loads(fields["data"])
                        if fields["data"] != "[DONE]" else "[DONE]"))
    return out


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path / "home")


@pytest.fixture
def app(home: Path):  # noqa: ANN201
    return make_app(home)


def assert_error(res: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert res.status_code == status, res.text
    error = res.json()["error"]
    assert error["status"] == status and error["message"]
    for word in words:
        assert word in error["message"], error
    return error


# -- ask ------------------------------------------------------------------------------------
def test_ask_pager_returns_answer_details_and_numbered_evidence(app):
    res = call(app, "POST", "/v1/ask", json={"question": QUESTION, "k": 2})
    assert res.status_code == 200, res.text
    data = res.json()
    assert data["answer"] == "mixed martial artist" and data["method"] == "pager"
    assert data["details"]["kind"] == "pager"
    sections = [s["title"] for s in data["details"]["page"]["sections"]]
    assert sections == ["Kazuyuki Fujita", "Gilbert Yvel", "Common Profession"]
    assert [e["n"] for e in data["evidence"]] == [1, 2]  # each chunk numbered once
    assert {e["chunk_id"] for e in data["evidence"]} == {"f1", "y1"}
    assert data["usage"]["llm_calls"] == 8
    assert data["trace"] is None and data["context"] is None  # not unless asked for
    assert res.headers["x-content-type-options"] == "nosniff"


def test_ask_trace_only_when_asked(app):
    data = call(app, "POST", "/v1/ask", json={"question": QUESTION, "k": 2,
                                              "trace": True}).json()
    names = [s["name"] for s in data["trace"]["spans"]]
    assert names[0] == "pager.outline" and "retrieve" in names
    assert data["trace"]["calls"][0]["prompt"][0]["content"]  # prompts, because asked
    assert "Kazuyuki Fujita" in data["context"]


def test_ask_untrusted_document_text_is_json_data(app):
    res = call(app, "POST", "/v1/ask", json={"question": QUESTION, "k": 2})
    assert res.headers["content-type"] == "application/json"
    texts = [e["text"] for e in res.json()["evidence"]]
    assert any(XSS in t for t in texts)  # verbatim, as data: never rendered as markup


def test_ask_validates_method_and_options_against_the_spec(app):
    # an unknown name is a 404 (the error tree's "unknown"); a malformed body stays 422
    assert_error(call(app, "POST", "/v1/ask", json={"question": "q", "method": "nope"}),
                 404, "no method 'nope'")
    err = assert_error(call(app, "POST", "/v1/ask", json={
        "question": "q", "options": {"fill_mode": "bogus"}}), 422, "fill_mode")
    assert err["hint"]
    assert_error(call(app, "POST", "/v1/ask", json={"question": "q",
                                                    "options": {"nope": 1}}),
                 422, "has no option 'nope'")
    assert_error(call(app, "POST", "/v1/ask", json={"question": "q", "k": 0}), 422, "k")
    assert_error(call(app, "POST", "/v1/ask", json={"question": ""}), 422, "question")
    assert_error(call(app, "POST", "/v1/ask", json={
        "question": "q", "method": "docsage", "options": {"store_dir": "/etc"}}),
        422, "store_dir")


def test_ask_unknown_kb_and_gate_are_404(app):
    assert_error(call(app, "POST", "/v1/ask", json={"question": "q", "kbs": ["nope"]}),
                 404, "no knowledge base named 'nope'", "mma")
    assert_error(call(app, "POST", "/v1/ask", json={"question": "q", "method": "vanilla-llm",
                                                    "gate": "trained"}), 404, "no gate")
    assert_error(call(app, "POST", "/v1/ask", json={"question": "q", "gate": "../etc"}),
                 422, "invalid gate name")


def test_ask_with_constant_gate_returns_its_decision(home):
    app = make_app(home, FakeLLM(respond=lambda r: "<answer>Paris</answer>"))
    data = call(app, "POST", "/v1/ask", json={"question": "Capital of France?",
                                              "method": "vanilla-rag", "gate": "never"}).json()
    assert data["gate"]["retrieve"] is False and data["gate"]["gate"]
    assert data["evidence"] == [] and data["answer"] == "Paris"


@pytest.mark.parametrize("exc, status, type_", [
    (LLMTimeoutError("the LLM server did not answer in 120 s"), 504, "LLMTimeoutError"),
    (LLMConnectionError("connection refused by http://x"), 502, "LLMConnectionError"),
    (DependencyError("pip install llama-cpp-python"), 501, "DependencyError"),
])
def test_llm_and_dependency_failures_map_to_statuses(home, exc, status, type_):
    app = make_app(home, FakeLLM().enqueue(exc))
    res = call(app, "POST", "/v1/ask", json={"question": "q", "method": "vanilla-llm"})
    err = assert_error(res, status, type_ if status in (502, 504) else str(exc))
    assert err["type"] == type_ and err["hint"]
    if status in (502, 504):  # an LLM failure's text (upstream URL, body) stays in the log
        assert str(exc) not in res.text and "http://x" not in res.text


def test_error_tree_statuses():
    assert error_info(StaleIndexError("built over v1")).status == 409
    info = error_info(RuntimeError("secret /path/to/key"))
    assert info.status == 500 and "secret" not in info.message  # nothing internal leaks


def test_a_body_that_is_not_json_is_422_and_not_text_400(app):
    json_type = {"content-type": "application/json"}
    assert_error(call(app, "POST", "/v1/ask", content=b"{not json", headers=json_type),
                 422, "JSON decode error")
    assert_error(call(app, "POST", "/v1/ask", content=b"\x80", headers=json_type), 400)


def test_an_unexpected_failure_is_a_generic_500_that_leaks_nothing(home, caplog):
    def broken(request):  # noqa: ANN001, ANN202
        raise RuntimeError("secret at /srv/keys/prod.pem")

    app = make_app(home, FakeLLM(respond=broken))

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            return await c.post("/v1/ask", json={"question": "q", "method": "vanilla-llm"})

    res = asyncio.run(go())
    err = assert_error(res, 500, "failed unexpectedly")
    assert "secret" not in res.text and err["type"] == "InternalError"
    assert "secret at /srv/keys/prod.pem" in caplog.text  # the log has it, the client not


def test_unknown_route_and_method_use_the_error_body(app):
    assert_error(call(app, "GET", "/v1/nope"), 404)
    assert_error(call(app, "DELETE", "/v1/methods"), 405)


# -- search, methods, chunks ----------------------------------------------------------------
def test_search_returns_ranked_chunks(app):
    res = call(app, "POST", "/v1/search", json={"query": "Dutch martial artist", "k": 1})
    assert res.status_code == 200
    hits = res.json()
    assert len(hits) == 1 and hits[0]["chunk_id"] == "y1" and hits[0]["rank"] == 1
    assert_error(call(app, "POST", "/v1/search", json={"query": "x", "kbs": ["nope"]}), 404)
    assert_error(call(app, "POST", "/v1/search", json={"query": "x", "mode": "magic"}), 422)


def test_methods_list_every_registered_method_with_option_schema(app):
    data = call(app, "GET", "/v1/methods").json()
    assert [m["name"] for m in data] == list(METHODS)
    pager = next(m for m in data if m["name"] == "pager")
    assert pager["model"] == "quaderno-pager"
    assert pager["options"]["properties"]["fill_mode"]["enum"] == ["rewrite", "section"]
    section = call(app, "GET", "/v1/methods/pager-section").json()
    assert section["options"]["properties"]["fill_mode"]["default"] == "section"
    assert "reasoner" in call(app, "GET", "/v1/methods/misknow").json()["roles"]
    assert_error(call(app, "GET", "/v1/methods/nope"), 404, "no method 'nope'")


def test_chunk_by_id_for_citations(app):
    res = call(app, "GET", "/v1/kbs/mma/chunks/y1")
    assert res.status_code == 200
    assert res.json()["title"] == "Gilbert Yvel" and XSS in res.json()["text"]
    assert_error(call(app, "GET", "/v1/kbs/mma/chunks/zz"), 404, "no chunk 'zz'")
    assert_error(call(app, "GET", "/v1/kbs/nope/chunks/y1"), 404)


# -- knowledge bases ------------------------------------------------------------------------
def test_kbs_list_get_delete(app, home):
    kbs = call(app, "GET", "/v1/kbs").json()
    assert [k["name"] for k in kbs] == ["mma"] and kbs[0]["chunks"] == 2
    assert kbs[0]["indexes"] == ["default"]
    assert call(app, "GET", "/v1/kbs/mma").json()["kind"] == "passage"
    assert_error(call(app, "GET", "/v1/kbs/nope"), 404)
    assert call(app, "DELETE", "/v1/kbs/mma").status_code == 204
    assert call(app, "GET", "/v1/kbs").json() == []
    assert_error(call(app, "DELETE", "/v1/kbs/mma"), 404)


def test_upload_existing_kb_is_409_and_bad_name_422(app):
    files = {"file": ("docs.jsonl", b'{"id": "a", "text": "x"}\n')}
    assert_error(call(app, "POST", "/v1/kbs", data={"name": "mma"}, files=files), 409,
                 "already exists")
    assert_error(call(app, "POST", "/v1/kbs", data={"name": "../x"}, files=files), 422,
                 "invalid knowledge base name")
    assert_error(call(app, "POST", "/v1/kbs", data={"name": "x"},
                      files={"file": ("evil.sh", b"rm -rf /")}), 422, "must end in")
    assert_error(call(app, "POST", "/v1/kbs", data={"name": "x", "format": "zip"},
                      files=files), 422, "unknown format")


def test_index_build_of_unknown_kb_is_404_and_needs_a_component(app):
    assert_error(call(app, "POST", "/v1/kbs/nope/index", json={}), 404)
    assert_error(call(app, "POST", "/v1/kbs/mma/index", json={"bm25": False}), 422,
                 "needs a component")


# -- server ---------------------------------------------------------------------------------
def test_health_info_and_openapi(app):
    assert call(app, "GET", "/v1/health").json() == {"status": "ok"}
    info = call(app, "GET", "/v1/info").json()
    assert info["llm"]["serialized"] is False and info["auth"] is False
    assert info["limits"]["max_inflight"] == 8 and info["kbs"] == ["mma"]
    assert "pager" in info["methods"]
    spec = call(app, "GET", "/openapi.json").json()
    for path in ("/v1/ask", "/v1/ask/stream", "/v1/chat/completions", "/v1/models",
                 "/v1/kbs", "/v1/evals", "/v1/jobs/{job_id}/events", "/v1/llm/log"):
        assert path in spec["paths"]


def test_llm_log_lists_calls_without_prompts(app):
    call(app, "POST", "/v1/ask", json={"question": QUESTION, "k": 2})
    rows = call(app, "GET", "/v1/llm/log", params={"n": 3}).json()
    assert len(rows) == 3 and rows[-1]["step"] == "answer"
    assert all("prompt" not in row for row in rows)
    assert call(app, "GET", "/v1/llm/log", params={"n": -1}).status_code == 422
