"""Step events: a method's trace as it grows, sent as server-sent events.

:class:`StepEvents` listens to a :class:`~quaderno.llm.trace.Trace` and turns each change
into an :class:`Event`, serialized at once (a span's outputs are those it had when it
closed). The stream of one question reads::

    event: start       data: {"question", "method"}
    event: span_open   data: SpanOpened  (id, parent, name, inputs, t)
    event: llm_call    data: CallMade    (span_id, step, model, tokens, latency; prompt and
                                          reply only when the request asked for the trace)
    event: span_close  data: SpanClosed  (id, parent, name, outputs, error, notes, t, seconds)
    ...
    event: answer      data: AskResponse        (or  event: error  data: ErrorBody)

Every event has an ``id:`` (its sequence number from 0). A comment line (``: working``)
keeps the connection alive while a long LLM call runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from fastapi.sse import format_sse_event
from pydantic import BaseModel, Field
from pydantic_core import to_json, to_jsonable_python
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from quaderno.llm.trace import CallRecord, Span


@dataclass(frozen=True)
class Event:
    name: str
    data: Any
    id: int | None = None
    comment: str | None = None

    def encode(self) -> bytes:
        if self.comment is not None:
            return format_sse_event(comment=self.comment)
        return format_sse_event(data_str=to_json(self.data).decode("utf-8"), event=self.name,
                                id=None if self.id is None else str(self.id))


END = Event(name="end", data=None)
HIDDEN_ERROR = "failed (the server log has the details; ask with trace: true to see them)"


class SpanOpened(BaseModel):
    id: str
    parent: str | None
    name: str
    inputs: dict[str, Any]
    t: float = Field(..., description="seconds since the question arrived")


class SpanClosed(BaseModel):
    id: str
    parent: str | None
    name: str
    outputs: dict[str, Any]
    error: str | None
    notes: list[str]
    t: float
    seconds: float


class CallMade(BaseModel):
    span_id: str | None
    step: str | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool
    error: str | None
    t: float
    prompt: list[dict[str, str]] | None = None
    response: str | None = None


def _json(value: Any) -> Any:
    return to_jsonable_python(value, fallback=str)


class StepEvents:
    """A trace listener that queues step events (thread-safe: it may be told from a worker
    thread; events keep their order through the loop's callback queue)."""

    def __init__(self, *, t0: float, prompts: bool = False) -> None:
        self.queue: asyncio.Queue[Event] = asyncio.Queue()
        self.loop = asyncio.get_running_loop()
        self.t0 = t0
        self.prompts = prompts
        self._seq = 0

    def _t(self) -> float:
        return round(time.perf_counter() - self.t0, 4)

    def make(self, name: str, data: Any) -> Event:
        event = Event(name=name, data=data, id=self._seq)
        self._seq += 1
        return event

    def _put(self, name: str, model: BaseModel) -> None:
        data = model.model_dump(mode="json")
        self.loop.call_soon_threadsafe(lambda: self.queue.put_nowait(self.make(name, data)))

    def started(self, question: str, method: str) -> Event:
        return self.make("start", {"question": question, "method": method})

    def span_opened(self, span: Span) -> None:
        self._put("span_open", SpanOpened(id=span.id, parent=span.parent, name=span.name,
                                          inputs=_json(span.inputs), t=self._t()))

    def _error(self, error: str | None) -> str | None:
        """An error's text only for a client that asked for the trace (it may hold the
        server's paths, an upstream URL or body); otherwise that there was one."""
        if error is None or self.prompts:
            return error
        return HIDDEN_ERROR

    def span_closed(self, span: Span) -> None:
        self._put("span_close", SpanClosed(
            id=span.id, parent=span.parent, name=span.name, outputs=_json(span.outputs),
            error=self._error(span.error), notes=list(span.notes), t=self._t(),
            seconds=round(span.seconds, 4)))

    def call_recorded(self, call: CallRecord) -> None:
        self._put("llm_call", CallMade(
            span_id=call.span_id, step=call.step, model=call.model,
            prompt_tokens=call.usage.prompt_tokens,
            completion_tokens=call.usage.completion_tokens, latency_s=call.latency_s,
            cached=call.cached, error=self._error(call.error), t=self._t(),
            prompt=call.prompt if self.prompts else None,
            response=call.response if self.prompts else None))

    def close(self) -> None:
        """No more events: the stream ends after those already queued."""
        self.loop.call_soon_threadsafe(self.queue.put_nowait, END)


class SSEResponse(StreamingResponse):
    """A ``text/event-stream`` of :class:`Event` (or of pre-encoded chunks); ``on_close``
    runs when the response ends, however it ends (a client that went away included)."""

    media_type = "text/event-stream"

    def __init__(self, events: AsyncIterator[Event] | AsyncIterator[bytes],
                 on_close: Callable[[], None] | None = None) -> None:
        self._events = events
        self._on_close = on_close
        super().__init__(self._encoded(), headers={"Cache-Control": "no-store",
                                                   "X-Accel-Buffering": "no"})

    async def _encoded(self) -> AsyncIterator[bytes]:
        async for event in self._events:
            yield event.encode() if isinstance(event, Event) else event

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            try:
                aclose = getattr(self._events, "aclose", None)
                if aclose is not None:
                    await aclose()
            finally:  # even when closing was cancelled: the slot must not leak
                if self._on_close is not None:
                    self._on_close()


# one event of the stream, as OpenAPI 3.2 describes server-sent events (FastAPI's schema)
SSE_EVENT_SCHEMA = {"type": "object", "properties": {
    "data": {"type": "string", "description": "JSON"}, "event": {"type": "string"},
    "id": {"type": "string"}, "retry": {"type": "integer", "minimum": 0}}}
SSE_DOC = {"description": "server-sent events (text/event-stream); see docs/serve.md",
           "content": {"text/event-stream": {"schema": SSE_EVENT_SCHEMA}}}
