"""The parent's side of :mod:`._sqlworker`: one child process per sandbox that runs its
model-written queries under an address-space cap, killed when a query outlives its limit.

A query that ends the process is replied to as an error of kind ``ended``, one that outlives
its limit as kind ``timeout`` (the sandbox words both); the next query starts a fresh
process. Replies are awaited with a selector on the pipe, so this needs a POSIX
system; elsewhere (or in a frozen application) :func:`available` is False and the sandbox runs
queries in its own process, with DuckDB's own limits only.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from quaderno.errors import SQLExecutionError
from quaderno.methods.docsage import _sqlworker, sqlreply

log = logging.getLogger(__name__)
WORKER = Path(_sqlworker.__file__)
# what the process gets beyond a query's own limit to stop it itself (DuckDB's interrupt)
# and reply, before it is killed
GRACE_S = 2.0
START_S = 30.0   # for the process to start and open the database


class SQLProcessError(SQLExecutionError):
    """The query process could not start (the sandbox then runs queries in process)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="process")


def available() -> bool:
    """A POSIX system, and a Python that can start this module's worker script (not a
    frozen application, whose executable is the application itself)."""
    return os.name == "posix" and not getattr(sys, "frozen", False)


class QueryProcess:
    """A child process that runs queries on the database file ``path`` (read-only, after
    ``lockdown``), with its address space capped at ``address_space`` bytes (0: no cap)."""

    def __init__(self, path: Path, lockdown: list[str], *, address_space: int,
                 limits: dict[str, int]) -> None:
        self.setup = {"path": str(path), "lockdown": lockdown, "address_space": address_space,
                      "limits": limits}
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = path.with_name("worker.log")
        # once a process has started, isolation works here: a later start that fails (after
        # a kill, when memory is short) fails its query rather than run it unwalled
        self.started_once = False

    def run(self, request: dict[str, Any]) -> tuple:
        """The reply to ``request`` (see :mod:`._sqlworker`): ``("ok", columns, rows)`` or
        ``("error", kind, message)``, ``kind`` as :func:`._sqlworker.answer` gives it, or
        ``timeout`` when the process was killed past the limit and a grace, or ``ended``
        when it died (most likely the address-space cap). SQLProcessError when no process
        can start."""
        proc = self._started()
        try:
            assert proc.stdin is not None
            _sqlworker.write_message(proc.stdin, request)
        except (BrokenPipeError, OSError):
            self._ended()
            return ("error", "database", "the query process had ended; run the query again")
        except BaseException:
            self._ended()   # half a request sent: the process is out of step
            raise
        try:
            reply = self._reply(proc, request["timeout_s"] + GRACE_S)
        except BaseException:
            # interrupted while waiting (Ctrl-C): the reply still to come would answer the
            # next query, so the process goes (review 19)
            self._ended()
            raise
        if reply is None:      # still running past the deadline: killed
            self._ended()
            return ("error", "timeout", f"the query ran longer than {request['timeout_s']:g} s "
                    "and was stopped")
        if reply is sqlreply.EOF:   # it ended by itself: reaped, so its exit code is known
            code = self._ended(wait_s=2.0)
            return ("error", "ended", f"the query's process ended (exit {code}), most likely "
                    "out of the memory the sandbox allows; make the query cheaper")
        wrong = reply.why if isinstance(reply, sqlreply.Unreadable) else \
            sqlreply.problem(reply, self.setup["limits"], request["max_rows"])
        if wrong:
            # not a reply the worker writes: the process is not trusted with another query
            self._ended()
            return ("error", "reply", f"the query process sent an unreadable reply ({wrong}); "
                    "it was stopped")
        return reply

    def close(self) -> None:
        self._ended()

    # -- internals ----------------------------------------------------------------------
    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._ended()
        # the parent's import path (duckdb may be found only through it); few malloc arenas,
        # so the address-space cap is spent on the query, not on reservations; unbuffered, so
        # that the selector sees every byte not yet read
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
               "MALLOC_ARENA_MAX": "2"}
        try:
            with open(self._log, "ab") as errors:   # what it says on stderr, for a failure
                proc = subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=errors,
                                        close_fds=True, bufsize=0, env=env)
        except OSError as e:   # no such interpreter, no process left to start
            raise SQLProcessError(f"the sandbox's query process failed: {e}") from None
        self._proc = proc
        assert proc.stdin is not None
        try:
            _sqlworker.write_message(proc.stdin, self.setup)
        except OSError as e:      # it ended before reading its setup
            self._ended()
            raise SQLProcessError(f"the sandbox's query process failed: {e}") from None
        except BaseException:
            self._ended()
            raise
        try:
            ready = self._reply(proc, START_S)
        except BaseException:
            self._ended()   # interrupted before "ready": it would answer the next query
            raise
        if not isinstance(ready, tuple) or ready[0] != "ready":
            self._ended()
            why = ready[2] if isinstance(ready, tuple) and len(ready) == 3 and \
                ready[0] == "error" and isinstance(ready[2], str) else \
                "it did not start"
            said = self._log.read_text(errors="replace").strip().splitlines()[-3:] \
                if self._log.exists() else []
            raise SQLProcessError(f"the sandbox's query process failed: {why}"
                                  + (f" ({' / '.join(said)})" if said else ""))
        self.started_once = True
        return proc

    def _reply(self, proc: subprocess.Popen[bytes], wait_s: float) -> Any:
        """The process's next message within ``wait_s`` seconds (:func:`.sqlreply.read_reply`:
        None when none came whole in time, :data:`.sqlreply.EOF` when the process ended)."""
        assert proc.stdout is not None
        return sqlreply.read_reply(proc.stdout, time.monotonic() + wait_s,
                                   self.setup["limits"]["max_reply_bytes"])

    def _ended(self, wait_s: float = 0.0) -> int | None:
        """Kill the process if it still runs after ``wait_s`` seconds; its exit code if it
        had ended by itself, else None."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        try:
            code = proc.wait(timeout=wait_s) if wait_s else proc.poll()
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            proc.kill()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError as e:
                    log.debug("closing the query process's pipe: %s", e)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            log.warning("the query process %d did not end after kill", proc.pid)
        return code
