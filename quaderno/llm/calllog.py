"""The call log: one row per LLM call, cached or not, successful or failed (append-only SQLite).

It is apart from the response cache (:mod:`quaderno.llm.cache`): the cache may be off
(``--no-cache``), the log is still written. Both live by default in the same file,
``$QUADERNO_HOME/cache/llm.sqlite``, as separate tables owned by separate classes, which
lets a file written by an older quaderno (``responses`` + ``calls``) migrate in place.

The schema changes only through **named, append-only migrations**: :data:`MIGRATIONS` is a
list of ``(name, function)`` applied in order inside one write transaction; the names
applied are recorded in ``_migrations``, so opening a file twice applies nothing new. Never
edit or reorder an old migration; append a new one. The first migration is the schema of
the original ``calls`` table (a no-op on an old file), so the old rows stay where they are
and read back with null step, label, span, error and structured mode.

Thread- and process-safe like the cache: WAL, one connection per thread, a busy timeout.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from quaderno.llm.sqlite_conn import ThreadConnections
from quaderno.llm.types import StructuredMode

Migration = tuple[str, Callable[[sqlite3.Connection], None]]


def _m001_calls(conn: sqlite3.Connection) -> None:
    # exactly the table of quaderno's first cache file: a no-op where it already exists
    conn.execute("""CREATE TABLE IF NOT EXISTS calls (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts REAL NOT NULL,
        model TEXT NOT NULL,
        key TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        latency_s REAL NOT NULL,
        retries INTEGER NOT NULL,
        cached INTEGER NOT NULL)""")


def _m002_who_and_what(conn: sqlite3.Connection) -> None:
    for column in ("step", "label", "span_id", "error", "structured", "note"):
        conn.execute(f"ALTER TABLE calls ADD COLUMN {column} TEXT")


MIGRATIONS: list[Migration] = [
    ("0001_calls", _m001_calls),
    ("0002_calls_step_label_span_error_structured", _m002_who_and_what),
]


class CallRow(BaseModel):
    """One logged call. ``key`` is the request hash (the cache key); ``structured`` the
    structured-output mode the backend used; ``note`` e.g. why it downgraded that mode."""

    id: int | None = None
    ts: float
    step: str | None = None
    label: str | None = None
    span_id: str | None = None
    model: str
    key: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    cached: bool = False
    error: str | None = None
    structured: StructuredMode | None = None
    note: str | None = None


_COLUMNS = tuple(f for f in CallRow.model_fields if f != "id")


class CallLog:
    """Append-only call log in SQLite at ``path``."""

    def __init__(self, path: str | Path, *,
                 migrations: list[Migration] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = ThreadConnections(self.path)
        self.migrate(MIGRATIONS if migrations is None else migrations)

    def _conn(self) -> sqlite3.Connection:
        return self._db.get()

    def migrate(self, migrations: list[Migration]) -> list[str]:
        """Apply the migrations not applied yet, in order, in one write transaction (another
        process opening the file at the same time waits, then finds them applied).
        Returns the names applied now."""
        conn = self._conn()
        conn.execute("CREATE TABLE IF NOT EXISTS _migrations "
                     "(name TEXT PRIMARY KEY, applied REAL NOT NULL)")
        done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
        if all(name in done for name, _ in migrations):
            return []
        applied = []
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
            for name, apply in migrations:
                if name not in done:
                    apply(conn)
                    conn.execute("INSERT INTO _migrations VALUES (?, ?)", (name, time.time()))
                    applied.append(name)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return applied

    def applied(self) -> list[str]:
        """Names of the migrations applied to this file, in the order applied."""
        rows = self._conn().execute("SELECT name FROM _migrations ORDER BY applied, rowid")
        return [r[0] for r in rows]

    def append(self, row: CallRow | None = None, **fields: Any) -> None:
        """Write one row (a :class:`CallRow`, or its fields)."""
        data = (row or CallRow(**fields)).model_dump()
        data["cached"] = int(data["cached"])
        self._conn().execute(
            f"INSERT INTO calls ({', '.join(_COLUMNS)}) "
            f"VALUES ({', '.join('?' for _ in _COLUMNS)})", [data[c] for c in _COLUMNS])

    def latest(self, n: int = 20, *, model: str | None = None) -> list[CallRow]:
        """The latest ``n`` calls (of ``model``, if given), oldest first."""
        where, args = ("WHERE model = ?", [model]) if model else ("", [])
        return self._select(where, args, n)[::-1]

    def last_downgrade(self, model: str) -> CallRow | None:
        """The latest call of ``model`` whose row notes a structured-output downgrade."""
        rows = self._select("WHERE model = ? AND note IS NOT NULL", [model], 1)
        return rows[0] if rows else None

    def _select(self, where: str, args: list[Any], n: int) -> list[CallRow]:
        """Up to ``n`` rows matching ``where``, newest first."""
        rows = self._conn().execute(
            f"SELECT id, {', '.join(_COLUMNS)} FROM calls {where} ORDER BY id DESC LIMIT ?",
            [*args, max(0, n)]).fetchall()
        return [CallRow(**dict(zip(("id", *_COLUMNS), r))) for r in rows]

    def stats(self) -> dict[str, int]:
        calls, hits = self._conn().execute(
            "SELECT COUNT(*), COALESCE(SUM(cached), 0) FROM calls").fetchone()
        return {"calls": calls, "cache_hits": hits}
