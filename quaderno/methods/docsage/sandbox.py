"""A sandboxed DuckDB database for model-written SQL (spec §4 and §11).

:class:`SQLSandbox` holds one question's database DB^q: a file in a fresh temporary folder
whose tables (and the ``_prov`` side table) are created and filled *first*; it is then opened
read-only and locked down: no temporary directory, external access off (no files, network,
ATTACH, COPY, INSTALL or LOAD), extension auto-install and auto-load off, a memory limit, one
thread, and the configuration locked so no query can undo any of it.

:meth:`SQLSandbox.run` puts every query through the gate (``sqlgate.check_sql``) and runs the
SQL regenerated from the checked tree in a child process (:mod:`.sqlprocess`) that opened the
same file the same way, with its address space capped: DuckDB's memory limit binds its buffer
manager, not the values scalar functions build, and its interrupt is not checked inside one
long scalar call, so the process is killed when a query outlives its time limit (a timer
calls ``conn.interrupt()`` first). Each query runs inside a transaction that is always rolled
back, and rows and the size of each value are capped. DuckDB errors come back as
:class:`SQLExecutionError` (or :class:`SQLTimeoutError`) whose message can go back to the
model for one repair. Calls are serialized by a lock, so the sandbox may be used from
``asyncio.to_thread`` workers.
"""

from __future__ import annotations

import logging
import re
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import duckdb
from pydantic import BaseModel
from sqlglot import exp

from quaderno.errors import ConfigError, SQLExecutionError
from quaderno.methods.docsage import _sqlworker, sqlprocess
from quaderno.methods.docsage.rows import Row, load_rows
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.sqlgate import CheckedSQL, check_sql
from quaderno.methods.docsage.sqlprocess import QueryProcess, SQLProcessError

log = logging.getLogger(__name__)
Params = Sequence[Any] | Mapping[str, Any] | None   # bound parameters, positional or named
_SIZE = re.compile(r"^\d{1,6}(\.\d{1,3})?\s?[KMGT]i?B$")


class SQLTimeoutError(SQLExecutionError):
    """The query ran past its time limit and was interrupted."""

    def __init__(self, message: str, *, sql: str = "") -> None:
        super().__init__(message, kind="timeout", sql=sql)


class QueryResult(BaseModel):
    """Rows of one query; ``truncated`` when more than ``max_rows`` rows were produced."""

    sql: str
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = False
    seconds: float = 0.0


def _lockdown(memory_limit: str, max_temp: str) -> list[str]:
    # temp_directory must be cleared before external access is switched off (DuckDB refuses
    # to change it afterwards); lock_configuration must come last
    return ["SET temp_directory=''",
            "SET enable_external_access=false",
            "SET autoinstall_known_extensions=false",
            "SET autoload_known_extensions=false",
            f"SET memory_limit='{memory_limit}'",
            "SET threads=1",
            f"SET max_temp_directory_size='{max_temp}'",
            "SET lock_configuration=true"]


def _capped(expression: exp.Expression, max_rows: int) -> exp.Expression:
    """The query with a LIMIT of ``max_rows + 1`` unless it already has a smaller literal
    one, so a huge result is never materialized."""
    limit = expression.args.get("limit")
    if limit is not None:
        value = limit.expression if isinstance(limit, exp.Limit) else None
        if isinstance(value, exp.Literal) and value.is_int and int(value.this) <= max_rows + 1:
            return expression
        return exp.select("*").from_(expression.subquery("_capped")).limit(max_rows + 1)
    if isinstance(expression, (exp.Select, exp.SetOperation)):
        return expression.copy().limit(max_rows + 1)
    return expression


MAX_CELL_CHARS = 100_000   # characters of one text value a result may hold
MAX_CELL_ITEMS = 10_000    # items of one list, map or struct value
MAX_RESULT_BYTES = 64 * 2 ** 20   # a whole result, as the query process sends it
# what a query's reply may hold (:func:`._sqlworker._too_large`): a query can build a value
# of any size (``repeat('x', 50000000)``), and results go into prompts and records (review 15)
_LIMITS = {"max_cell_chars": MAX_CELL_CHARS, "max_cell_items": MAX_CELL_ITEMS,
           "max_reply_bytes": MAX_RESULT_BYTES}


