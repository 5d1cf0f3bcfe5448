"""The parent's side of :mod:`._sqlworker`: one child process per sandbox that runs its
model-written queries under an address-space cap, killed when a query outlives its limit.

A query that kills the process (or is killed) is reported as an :class:`SQLExecutionError`
(``memory``) or :class:`SQLTimeoutError`; the next query starts a fresh process. Replies are
read with ``select``, so this needs a POSIX system; elsewhere :func:`available` is False and
the sandbox runs queries in its own process as before (with DuckDB's own limits only).
"""

from __future__ import annotations

import logging
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from quaderno.errors import SQLExecutionError
from quaderno.methods.docsage import _sqlworker

log = logging.getLogger(__name__)
WORKER = Path(_sqlworker.__file__)
# what the process gets beyond a query's own limit to stop it itself (DuckDB's interrupt)
# and reply, before it is killed
GRACE_S = 2.0
START_S = 30.0   # for the process to start and open the database


def available() -> bool:
    return os.name == "posix"


class QueryProcess:
    """A child process that runs queries on the database file ``path`` (read-only, after
    ``lockdown``), with its address space capped at ``address_space`` bytes (0: no cap)."""

    def __init__(self, path: Path, lockdown: list[str], *, address_space: int,
                 limits: dict[str, int]) -> None:
        self.setup = {"path": str(path), "lockdown": lockdown, "address_space": address_space,
                      "limits": limits}
        self._proc: subprocess.Popen[bytes] | None = None

    def run(self, sql: str, params: Any, timeout_s: float, max_rows: int
            ) -> tuple[list[str], list[list[Any]]]:
        """The columns and rows of ``sql``; SQLExecutionError otherwise, its ``kind``
        timeout, memory (DuckDB's limit), ended (the process died: the address-space cap),
        size or database. The caller words a timeout and a memory error its own way."""
        proc = self._started()
        request = {"sql": sql, "params": params, "timeout_s": timeout_s, "max_rows": max_rows}
        try:
            assert proc.stdin is not None
            _sqlworker.write_message(proc.stdin, request)
        except (BrokenPipeError, OSError):
            self._ended()
            raise SQLExecutionError("the query process had ended; run the query again",
                                    kind="database", sql=sql) from None
        reply = self._reply(proc, timeout_s + GRACE_S)
        if reply is None:
            code = self._ended()
            if code is None:   # still running past the deadline: killed
                raise SQLExecutionError(f"the query ran longer than {timeout_s:g} s and was "
                                        "stopped", kind="timeout", sql=sql)
            raise SQLExecutionError(
                f"the query's process ended (exit {code}): it needed more memory than the "
                "sandbox allows; make it cheaper", kind="ended", sql=sql)
        if reply[0] == "ok":
            return reply[1], reply[2]
        raise SQLExecutionError(reply[2], kind=reply[1], sql=sql)

    def close(self) -> None:
        self._ended()

    # -- internals ----------------------------------------------------------------------
    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._ended()
        # unbuffered, so that select() sees every byte not yet read
        proc = subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                close_fds=True, bufsize=0)
        self._proc = proc
        assert proc.stdin is not None
        _sqlworker.write_message(proc.stdin, self.setup)
        ready = self._reply(proc, START_S)
        if ready is None or ready[0] != "ready":
            self._ended()
            why = ready[2] if ready and ready[0] == "error" else "it did not start"
            raise SQLExecutionError(f"the sandbox's query process failed: {why}",
                                    kind="database")
        return proc

    @staticmethod
    def _reply(proc: subprocess.Popen[bytes], wait_s: float) -> Any:
        """The process's next message within ``wait_s`` seconds, or None (no reply in time,
        or the process ended)."""
        assert proc.stdout is not None
        deadline = time.monotonic() + wait_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if ready:
                return _sqlworker.read_message(proc.stdout)

    def _ended(self) -> int | None:
        """Kill the process if it runs; its exit code if it had ended by itself, else None."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        code = proc.poll()
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
