"""`quaderno ask` end to end over HTTP (the fake OpenAI-compatible server plays PAGER's roles),
and the Python API."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from quaderno.ask import ask
from quaderno.cli.main import app
from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.testing import FakeOpenAIServer
from quaderno.llm.types import ChatRequest
from test_pager import QUESTION, Scripted

runner = CliRunner()


@pytest.fixture
def home(tmp_path):
    from quaderno.workspace import Workspace
    ws = Workspace(tmp_path / "home")
    ws.add_kb("mma", [
        Chunk(id="f1", title="Kazuyuki Fujita", text="Kazuyuki Fujita is a Japanese mixed martial "
              "artist."),
        Chunk(id="y1", title="Gilbert Yvel", text="Gilbert Yvel is a Dutch mixed martial artist."),
    ])
    ws.build_index("mma", embedder=None)
    return ws.root


@pytest.fixture
def server():
    script = Scripted()
    with FakeOpenAIServer(reply=lambda body: script(ChatRequest.of(body["messages"]))) as srv:
        srv.script_roles = script.roles
        yield srv


def cli(home, server, *args):
    return runner.invoke(app, ["ask", *args, "--llm", "openai", "--model", "fake-model",
                               "--base-url", server.url, "--home", str(home)])


def test_ask_json_over_http(home, server):
    res = cli(home, server, QUESTION, "--json", "--no-cache")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["answer"] == "mixed martial artist" and data["method"] == "pager"
    page = data["details"]["page"]  # PAGER's typed details (kind "pager")
    assert data["details"]["kind"] == "pager"
    assert [s["title"] for s in page["sections"]] == ["Kazuyuki Fujita", "Gilbert Yvel",
                                                      "Common Profession"]
    assert page["sections"][0]["chunk_ids"][0] == "f1"
    assert server.script_roles[0] == "outline" and server.script_roles[-1] == "answer"
    assert len(server.requests) == 8


def test_ask_trace_shows_pages_subqueries_documents_and_tokens(home, server):
    res = cli(home, server, QUESTION, "--trace", "--no-cache")
    assert res.exit_code == 0, res.output
    out = res.output
    assert "pager.outline" in out and "sub-query: 'Who is Kazuyuki Fujita? (martial)'" in out
    assert "· Kazuyuki Fujita" in out  # retrieved titles
    assert "Kazuyuki Fujita: filled from documents." in out  # the page after a fill
    assert "LLM calls" in out and "pager.fill_rewrite" in out
    assert "mixed martial artist" in out


def test_ask_other_methods_and_errors(home, server):
    res = cli(home, server, QUESTION, "--method", "vanilla-rag", "--json", "--no-cache")
    assert res.exit_code == 0 and json.loads(res.output)["method"] == "vanilla-rag"
    res = cli(home, server, QUESTION, "--method", "nope")
    assert res.exit_code == 2 and "unknown method 'nope'" in res.output
    res = cli(home, server, QUESTION, "--kb", "missing")
    assert res.exit_code == 2 and "no knowledge base named 'missing'" in res.output


def test_python_api_mirrors_the_cli(home):
    answer = ask(QUESTION, method="pager-section", kbs=["mma"], k=2,
                 lm=LM(FakeLLM(respond=Scripted())), home=home)
    assert answer.method == "pager-section" and answer.page.complete
    assert answer.answer == "mixed martial artist"