def _error(kind: str, message: str, timeout_s: float, sql: str) -> SQLExecutionError:
    """The error a query's ``("error", kind, message)`` reply raises, worded for the model
    that repairs the query."""
    if kind == "timeout":
        return SQLTimeoutError(f"the query ran longer than {timeout_s:g} s and was stopped; "
                               "make it cheaper (filter before joining, avoid cross joins and "
                               "unbounded recursion)", sql=sql)
    if kind == "memory":
        return SQLExecutionError(f"the query needs more memory than the sandbox allows "
                                 f"({message[:200]}); make it cheaper", kind="memory", sql=sql)
    if kind == "ended":      # the query process died: most likely its address-space cap
        return SQLExecutionError(message, kind="memory", sql=sql)
    return SQLExecutionError(message, kind=kind, sql=sql)


def _bytes(size: str) -> int:
    """'2GB' (or '2GiB', '512 MB') in bytes, by powers of 1024."""
    number, unit = re.match(r"^([\d.]+)\s?([KMGT])", size).groups()  # type: ignore[union-attr]
    return int(float(number) * 1024 ** ("KMGT".index(unit) + 1))


class SQLSandbox:
    """One question's database, locked down, for gate-checked read-only queries.

    The database is a file in a temporary folder (removed on :meth:`close`), opened
    read-only. Model-written queries (:meth:`run`, :meth:`run_checked`) run in a child
    process (:mod:`.sqlprocess`) whose address space is capped at ``process_memory`` and
    which is killed when a query outlives its time limit plus a grace, where the system
    allows (POSIX); ``isolate=False`` runs them in this process, under DuckDB's own limits
    only. Queries built by code (:meth:`run_trusted`) run in this process."""

    def __init__(self, schema: Schema, rows: Sequence[Row], *, memory_limit: str = "512MB",
                 max_temp_directory_size: str = "0MB", process_memory: str = "2GB",
                 isolate: bool = True) -> None:
        for name, value in (("memory_limit", memory_limit),
                            ("max_temp_directory_size", max_temp_directory_size),
                            ("process_memory", process_memory)):
            if not _SIZE.match(value):
                raise ConfigError(f"{name} {value!r} is not a size: write it like '512MB'")
        if isolate and _bytes(process_memory) < _bytes(memory_limit) + 2 ** 30:
            raise ConfigError(f"process_memory {process_memory!r} must exceed memory_limit "
                              f"{memory_limit!r} by 1GB at least: the query process itself "
                              "takes about 800MB")
        self.schema = schema
        self._lock = threading.Lock()
        self._dir = Path(tempfile.mkdtemp(prefix="quaderno-sql-"))
        # removed when the sandbox is closed, or dropped unclosed, or fails to build
        self._remove_dir = weakref.finalize(self, shutil.rmtree, self._dir, True)
        path = self._dir / "question.duckdb"
        lockdown = _lockdown(memory_limit, max_temp_directory_size)
        try:
            # filled in memory and copied to the file at once (filling the file row by row
            # took twice as long)
            writer = duckdb.connect(":memory:")
            try:
                self.rows: list[Row] = load_rows(writer, schema, rows)
                quoted = str(path).replace("'", "''")   # our own temporary path
                writer.execute(f"ATTACH '{quoted}' AS question_file")
                writer.execute("COPY FROM DATABASE memory TO question_file")
                writer.execute("DETACH question_file")
            finally:
                writer.close()
            self._conn = duckdb.connect(str(path), read_only=True)
            try:
                for statement in lockdown:
                    self._conn.execute(statement)
            except BaseException:
                self._conn.close()
                raise
        except BaseException:
            self._remove_dir()
            raise
        self._process = (QueryProcess(path, lockdown, address_space=_bytes(process_memory),
                                      limits=_LIMITS)
                         if isolate and sqlprocess.available() else None)
        # a sandbox never closed still ends its process
        self._end_process = (weakref.finalize(self, self._process.close)
                             if self._process is not None else None)
        self._closed = False
        self._failed_starts = 0   # restarts failed in a row, after the process had run

    # -- public API ---------------------------------------------------------------------
    def check(self, sql: str) -> CheckedSQL:
        """The gate alone: raises SQLRefusedError, runs nothing of ``sql`` (a join the gate
        adds is judged by :meth:`unique` on the loaded rows)."""
        return check_sql(sql, self.schema, unique=self.unique)

    def unique(self, table: str, cols: Sequence[str]) -> bool:
        """Whether the loaded rows hold at most one row of ``table`` per value of ``cols``
        (rows with a NULL among them aside: they join nothing), so a join on them repeats no
        row. False for a table or column the schema does not have."""
        t = self.schema.table(table)
        if t is None or not cols or any(c not in t.column_names for c in cols):
            return False
        names = ", ".join(f'"{c}"' for c in cols)  # the schema's identifiers, never a model's
        present = " AND ".join(f'"{c}" IS NOT NULL' for c in cols)
        try:
            res = self.run_trusted(f'SELECT count(*) FROM (SELECT 1 FROM "{table}" WHERE '
                                   f"{present} GROUP BY {names} HAVING count(*) > 1)",
                                   max_rows=2)
        except SQLExecutionError as e:  # the time limit too
            log.info("could not tell whether %s(%s) is unique: %s", table, names, e)
            return False
        return res.rows[0][0] == 0

    def run(self, sql: str, *, timeout_s: float = 5.0, max_rows: int = 10_000) -> QueryResult:
        """Gate-check ``sql`` (model-written) and run it. Raises SQLRefusedError,
        SQLTimeoutError or SQLExecutionError."""
        checked = self.check(sql)
        return self.run_checked(checked, timeout_s=timeout_s, max_rows=max_rows)

    def run_checked(self, checked: CheckedSQL, *, timeout_s: float = 5.0,
                    max_rows: int = 10_000) -> QueryResult:
        """Run a query that has passed the gate (as :meth:`run` does after checking)."""
        self._limits(timeout_s, max_rows)
        runnable = _capped(checked.expression, max_rows).sql(dialect="duckdb", comments=False)
        result = self._query(runnable, None, timeout_s, max_rows, isolated=True)
        return result.model_copy(update={"sql": checked.sql})

    def run_trusted(self, sql: str, params: Params = None, *, timeout_s: float = 30.0,
                    max_rows: int = 100_000) -> QueryResult:
        """Run SQL *built by code* (CLEAR's constraint checks, lineage look-ups), with bound
        parameters, without the gate but in the same locked-down connection, time limit
        and rolled-back transaction. Never pass text a model wrote: use :meth:`run`."""
        self._limits(timeout_s, max_rows)
        return self._query(sql, params, timeout_s, max_rows, isolated=False)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                if self._end_process is not None:
                    self._end_process()
                self._conn.close()
                self._remove_dir()
                self._closed = True

    def __enter__(self) -> SQLSandbox:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------
    @staticmethod
    def _limits(timeout_s: float, max_rows: int) -> None:
        if not timeout_s > 0:
            raise ConfigError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
        if max_rows < 1:
            raise ConfigError(f"max_rows must be >= 1, got {max_rows!r}")

    def _unnamed(self, message: str) -> str:
        """``message`` without the sandbox's temporary folder: errors go back to the model,
        and a path on this machine is none of its business (DuckDB names the database file
        when it cannot open it)."""
        return message.replace(str(self._dir), "<the question's folder>")

    def _query(self, sql: str, params: Params, timeout_s: float, max_rows: int, *,
               isolated: bool) -> QueryResult:
        """``sql`` run by the query process when ``isolated`` and there is one, else in this
        process; both through :func:`._sqlworker.answer`, so they answer alike."""
        # params only from code (run_trusted), positional or named, never to the process
        request = {"sql": sql, "params": params, "timeout_s": timeout_s, "max_rows": max_rows}
        with self._lock:
            if self._closed:
                raise SQLExecutionError("the sandbox is closed; build a new one", kind="closed",
                                        sql=sql)
            start = time.monotonic()
            reply = None
            if isolated and self._process is not None:
                try:
                    reply = self._process.run(request)
                    self._failed_starts = 0
                except SQLProcessError as e:
                    if self._process.started_once:
                        # it ran here before, and was just killed or died: the query that
                        # comes next is no time to drop a wall (the next one tries again)
                        self._failed_starts += 1
                        then = "try again" if self._failed_starts == 1 else \
                            "the query process cannot be restarted: no query can run here"
                        raise SQLExecutionError(f"{self._unnamed(str(e))}; the query was "
                                                f"not run, {then}", kind="process",
                                                sql=sql) from None
                    log.warning("%s; this sandbox runs its queries in process, under DuckDB's "
                                "own limits only", e)
                    self._process = None
            if reply is None:   # held to the same limits, the reply's size included
                reply, _ = _sqlworker.answer(self._conn, duckdb, request, _LIMITS)
            seconds = time.monotonic() - start
        if reply[0] != "ok":
            raise _error(reply[1], self._unnamed(reply[2]), timeout_s, sql)
        columns, fetched = reply[1], reply[2]
        truncated = len(fetched) > max_rows
        if truncated:
            log.info("result capped at %d rows", max_rows)
        return QueryResult(sql=sql, columns=columns, rows=fetched[:max_rows],
                           truncated=truncated, seconds=round(seconds, 4))
