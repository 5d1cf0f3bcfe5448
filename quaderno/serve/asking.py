"""Answering a question for a client: checks first, then :func:`quaderno.ask.aask`, once, or
as a stream of step events while the method runs.

The checks (method, options against the method's spec, knowledge bases, gate) run before
anything is answered, so a bad request is a 422/404 status, never an event in a stream
already begun. Every entry (the REST routes, the OpenAI-compatible face, MCP) goes
through :class:`Asker`, and so through the same in-flight limiter.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import logging
import time
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from quaderno.ask import aask
from quaderno.errors import ConfigError
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer
from quaderno.serve.policy import check_options, method_spec
from quaderno.serve.errors import ErrorBody, error_info
from quaderno.serve.events import END, Event, StepEvents
from quaderno.serve.state import ServerState
from quaderno.serve.wire import (AskRequest, AskResponse, SearchHit, SearchRequest,
                                 ask_response)

log = logging.getLogger(__name__)

KEEPALIVE_S = 15.0

# the worker-thread calls (asyncio.to_thread) a question's task has started: a thread
# cannot be cancelled, so its slot stays taken until they return
HELD_THREADS: contextvars.ContextVar[list[concurrent.futures.Future] | None] = \
    contextvars.ContextVar("quaderno_held_threads", default=None)


class TrackingExecutor(concurrent.futures.ThreadPoolExecutor):
    """The loop's default executor, noting each call submitted by a question's task."""

    def submit(self, fn: Callable[..., Any], /, *args: Any,
               **kwargs: Any) -> concurrent.futures.Future:
        future = super().submit(fn, *args, **kwargs)
        held = HELD_THREADS.get()
        if held is not None:
            held.append(future)
        return future


class Slot:
    """A question's place in the limiter: given back once the method's task and the
    worker threads it started have really finished, not when the client goes away."""

    def __init__(self, release: Callable[[], None]) -> None:
        self.release = release
        self.started = False

    def on_close(self) -> None:
        """What the response calls when it ends: frees the slot if no task was started
        (a started one frees it when it is settled)."""
        if not self.started:
            self.release()


async def _settle(task: asyncio.Task, held: list[concurrent.futures.Future]) -> None:
    """Cancel ``task`` and wait until it, and the threads it started, have finished."""
    if not task.done():
        task.cancel()
    await asyncio.wait([task])
    running = [asyncio.wrap_future(f) for f in held if not f.done()]
    if running:
        await asyncio.wait(running)


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
        self._tracked: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()

    def _start(self, prepared: Prepared,
               trace: Trace) -> tuple[asyncio.Task, list[concurrent.futures.Future]]:
        """The method's task, with the worker threads it starts noted."""
        loop = asyncio.get_running_loop()
        if loop not in self._tracked:
            loop.set_default_executor(TrackingExecutor(thread_name_prefix="quaderno"))
            self._tracked.add(loop)
        held: list[concurrent.futures.Future] = []
        context = contextvars.copy_context()
        context.run(HELD_THREADS.set, held)
        return asyncio.create_task(self.run(prepared, trace), context=context), held

    @staticmethod
    async def _finish(task: asyncio.Task, held: list[concurrent.futures.Future],
                      release: Callable[[], None]) -> None:
        """Settle the task, then release the slot, even if the caller is cancelled."""
        settling = asyncio.ensure_future(_settle(task, held))
        settling.add_done_callback(lambda _: release())
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(settling)

    def prepare(self, request: AskRequest) -> Prepared:
        """Check ``request`` before any work: ConfigError (422) for a bad method, option or
        name; NotFoundError (404) for an unknown knowledge base or gate."""
        spec = method_spec(request.method)
        options = check_options(request.method, request.options)
        if request.k is not None and spec.needs_retrieval:
            options.setdefault("k", request.k)
        check_options(request.method, options)
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
        self.state.limiter.acquire(client)
        release = self.state.limiter.releaser(client)
        t0 = time.perf_counter()
        try:
            task, held = self._start(prepared, Trace(label=request.question))
        except BaseException:
            release()
            raise
        try:
            answer = await task
        finally:
            await self._finish(task, held, release)
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
        slot = Slot(self.state.limiter.releaser(client))
        return self._events(prepared, slot), slot.on_close

    async def _events(self, prepared: Prepared, slot: Slot) -> AsyncIterator[Event]:
        request = prepared.request
        trace = Trace(label=request.question)
        t0 = time.perf_counter()
        events = StepEvents(t0=t0, prompts=request.trace)
        trace.subscribe(events)
        slot.started = True
        task, held = self._start(prepared, trace)
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
        finally:  # the client may have gone away: stop answering, free the slot when done
            await self._finish(task, held, slot.release)
