"""Routes to ask, search, list methods and read a chunk."""

from __future__ import annotations

from fastapi import APIRouter, Request

from quaderno.errors import NotFoundError
from quaderno.methods.registry import METHODS
from quaderno.methods.spec import MethodSpec
from quaderno.serve.errors import ERROR_RESPONSES
from quaderno.serve.events import SSE_DOC, SSEResponse
from quaderno.serve.wire import (AskRequest, AskResponse, ChunkOut, MethodInfo, SearchHit,
                                 SearchRequest)

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
