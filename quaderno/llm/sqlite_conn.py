"""One SQLite connection per thread to one file, in WAL mode: what the response cache and the
call log share (concurrent readers across threads and processes, one writer at a time)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path


class ThreadConnections:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn
