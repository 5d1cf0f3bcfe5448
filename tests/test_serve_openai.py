"""The openai SDK talking to the OpenAI-compatible face: models, chat completions streaming
and not (citations in the message and the `quaderno` extension), errors; once over the ASGI
transport and once over real HTTP to uvicorn (with the bearer token as the SDK's API key)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import openai
import pytest
import uvicorn
from pydantic import SecretStr

from quaderno.methods.registry import METHODS
from test_pager import QUESTION
from test_serve_api import make_app, make_home

TOKEN = "sdk-token-0123456789abcdef"


@pytest.fixture
def kb_home(tmp_path):  # noqa: ANN001, ANN201
    return make_home(tmp_path / "home")


def sdk(app) -> openai.AsyncOpenAI:  # noqa: ANN001
    transport = httpx.ASGITransport(app=app)
    return openai.AsyncOpenAI(base_url="http://127.0.0.1/v1", api_key="unused",
                              http_client=httpx.AsyncClient(transport=transport),
                              max_retries=0)


def test_models_are_the_registered_methods(kb_home):
    async def go() -> list[str]:
        async with sdk(make_app(kb_home)) as client:
            return [m.id async for m in client.models.list()]

    assert asyncio.run(go()) == [f"quaderno-{name}" for name in METHODS]


def test_chat_completion_answers_with_numbered_sources(kb_home):
    async def go():  # noqa: ANN202
        async with sdk(make_app(kb_home)) as client:
            return await client.chat.completions.create(
                model="quaderno-pager", temperature=0.7,
                messages=[{"role": "system", "content": "be brief"},
                          {"role": "user", "content": "earlier question"},
                          {"role": "assistant", "content": "earlier answer"},
                          {"role": "user", "content": QUESTION}],
                extra_body={"quaderno": {"kbs": ["mma"], "k": 2}})

    completion = asyncio.run(go())
    text = completion.choices[0].message.content
    assert text.startswith("mixed martial artist\n\nSources:\n[1] ")
    assert "(mma/f1)" in text and "(mma/y1)" in text
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.total_tokens > 0
    extension = completion.model_extra["quaderno"]
    assert extension["details"]["kind"] == "pager" and extension["question"] == QUESTION
    assert [e["n"] for e in extension["evidence"]] == [1, 2]


def test_chat_completion_stream(kb_home):
    async def go():  # noqa: ANN202
        async with sdk(make_app(kb_home)) as client:
            stream = await client.chat.completions.create(
                model="quaderno-pager", stream=True,
                messages=[{"role": "user", "content": [{"type": "text", "text": QUESTION}]}],
                extra_body={"quaderno": {"k": 2}})
            return [chunk async for chunk in stream]

    chunks = asyncio.run(go())
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text.startswith("mixed martial artist") and "[2] " in text
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[-1].model_extra["quaderno"]["method"] == "pager"


def test_sdk_sees_errors_with_their_status(kb_home):
    async def go(**kwargs):  # noqa: ANN003, ANN202
        async with sdk(make_app(kb_home)) as client:
            return await client.chat.completions.create(**kwargs)

    with pytest.raises(openai.NotFoundError, match="quaderno-nope"):
        asyncio.run(go(model="quaderno-nope", messages=[{"role": "user", "content": "q"}]))
    with pytest.raises(openai.NotFoundError, match="no knowledge base"):
        asyncio.run(go(model="quaderno-pager", messages=[{"role": "user", "content": "q"}],
                       extra_body={"quaderno": {"kbs": ["nope"]}}))
    with pytest.raises(openai.UnprocessableEntityError, match="no user message"):
        asyncio.run(go(model="quaderno-vanilla-llm",
                       messages=[{"role": "system", "content": "only a system message"}]))


@contextlib.contextmanager
def running(app) -> Iterator[str]:  # noqa: ANN001
    """``app`` served by uvicorn in a thread on a free loopback port: its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(1000):
        if server.started:
            break
        time.sleep(0.01)
    assert server.started, "uvicorn did not start in 10 s"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def served(kb_home) -> Iterator[str]:  # noqa: ANN001
    """The app with a token, over real HTTP: the SDK's base URL."""
    with running(make_app(kb_home, token=SecretStr(TOKEN))) as url:
        yield f"{url}/v1"


def test_sdk_over_real_http_with_the_token_as_api_key(served):
    client = openai.OpenAI(base_url=served, api_key=TOKEN, max_retries=0)
    completion = client.chat.completions.create(
        model="quaderno-pager", messages=[{"role": "user", "content": QUESTION}],
        extra_body={"quaderno": {"k": 2}})
    assert completion.choices[0].message.content.startswith("mixed martial artist")
    stream = client.chat.completions.create(
        model="quaderno-pager", messages=[{"role": "user", "content": QUESTION}], stream=True,
        extra_body={"quaderno": {"k": 2}})
    text = "".join(c.choices[0].delta.content or "" for c in stream)
    assert text.startswith("mixed martial artist") and "Sources:" in text
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=served, api_key="wrong", max_retries=0).models.list()
