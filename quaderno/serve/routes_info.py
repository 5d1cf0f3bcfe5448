"""Routes about the server itself: health, info (the LLM, whether it serializes requests,
the limits) and the LLM call log (``quaderno llm log``)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Query, Request

from quaderno import __version__
from quaderno.llm.calllog import CallLog, CallRow
from quaderno.methods.registry import METHODS
from quaderno.serve.errors import ERROR_RESPONSES
from quaderno.serve.state import ServerState
from quaderno.serve.wire import InfoOut, LimitsOut

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES, tags=["server"])


def _state(request: Request) -> ServerState:
    return request.app.state.quaderno


@router.get("/health")
async def health() -> dict[str, str]:
    """Always ``{"status": "ok"}`` (no token needed)."""
    return {"status": "ok"}


@router.get("/info", response_model=InfoOut)
async def info(request: Request) -> InfoOut:
    """The version, the LLM (and whether the embedded model serializes requests), the
    limits and whether a token is required. Never a key or a token."""
    state = _state(request)
    s = state.settings
    return InfoOut(version=__version__, llm=state.llm_info(),
                   limits=LimitsOut(max_inflight=s.max_inflight,
                                    max_inflight_per_client=s.max_inflight_per_client,
                                    max_request_bytes=s.max_request_bytes,
                                    max_upload_bytes=s.max_upload_bytes,
                                    in_flight=state.limiter.in_flight),
                   auth=s.token is not None, methods=list(METHODS),
                   kbs=state.workspace.kb_names())


@router.get("/llm/log", response_model=list[CallRow])
async def llm_log(request: Request, n: int = Query(20, ge=0, le=1000),
                  model: str | None = Query(None, max_length=200)) -> list[CallRow]:
    """The latest ``n`` LLM calls, oldest first: step, tokens, latency, cache (no prompts:
    the log never holds them). Question labels and error texts belong to the clients that
    asked; they are shown only when the server runs with ``--llm-log-details``."""
    state = _state(request)
    path = state.workspace.root / "cache" / "llm.sqlite"
    if not path.is_file():
        return []
    rows = await asyncio.to_thread(lambda: CallLog(path).latest(n, model=model))
    if state.settings.llm_log_details:
        return rows
    return [r.model_copy(update={"label": None,
                                 "error": None if r.error is None else "failed"})
            for r in rows]
