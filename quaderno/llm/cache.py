"""A persistent response cache in SQLite (safe across threads and processes).

Keys are the sha256 of the canonical request and the model identity
(:meth:`ChatRequest.cache_key`): no API key or base URL ever enters a key or a row.

The cache holds only responses. Calls are logged by :class:`~quaderno.llm.calllog.CallLog`,
which by default writes to the same file (table ``calls``): :meth:`SQLiteCache.log_call`
and the call counts of :meth:`SQLiteCache.stats` are kept for callers written before the
log was separate, and go through that log.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

from quaderno.llm.calllog import CallLog
from quaderno.llm.sqlite_conn import ThreadConnections
from quaderno.llm.types import ChatResponse

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
"""


class SQLiteCache:
    """Response cache. One connection per thread; WAL for concurrent readers."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = ThreadConnections(self.path)
        self._log: CallLog | None = None
        self._log_lock = threading.Lock()
        with self._conn() as conn:
            conn.executescript(_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        return self._db.get()

    def get(self, key: str) -> ChatResponse | None:
        row = self._conn().execute("SELECT response FROM responses WHERE key = ?",
                                   (key,)).fetchone()
        return ChatResponse.model_validate_json(row[0]) if row else None

    def put(self, key: str, response: ChatResponse) -> None:
        self._conn().execute(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
            (key, response.model, response.model_dump_json(), time.time()))

    def call_log(self) -> CallLog:
        """The call log in this cache's file (created, or migrated, on first use)."""
        with self._log_lock:
            if self._log is None:
                self._log = CallLog(self.path)
            return self._log

    def log_call(self, key: str, response: ChatResponse) -> None:
        """Log a call in this file's call log (for callers older than :class:`CallLog`)."""
        self.call_log().append(ts=time.time(), model=response.model, key=key,
                               prompt_tokens=response.usage.prompt_tokens,
                               completion_tokens=response.usage.completion_tokens,
                               latency_s=response.latency_s, retries=response.retries,
                               cached=response.cached, structured=response.structured)

    def stats(self) -> dict[str, int]:
        """Cached responses, and the calls (and cache hits) logged in the same file."""
        entries = self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        return {"entries": entries, **self.call_log().stats()}

    def dump(self) -> list[dict]:
        """Every stored row (for inspection and tests)."""
        conn = self._conn()
        rows = conn.execute("SELECT key, model, response FROM responses").fetchall()
        return [{"key": k, "model": m, "response": json.loads(r)} for k, m, r in rows]
