"""Background jobs with progress: knowledge-base uploads, index builds, evaluation runs.

A job is an asyncio task on the server's loop (blocking work goes to a thread inside it).
Its progress is a :class:`~quaderno.serve.wire.JobProgress` replaced whole on each update,
so a worker thread may report it without a lock; ``version`` grows with every change, and
:meth:`JobManager.changes` yields a job's states as they change (the SSE progress stream).
One job at a time works on a target (a knowledge base, a run): a second is a 409; at most
``max_running`` jobs run at once in all, and at most ``max_watchers`` progress streams are
open at once (429 beyond either). A stream polls every :data:`POLL_S` (it never spins) and
sends a keep-alive every :data:`KEEPALIVE_S` while nothing changes.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from quaderno.errors import AlreadyExistsError, NotFoundError
from quaderno.serve.errors import TooManyRequestsError, error_info
from quaderno.serve.wire import JobOut, JobProgress

log = logging.getLogger(__name__)

POLL_S = 0.5
KEEPALIVE_S = 15.0


@dataclass
class Job:
    id: str
    kind: str
    target: str
    state: str = "queued"
    progress: JobProgress = field(default_factory=JobProgress)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    version: int = 0
    task: asyncio.Task | None = None

    def report(self, stage: str, done: int, total: int | None = None) -> None:
        """Progress, callable from any thread."""
        self.progress = JobProgress(stage=stage, done=done, total=total)
        self.version += 1

    @property
    def done(self) -> bool:
        return self.state in ("succeeded", "failed")

    def out(self) -> JobOut:
        return JobOut(id=self.id, kind=self.kind, target=self.target,  # type: ignore[arg-type]
                      state=self.state, progress=self.progress,  # type: ignore[arg-type]
                      result=self.result, error=self.error, created=self.created,
                      started=self.started, finished=self.finished)


Work = Callable[[Job], Awaitable[dict[str, Any]]]


class JobManager:
    """The jobs of one server; finished ones are kept (the newest ``keep``) for reading."""

    def __init__(self, keep: int = 200, *, max_running: int = 4,
                 max_watchers: int = 32) -> None:
        self.keep = keep
        self.max_running = max_running
        self.max_watchers = max_watchers
        self.watchers = 0
        self._jobs: dict[str, Job] = {}

    def start(self, kind: str, target: str, work: Work) -> Job:
        """Run ``work(job)`` in the background; its returned dict is the job's result.
        A job still working on the same target (of the same group of kinds) is a 409."""
        busy = [j for j in self._jobs.values()
                if not j.done and (j.target, _group(j.kind)) == (target, _group(kind))]
        if busy:
            raise AlreadyExistsError(f"job {busy[0].id} ({busy[0].kind}) is already working on "
                                     f"{target!r}; wait for it (GET /v1/jobs/{busy[0].id})")
        running = sum(1 for j in self._jobs.values() if not j.done)
        if running >= self.max_running:
            raise TooManyRequestsError(f"the server is running {running} jobs, its limit "
                                       f"({self.max_running}); wait for one to finish",
                                       retry_after=5)
        job = Job(id=uuid.uuid4().hex[:12], kind=kind, target=target)
        self._jobs[job.id] = job
        job.task = asyncio.get_running_loop().create_task(self._run(job, work),
                                                          name=f"job-{job.id}")
        self._forget_old()
        return job

    async def _run(self, job: Job, work: Work) -> None:
        job.state, job.started = "running", time.time()
        job.version += 1
        try:
            job.result = await work(job)
            job.state = "succeeded"
        except asyncio.CancelledError:
            job.state = "failed"
            job.error = {"type": "Cancelled", "status": 503, "message": "the server stopped",
                         "hint": "start the job again"}
            raise
        except Exception as exc:  # a job's failure is its result, never the server's
            info = error_info(exc)
            if info.status >= 500 and info.type == "InternalError":
                log.error("job %s (%s %s) failed", job.id, job.kind, job.target, exc_info=exc)
            job.state, job.error = "failed", info.model_dump()
        finally:
            job.finished = time.time()
            job.version += 1

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise NotFoundError(f"no job {job_id!r} (GET /v1/jobs lists them)")
        return job

    def list(self) -> list[Job]:
        return sorted(self._jobs.values(), key=lambda j: j.created, reverse=True)

    def running(self, kind: str, target: str) -> Job | None:
        return next((j for j in self._jobs.values()
                     if j.kind == kind and j.target == target and not j.done), None)

    def watch(self, job_id: str) -> tuple[AsyncIterator[JobOut | None], Callable[[], None]]:
        """Take a watcher's place now (429 when ``max_watchers`` are open): the job's
        changes, and the function that gives the place back (once, however often called)."""
        self.get(job_id)
        if self.watchers >= self.max_watchers:
            raise TooManyRequestsError(f"{self.watchers} job progress streams are open, the "
                                       f"server's limit; poll GET /v1/jobs/{job_id} instead",
                                       retry_after=5)
        self.watchers += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.watchers -= 1

        return self.changes(job_id), release

    async def changes(self, job_id: str, *, poll_s: float = POLL_S,
                      keepalive_s: float = KEEPALIVE_S) -> AsyncIterator[JobOut | None]:
        """The job's state now, then each time it changes, until it is done; ``None`` (a
        keep-alive) after ``keepalive_s`` without a change."""
        job = self.get(job_id)
        seen = -1
        quiet = 0.0
        while True:
            if job.version != seen:
                seen, quiet = job.version, 0.0
                yield job.out()
                if job.done:
                    return
            elif quiet >= keepalive_s:
                quiet = 0.0
                yield None
            await asyncio.sleep(poll_s)
            quiet += poll_s

    async def aclose(self) -> None:
        """Cancel the jobs still running (the server is stopping)."""
        tasks = [j.task for j in self._jobs.values() if j.task is not None and not j.done]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _forget_old(self) -> None:
        finished = [j for j in self.list() if j.done]
        for job in finished[self.keep:]:
            del self._jobs[job.id]


def _group(kind: str) -> str:
    # an upload and an index build both rewrite a knowledge base: one at a time
    return "kb" if kind in ("kb-add", "index-build") else kind
