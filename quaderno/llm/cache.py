"""A persistent response cache and call log in SQLite (safe across threads and processes).

Keys are the sha256 of the canonical request and the model identity
(:meth:`ChatRequest.cache_key`): no API key or base URL ever enters a key or a row.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

from quaderno.llm.types import ChatResponse

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    retries INTEGER NOT NULL,
    cached INTEGER NOT NULL
);
"""


class SQLiteCache:
    """Response cache + call log. One connection per thread; WAL for concurrent readers."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._conn() as conn:
            conn.executescript(_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> ChatResponse | None:
        row = self._conn().execute("SELECT response FROM responses WHERE key = ?",
                                   (key,)).fetchone()
        return ChatResponse.model_validate_json(row[0]) if row else None

    def put(self, key: str, response: ChatResponse) -> None:
        self._conn().execute(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
            (key, response.model, response.model_dump_json(), time.time()))

    def log_call(self, key: str, response: ChatResponse) -> None:
        self._conn().execute(
            "INSERT INTO calls (ts, model, key, prompt_tokens, completion_tokens, latency_s,"
            " retries, cached) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (time.time(), response.model, key, response.usage.prompt_tokens,
             response.usage.completion_tokens, response.latency_s, response.retries,
             int(response.cached)))

    def stats(self) -> dict[str, int]:
        conn = self._conn()
        entries = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        calls, hits = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(cached), 0) FROM calls").fetchone()
        return {"entries": entries, "calls": calls, "cache_hits": hits}

    def dump(self) -> list[dict]:
        """Every stored row (for inspection and tests)."""
        conn = self._conn()
        rows = conn.execute("SELECT key, model, response FROM responses").fetchall()
        return [{"key": k, "model": m, "response": json.loads(r)} for k, m, r in rows]
