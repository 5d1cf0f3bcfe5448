"""Per-question traces: a tree of named steps (spans) and every LLM call, serializable to JSON.

Spans have ids (``s1``, ``s2``, … in opening order) and name their parent: a span opened
while another is open (in the same task, or in a task started from inside it) is its
child. Each LLM call names the span that was open when it was made, so a trace reads as a
tree of steps with their calls::

    with trace.span("pager.fill", section="Early life") as span:   # s3, parent s1
        await step.run(lm, trace=trace, ...)                       # the call names s3

The open span is tracked per asyncio task in a context variable, so concurrent steps (a
``gather`` of fills) each see their own parent.

A :class:`TraceListener` subscribed with :meth:`Trace.subscribe` sees each span open and
close and each call recorded as it happens (the server streams them as step events); a
trace without listeners behaves exactly as before, and listeners are never serialized.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from pydantic import BaseModel, Field, PrivateAttr

from quaderno.llm.types import Usage

log = logging.getLogger(__name__)

# trace id(...) -> id of the span open in this context (copy-on-write; per task)
_OPEN: contextvars.ContextVar[dict[int, str]] = contextvars.ContextVar("quaderno_open_span",
                                                                       default={})


class CallRecord(BaseModel):
    """One LLM call as seen by the caller."""

    step: str | None = None
    span_id: str | None = None  # the span open when the call was made
    model: str
    prompt: list[dict[str, str]]
    response: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False
    retries: int = 0
    constrained: bool = False
    error: str | None = None


class Span(BaseModel):
    """A named step with its inputs, outputs, timing and notes (fallbacks taken)."""

    id: str = ""
    parent: str | None = None
    name: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] = Field(default_factory=dict)
    start: float = 0.0
    end: float | None = None
    error: str | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def seconds(self) -> float:
        return (self.end or time.time()) - self.start


class TraceListener(Protocol):
    """Sees a trace grow: called in the task that opens or closes the span or makes the call,
    right after the trace itself changed. It must be quick and must not block; an exception
    it raises is logged and does not reach the method."""

    def span_opened(self, span: Span) -> None: ...

    def span_closed(self, span: Span) -> None: ...

    def call_recorded(self, call: CallRecord) -> None: ...


class Trace(BaseModel):
    """Everything that happened while answering one question."""

    label: str = ""
    spans: list[Span] = Field(default_factory=list)
    calls: list[CallRecord] = Field(default_factory=list)
    fallbacks: list[str] = Field(default_factory=list)
    _by_id: dict[str, Span] = PrivateAttr(default_factory=dict)
    _listeners: list[TraceListener] = PrivateAttr(default_factory=list)

    def subscribe(self, listener: TraceListener) -> Callable[[], None]:
        """Tell ``listener`` about every span opened or closed and every call recorded from
        now on; returns the function that unsubscribes it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _notify(self, event: str, item: Span | CallRecord) -> None:
        for listener in list(self._listeners):
            try:
                getattr(listener, event)(item)
            except Exception:  # a listener's fault must not fail the answer it watches
                log.warning("trace listener %r failed on %s", listener, event, exc_info=True)

    def current_span_id(self) -> str | None:
        """The id of the span open in the calling task, if any."""
        return _OPEN.get().get(id(self))

    def get_span(self, span_id: str) -> Span | None:
        span = self._by_id.get(span_id)
        if span is None and len(self._by_id) != len(self.spans):  # e.g. read back from JSON
            self._by_id = {s.id: s for s in self.spans}
            span = self._by_id.get(span_id)
        return span

    @contextlib.contextmanager
    def span(self, name: str, **inputs: Any) -> Iterator[Span]:
        span = Span(id=f"s{len(self.spans) + 1}", parent=self.current_span_id(), name=name,
                    inputs=inputs, start=time.time())
        self.spans.append(span)
        self._by_id[span.id] = span
        token = _OPEN.set({**_OPEN.get(), id(self): span.id})
        if self._listeners:
            self._notify("span_opened", span)
        try:
            yield span
        except BaseException as exc:
            span.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            span.end = time.time()
            _OPEN.reset(token)
            if self._listeners:
                self._notify("span_closed", span)

    def fallback(self, what: str, span: Span | None = None) -> None:
        """Record that a defined fallback was taken (a weak model's reply was repaired);
        the note goes to ``span``, else to the span open now."""
        self.fallbacks.append(what)
        if span is None:
            open_id = self.current_span_id()
            span = self.get_span(open_id) if open_id else None
        if span is not None:
            span.notes.append(what)

    def record(self, call: CallRecord) -> None:
        if call.span_id is None:
            call.span_id = self.current_span_id()
        self.calls.append(call)
        if self._listeners:
            self._notify("call_recorded", call)

    def depth(self, span: Span) -> int:
        """How many ancestors ``span`` has."""
        n, parent = 0, span.parent
        while parent is not None and (up := self.get_span(parent)) is not None:
            n, parent = n + 1, up.parent
        return n

    def children(self, span_id: str | None) -> list[Span]:
        return [s for s in self.spans if s.parent == span_id]

    @property
    def usage(self) -> Usage:
        """Tokens of every call, cached ones included: what the method costs, the same
        whether the cache was cold or warm (a cached reply keeps the usage it had)."""
        total = Usage()
        for call in self.calls:
            total = total + call.usage
        return total

    def summary(self) -> dict[str, Any]:
        usage = self.usage
        return {"llm_calls": len(self.calls),
                "cached_calls": sum(c.cached for c in self.calls),
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "llm_seconds": round(sum(c.latency_s for c in self.calls), 3),
                "fallbacks": list(self.fallbacks)}
