"""One SQLite connection per thread to one file, in WAL mode: what the response cache and the
call log share (concurrent readers across threads and processes, one writer at a time)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path


class ThreadConnections:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=TIMEOUT_S, isolation_level=None)
            _wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn


TIMEOUT_S = 30.0


def _wal(conn: sqlite3.Connection) -> None:
    """Switch ``conn`` to WAL. SQLite answers "database is locked" at once, without its busy
    handler, when several connections make a new file WAL together: retry until the timeout."""
    deadline, pause = time.monotonic() + TIMEOUT_S, 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
