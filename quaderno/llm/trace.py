"""Per-question traces: named steps (spans) and every LLM call, serializable to JSON."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, Field

from quaderno.llm.types import Usage


class CallRecord(BaseModel):
    """One LLM call as seen by the caller."""

    step: str | None = None
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


class Trace(BaseModel):
    """Everything that happened while answering one question."""

    label: str = ""
    spans: list[Span] = Field(default_factory=list)
    calls: list[CallRecord] = Field(default_factory=list)
    fallbacks: list[str] = Field(default_factory=list)

    @contextlib.contextmanager
    def span(self, name: str, **inputs: Any) -> Iterator[Span]:
        span = Span(name=name, inputs=inputs, start=time.time())
        self.spans.append(span)
        try:
            yield span
        except BaseException as exc:
            span.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            span.end = time.time()

    def fallback(self, what: str, span: Span | None = None) -> None:
        """Record that a defined fallback was taken (a weak model's reply was repaired)."""
        self.fallbacks.append(what)
        if span is not None:
            span.notes.append(what)

    def record(self, call: CallRecord) -> None:
        self.calls.append(call)

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
