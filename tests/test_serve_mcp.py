"""The MCP server: an MCP client lists and calls the `ask` and `search` tools in memory, over
stdio (`quaderno mcp` as a subprocess whose LLM is the fake OpenAI-compatible server) and
over streamable HTTP behind the bearer token."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
import time

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from pydantic import SecretStr

from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.testing import FakeOpenAIServer
from quaderno.serve.guard import BearerAuth
from quaderno.serve.mcp_server import create_mcp
from quaderno.serve.settings import ServeSettings
from test_pager import QUESTION, Scripted
from test_serve_api import make_home

TOKEN = "mcp-token-0123456789abcdef"


@pytest.fixture
def kb_home(tmp_path):  # noqa: ANN001, ANN201
    return make_home(tmp_path / "home")


async def exercise(client: Client) -> dict:
    """List the tools and call each; what came back."""
    tools = (await client.list_tools()).tools
    found = await client.call_tool("search", {"query": "Dutch martial artist", "k": 1})
    asked = await client.call_tool("ask", {"question": QUESTION, "kbs": ["mma"], "k": 2})
    bad = await client.call_tool("ask", {"question": "q", "kbs": ["nope"]})
    return {"tools": {t.name: t for t in tools}, "search": found, "ask": asked, "bad": bad}


def check(out: dict) -> None:
    assert set(out["tools"]) == {"ask", "search"}
    schema = out["tools"]["ask"].input_schema
    assert schema["required"] == ["question"] and "method" in schema["properties"]
    assert out["tools"]["search"].description.startswith("The top K passages")
    search = out["search"]
    assert not search.is_error
    hits = json.loads(search.content[0].text)
    hits = hits if isinstance(hits, list) else [hits]
    assert hits[0]["chunk_id"] == "y1" and hits[0]["title"] == "Gilbert Yvel"
    asked = out["ask"]
    assert not asked.is_error
    answer = asked.structured_content
    assert answer["answer"] == "mixed martial artist" and answer["details"]["kind"] == "pager"
    assert {e["chunk_id"] for e in answer["evidence"]} == {"f1", "y1"}
    assert "trace" not in answer  # nothing the client did not ask for
    assert out["bad"].is_error
    assert "no knowledge base named 'nope'" in out["bad"].content[0].text


def test_mcp_client_in_memory_lists_and_calls_both_tools(kb_home):
    server = create_mcp(ServeSettings(home=kb_home), lm=LM(FakeLLM(respond=Scripted())))

    async def go() -> dict:
        async with Client(server) as client:
            return await exercise(client)

    check(asyncio.run(go()))


def test_mcp_tools_share_the_in_flight_limit(kb_home):
    from quaderno.serve.state import ServerState

    state = ServerState(ServeSettings(home=kb_home, max_inflight=1),
                        lm=LM(FakeLLM(respond=lambda r: "<answer>x</answer>", latency_s=0.3)))
    server = create_mcp(state=state)

    async def go() -> tuple:
        async with Client(server) as client:
            first = asyncio.create_task(client.call_tool(
                "ask", {"question": "q", "method": "vanilla-llm"}))
            for _ in range(200):
                if state.limiter.in_flight:
                    break
                await asyncio.sleep(0.005)
            second = await client.call_tool("ask", {"question": "q", "method": "vanilla-llm"})
            return await first, second

    first, second = asyncio.run(go())
    assert not first.is_error and second.is_error
    assert "answering 1 questions" in second.content[0].text


def test_quaderno_mcp_over_stdio(kb_home):
    script = Scripted()
    with FakeOpenAIServer(reply=lambda body: script(_request(body))) as llm:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "quaderno.cli.main", "mcp", "--home", str(kb_home), "--llm", "openai",
                  "--model", "fake-model", "--base-url", llm.url],
            env={"OPENAI_API_KEY": "unused", "PATH": os.environ.get("PATH", "")})

        async def go() -> dict:
            async with Client(params, read_timeout_seconds=60) as client:
                return await exercise(client)

        out = asyncio.run(go())
    check(out)
    assert script.roles[0] == "outline"  # the subprocess's LLM calls reached the fake server


def _request(body: dict):  # noqa: ANN202 - the ChatRequest the scripted model reads
    from quaderno.llm.types import ChatRequest

    return ChatRequest.of(body["messages"])


def test_mcp_over_streamable_http_needs_the_token(kb_home):
    server = create_mcp(ServeSettings(home=kb_home), lm=LM(FakeLLM(respond=Scripted())))
    app = BearerAuth(server.streamable_http_app(host="127.0.0.1"), SecretStr(TOKEN))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    for _ in range(500):
        if web.started:
            break
        time.sleep(0.01)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async def go() -> dict:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                return await exercise(client)

        check(asyncio.run(go()))
        refused = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401
    finally:
        web.should_exit = True
        thread.join(10)
