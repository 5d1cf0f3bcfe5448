"""Routes to ask, search, list methods and read a chunk."""

from __future__ import annotations

import json

from fastapi import APIRouter, Query, Request
from pydantic import ValidationError

from quaderno.errors import ConfigError, NotFoundError
from quaderno.methods.registry import METHODS
from quaderno.methods.spec import MethodSpec
from quaderno.serve.errors import ERROR_RESPONSES
from quaderno.serve.events import SSE_DOC, SSEResponse
from quaderno.serve.wire import (AskRequest, AskResponse, ChunkOut, MethodInfo, Mode,
                                 SearchHit, SearchRequest)

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)

MODEL_PREFIX = "quaderno-"


def client_of(request: Request) -> str:
    """Who a request counts against: its peer address."""
    return request.client.host if request.client else "unknown"


def method_info(spec: MethodSpec) -> MethodInfo:
    d = spec.describe()
    return MethodInfo(name=spec.name, model=MODEL_PREFIX + spec.name, paper=d["paper"],
                      summary=d["summary"], needs_retrieval=d["needs_retrieval"],
                      roles=list(spec.roles), options=d["options"])


@router.post("/ask", response_model=AskResponse, tags=["ask"])
async def ask(body: AskRequest, request: Request) -> AskResponse:
    """Answer a question with a method (its options checked against its schema) over
    knowledge bases; the trace only with ``trace: true``."""
    return await request.app.state.asker.answer(body, client_of(request))


@router.post("/ask/stream", tags=["ask"], response_model=None,
             responses={200: SSE_DOC})
async def ask_stream(body: AskRequest, request: Request) -> SSEResponse:
    """The same as ``/v1/ask``, as server-sent events while the method runs: ``start``,
    then ``span_open`` / ``llm_call`` / ``span_close`` in the order they happen, then
    ``answer`` (an AskResponse) or ``error`` (an ErrorBody)."""
    events, release = request.app.state.asker.stream(body, client_of(request))
    return SSEResponse(events, on_close=release)


@router.get("/ask/stream", tags=["ask"], response_model=None, responses={200: SSE_DOC})
async def ask_stream_get(
    request: Request,
    question: str = Query(..., min_length=1, max_length=8000),
    method: str = Query("pager", max_length=100),
    kbs: list[str] | None = Query(None, description="repeat for several [default: all]"),
    k: int | None = Query(None, ge=1, le=100),
    mode: Mode = Query("auto"),
    gate: str | None = Query(None, max_length=200),
    options: str = Query("{}", max_length=8000, description="the method's options as a "
                                                            "JSON object"),
    trace: bool = Query(False),
) -> SSEResponse:
    """The stream for a browser's ``EventSource`` (which can only GET): the same events as
    ``POST /v1/ask/stream``. Close the EventSource on ``answer`` or ``error``: it would
    otherwise reconnect and ask again."""
    try:
        parsed = json.loads(options)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"options must be a JSON object, got {options[:80]!r} ({exc.msg})") \
            from None
    if not isinstance(parsed, dict):
        raise ConfigError(f"options must be a JSON object, got {type(parsed).__name__}")
    try:
        body = AskRequest(question=question, method=method, kbs=kbs, k=k, mode=mode,
                          gate=gate, options=parsed, trace=trace)
    except ValidationError as exc:
        raise ConfigError(f"invalid request: {exc.errors()[0]['msg']}") from None
    return await ask_stream(body, request)


@router.post("/search", response_model=list[SearchHit], tags=["ask"])
async def search(body: SearchRequest, request: Request) -> list[SearchHit]:
    """The top chunks of knowledge bases for a query (no LLM)."""
    return await request.app.state.asker.search(body)


@router.get("/methods", response_model=list[MethodInfo], tags=["methods"])
async def methods() -> list[MethodInfo]:
    """Every registered method with the JSON Schema of its options."""
    return [method_info(spec) for spec in METHODS.values()]


@router.get("/methods/{name}", response_model=MethodInfo, tags=["methods"])
async def method(name: str) -> MethodInfo:
    if name not in METHODS:
        raise NotFoundError(f"no method {name!r}; GET /v1/methods lists them")
    return method_info(METHODS.spec(name))


@router.get("/kbs/{kb}/chunks/{chunk_id:path}", response_model=ChunkOut, tags=["kbs"])
async def chunk(kb: str, chunk_id: str, request: Request) -> ChunkOut:
    """One chunk by id: what a citation (an answer's evidence) points to."""
    c = request.app.state.quaderno.workspace.kb(kb).get(chunk_id)
    return ChunkOut(id=c.id, kb=c.kb, title=c.title, text=c.text, source=c.source,
                    meta=c.meta)
