"""Answering a question for a client: checks first, then :func:`quaderno.ask.aask`, once, or
as a stream of step events while the method runs.

The checks (method, options against the method's spec, knowledge bases, gate) run before
anything is answered, so a bad request is a 422/404 status, never an event in a stream
already begun. Every entry (the REST routes, the OpenAI-compatible face, MCP) goes
through :class:`Asker`, and so through the same in-flight limiter.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from quaderno.ask import aask
from quaderno.errors import ConfigError
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer
from quaderno.methods.registry import get_spec
from quaderno.serve.errors import ErrorBody, error_info
from quaderno.serve.events import END, Event, StepEvents
from quaderno.serve.state import ServerState
from quaderno.serve.wire import (AskRequest, AskResponse, SearchHit, SearchRequest,
                                 ask_response)

log = logging.getLogger(__name__)

KEEPALIVE_S = 15.0


@dataclass
class Prepared:
    """A request that passed the checks: what :func:`aask` will be called with."""

    request: AskRequest
    kbs: list[str] | None
    gate: str | None
    options: dict[str, Any] = field(default_factory=dict)


class Asker:
    """Answers questions for the server's clients within its limits."""

    def __init__(self, state: ServerState) -> None:
        self.state = state

    def prepare(self, request: AskRequest) -> Prepared:
        """Check ``request`` before any work: ConfigError (422) for a bad method, option or
        name; NotFoundError (404) for an unknown knowledge base or gate."""
        spec = get_spec(request.method)
        options = dict(request.options)
        if request.k is not None and spec.needs_retrieval:
            options.setdefault("k", request.k)
        if "store_dir" in options:
            raise ConfigError("option 'store_dir' is the server's to choose (DocSage keeps its "
                              "tuple store in the workspace); leave it out")
        spec.validate(options)
        ws = self.state.workspace
        kbs = list(request.kbs) if request.kbs else None
        if spec.needs_retrieval:
            for name in kbs or ws.kb_names():
                ws.kb(name)  # NotFoundError names the known ones
            if not (kbs or ws.kb_names()):
                raise ConfigError(f"method {request.method!r} needs a knowledge base and the "
                                  "workspace has none: upload one (POST /v1/kbs) or choose "
                                  "a method without retrieval, e.g. vanilla-llm")
        return Prepared(request, kbs, self.state.gate_spec(request.gate), options)

    async def search(self, request: SearchRequest) -> list[SearchHit]:
        """The top chunks of knowledge bases for a query (no LLM, no slot)."""
        ws = self.state.workspace
        names = request.kbs or ws.kb_names()
        for name in names:
            ws.kb(name)  # NotFoundError names the known ones
        if not names:
            return []
        retriever = ws.retriever(names, mode=request.mode, strategy=request.strategy,
                                 cache=False)
        hits = await asyncio.to_thread(retriever.retrieve, request.query, request.k)
        return [SearchHit(rank=h.rank, score=h.score, retriever=h.retriever,
                          chunk_id=h.chunk.id, kb=h.chunk.kb, title=h.chunk.title,
                          text=h.chunk.text) for h in hits]

    async def run(self, prepared: Prepared, trace: Trace) -> Answer:
        r = prepared.request
        lm = await self.state.lm()
        roles = await self.state.roles_for(r.method)
        return await aask(r.question, method=r.method, kbs=prepared.kbs, mode=r.mode, k=r.k,
                          lm=lm, roles=roles, workspace=self.state.workspace,
                          options=prepared.options, gate=prepared.gate, trace=trace)

    async def answer(self, request: AskRequest, client: str) -> AskResponse:
        """The answer to ``request``, within ``client``'s share of questions in flight."""
        prepared = self.prepare(request)
        with self.state.limiter.slot(client):
            t0 = time.perf_counter()
            answer = await self.run(prepared, Trace(label=request.question))
            return ask_response(answer, seconds=time.perf_counter() - t0,
                                with_trace=request.trace)

    def stream(self, request: AskRequest,
               client: str) -> tuple[AsyncIterator[Event], Callable[[], None]]:
        """Check ``request`` and take a slot now (raising a status); then the step events of
        the method while it runs, ending with ``answer`` (or ``error``), and the function
        that gives the slot back (:class:`~quaderno.serve.events.SSEResponse` calls it when
        the stream ends or the client goes away)."""
        prepared = self.prepare(request)
        self.state.limiter.acquire(client)
        return self._events(prepared), self.state.limiter.releaser(client)

    async def _events(self, prepared: Prepared) -> AsyncIterator[Event]:
        request = prepared.request
        trace = Trace(label=request.question)
        t0 = time.perf_counter()
        events = StepEvents(t0=t0, prompts=request.trace)
        trace.subscribe(events)
        task = asyncio.create_task(self.run(prepared, trace))
        task.add_done_callback(lambda _: events.close())
        try:
            yield events.started(request.question, request.method)
            while True:
                try:
                    event = await asyncio.wait_for(events.queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    yield Event(name="", data=None, comment="working")
                    continue
                if event is END:
                    break
                yield event
            try:
                answer = task.result()
            except Exception as exc:  # the method failed: the stream says why, with a status
                info = error_info(exc)
                if info.type == "InternalError":
                    log.error("streamed question failed", exc_info=exc)
                yield events.make("error", ErrorBody(error=info).model_dump())
                return
            response = ask_response(answer, seconds=time.perf_counter() - t0,
                                    with_trace=request.trace)
            yield events.make("answer", response.model_dump(mode="json"))
        finally:
            if not task.done():  # the client went away: stop answering
                task.cancel()
