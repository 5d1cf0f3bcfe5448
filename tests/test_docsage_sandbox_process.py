"""Model-written SQL runs in a child process with a capped address space, killed when it
outlives its time limit (review 15: DuckDB's memory limit does not bind values scalar
functions build, and its interrupt is not checked inside one long scalar call)."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest
from docsage_fakes import COMPANY_ROWS as ROWS
from docsage_fakes import COMPANY_SCHEMA as SCHEMA

from quaderno.errors import ConfigError, SQLExecutionError
from quaderno.methods.docsage import sandbox as sandbox_module
from quaderno.methods.docsage import sqlprocess, sqlreply
from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.sandbox import SQLSandbox, SQLTimeoutError

pytestmark = pytest.mark.skipif(not sqlprocess.available(), reason="needs a POSIX system")
resource = pytest.importorskip("resource")



def test_a_value_larger_than_the_cap_fails_in_the_child_and_the_next_query_runs():
    """``len(range(400000000))`` passed the gate and took 4 GB beside a 512 MB limit."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        with pytest.raises(SQLExecutionError) as info:
            sb.run("SELECT len(range(400000000)) AS n", timeout_s=30)
        assert info.value.kind == "memory"
        assert str(info.value).startswith("the query needs more memory than the sandbox")
        assert sb.run("SELECT sum(staff) AS n FROM company").rows == [[10]]


def test_a_long_scalar_call_is_killed_near_its_limit_not_when_it_ends():
    """``regexp_replace`` over 100 million characters takes about 13 s here whatever the
    limit; the process running it is killed at the limit and a grace."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        start = time.monotonic()
        with pytest.raises(SQLTimeoutError, match="ran longer than 0.5 s"):
            sb.run("SELECT length(regexp_replace(repeat('a', 100000000), 'a', 'bb', 'g')) "
                   "AS n", timeout_s=0.5)
        assert time.monotonic() - start < 0.5 + sqlprocess.GRACE_S + 5
        # a fresh process answers the next query, lineage and all
        traced = run_with_lineage(sb, "SELECT name FROM company WHERE staff = 3")
        assert traced.result.rows == [["c3"]]
        assert [s.chunk_id for s in traced.lineage[0].sources] == ["d3#0"]


def test_the_child_holds_the_second_wall_too():
    """What the gate would refuse, sent to the child directly: no file, no setting, no
    write (the database is opened read-only)."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        process = sb._process
        assert process is not None
        for sql in ("SELECT * FROM read_csv('/etc/hostname')", "SET threads = 8",
                    "SET enable_external_access = true", "DROP TABLE company",
                    "ATTACH '/tmp/evil.db' AS evil", "INSTALL httpfs"):
            reply = process.run({"sql": sql, "params": None, "timeout_s": 5.0, "max_rows": 10})
            assert reply[:2] == ("error", "database"), sql
        assert process.run({"sql": "SELECT count(*) FROM company", "params": None,
                            "timeout_s": 5.0, "max_rows": 10}) == ("ok", ["count_star()"], [[5]])


def test_the_temporary_database_is_removed_on_close():
    sb = SQLSandbox(SCHEMA, ROWS)
    folder = sb._dir
    assert (folder / "question.duckdb").exists()
    sb.run("SELECT count(*) AS n FROM company")
    sb.close()
    assert not folder.exists()
    with pytest.raises(SQLExecutionError, match="closed"):
        sb.run("SELECT count(*) AS n FROM company")


def test_in_process_when_asked_and_a_bad_cap_is_named():
    with SQLSandbox(SCHEMA, ROWS, isolate=False) as sb:
        assert sb._process is None
        assert sb.run("SELECT max(staff) AS n FROM company").rows == [[4]]
    with pytest.raises(ConfigError, match="process_memory 'lots' is not a size"):
        SQLSandbox(SCHEMA, ROWS, process_memory="lots")


def test_a_value_python_cannot_hold_is_a_database_error_on_both_paths():
    """``to_days(2147483647)`` raised OverflowError on fetch: the child died and the parent
    called it a timeout; in process the OverflowError escaped (review 16)."""
    for isolate in (True, False):
        with SQLSandbox(SCHEMA, ROWS, isolate=isolate) as sb:
            with pytest.raises(SQLExecutionError) as info:
                sb.run("SELECT to_days(2147483647) AS v", timeout_s=30)
            assert info.value.kind == "database" and "OverflowError" in str(info.value)
            assert sb.run("SELECT count(*) AS n FROM company").rows == [[5]]


def test_a_process_that_dies_mid_query_is_told_apart_from_a_timeout():
    with SQLSandbox(SCHEMA, ROWS) as sb:
        sb.run("SELECT 1 AS one")
        proc = sb._process._proc
        threading.Timer(0.5, proc.kill).start()
        start = time.monotonic()
        with pytest.raises(SQLExecutionError) as info:
            sb.run("SELECT sleep_ms(20000) AS s", timeout_s=30)
        assert info.value.kind == "memory" and "process ended (exit -9)" in str(info.value)
        assert not isinstance(info.value, SQLTimeoutError)
        assert time.monotonic() - start < 15     # at once, not at the 30 s limit
        assert sb.run("SELECT count(*) AS n FROM company").rows == [[5]]


def test_queries_run_when_the_process_holds_descriptors_past_1024():
    """select() refuses a descriptor of 1024 or more, as a busy server holds (review 16)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip("the descriptor limit is below 1200")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with SQLSandbox(SCHEMA, ROWS) as sb:
            assert sb.run("SELECT max(staff) AS n FROM company").rows == [[4]]
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_cell_of_many_long_values_is_a_size_error():
    """700 values of 100,000 characters each in one list passed the per-value limits
    (review 16); nested values now count (the 64 MB cap on the pickled reply stays behind)."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        with pytest.raises(SQLExecutionError, match="a result value holds at least") as info:
            sb.run("SELECT list_transform(range(700), x -> repeat('a', 100000)) AS l",
                   timeout_s=30)
        assert info.value.kind == "size"


def test_a_cap_too_close_to_duckdbs_own_limit_is_named():
    with pytest.raises(ConfigError, match="process_memory '1GB' must exceed memory_limit "
                                          "'512MB' by 1GB"):
        SQLSandbox(SCHEMA, ROWS, process_memory="1GB")


def test_the_folder_is_removed_when_building_fails(monkeypatch, tmp_path):
    made = []

    def mkdtemp(prefix):
        made.append(tmp_path / f"{prefix}x")
        made[-1].mkdir()
        return str(made[-1])

    def broken(*args, **kwargs):
        raise TypeError("not JSON serializable")
    monkeypatch.setattr(sandbox_module.tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(sandbox_module, "load_rows", broken)
    with pytest.raises(TypeError):
        SQLSandbox(SCHEMA, ROWS)
    assert made and not made[0].exists()


def test_a_frozen_application_runs_queries_in_process(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert not sqlprocess.available()
    with SQLSandbox(SCHEMA, ROWS) as sb:
        assert sb._process is None
        assert sb.run("SELECT min(staff) AS n FROM company").rows == [[0]]


def test_a_process_that_cannot_start_leaves_the_sandbox_in_process(monkeypatch, caplog):
    monkeypatch.setattr(sqlprocess, "WORKER", sqlprocess.WORKER.with_name("no_such_worker.py"))
    with SQLSandbox(SCHEMA, ROWS) as sb:
        assert sb.run("SELECT max(staff) AS n FROM company").rows == [[4]]
        assert sb._process is None
    assert "runs its queries in process" in caplog.text
    # what the process said on stderr is in the warning: the cause, not only the symptom
    assert "no_such_worker.py" in caplog.text and "No such file" in caplog.text


@pytest.mark.parametrize("isolate", [True, False])
def test_nested_values_count_toward_the_size_limits(isolate):
    """Review 17: the limits looked at a value's top level only. 500 strings of 100,000
    characters made one cell of 50 million; 1,000 rows of 10,000 empty lists pickled to
    20 MB and took the parent from 94 MB to 932 MB once unpickled."""
    with SQLSandbox(SCHEMA, ROWS, isolate=isolate) as sb:
        with pytest.raises(SQLExecutionError, match="a result value holds") as info:
            sb.run("SELECT list_transform(range(5), i -> repeat('x', 30000)) AS v",
                   timeout_s=30)
        assert info.value.kind == "size" and "150,000 characters" in str(info.value)
        with pytest.raises(SQLExecutionError, match="in all") as info:
            sb.run("SELECT unnest(range(200)) AS i, list_transform(range(9000), "
                   "x -> []::INT[]) AS v", timeout_s=30)
        assert info.value.kind == "size"
        assert sb.run("SELECT list_transform(range(3), i -> 'ab') AS v").rows == \
            [[["ab", "ab", "ab"]]]


def _outcome(sb: SQLSandbox, sql: str, timeout_s: float, max_rows: int) -> tuple:
    try:
        result = sb.run(sql, timeout_s=timeout_s, max_rows=max_rows)
    except SQLExecutionError as e:
        return (type(e).__name__, e.kind, str(e))
    return (result.columns, result.rows, result.truncated)


@pytest.mark.parametrize("sql,timeout_s,max_rows", [
    ("SELECT name, staff FROM company ORDER BY staff DESC", 5.0, 100),
    ("SELECT name FROM company ORDER BY name", 5.0, 3),                      # truncated
    ("SELECT CAST(name AS INT) AS n FROM company", 5.0, 100),                # conversion error
    ("SELECT to_days(2147483647) AS v", 30.0, 100),                          # OverflowError
    ("SELECT repeat('x', 200000) AS v", 30.0, 100),                          # size
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "       # timeout
     "SELECT count(*) AS n FROM r", 0.3, 100),
])
def test_both_paths_answer_alike(sql, timeout_s, max_rows):
    """The query process and the in-process path run a query through one function
    (``_sqlworker.answer``): the same rows, the same errors, worded the same."""
    with SQLSandbox(SCHEMA, ROWS) as isolated, SQLSandbox(SCHEMA, ROWS, isolate=False) as local:
        assert isolated._process is not None and local._process is None
        assert _outcome(isolated, sql, timeout_s, max_rows) == \
            _outcome(local, sql, timeout_s, max_rows)


class _ShortOfMemory:
    """A connection whose queries fail as Python does when an allocation fails."""

    def __init__(self, conn):
        self._conn = conn

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def execute(self, *args):
        raise MemoryError


def test_in_process_a_python_memory_error_is_the_querys_memory_error():
    """The in-process path let a MemoryError escape; the query process called it a memory
    error. Now one function answers for both."""
    with SQLSandbox(SCHEMA, ROWS, isolate=False) as sb:
        real = sb._conn
        sb._conn = _ShortOfMemory(real)
        with pytest.raises(SQLExecutionError) as info:
            sb.run("SELECT count(*) AS n FROM company")
        assert info.value.kind == "memory"
        assert str(info.value).startswith("the query needs more memory than the sandbox allows "
                                          "(out of memory)")
        sb._conn = real
        assert sb.run("SELECT count(*) AS n FROM company").rows == [[5]]


def test_a_restart_that_fails_after_a_kill_fails_the_query_and_keeps_the_wall(monkeypatch):
    """The process had started, so isolation works here; after a kill (a query past its
    limit) a failed restart used to leave the rest of the question in process, unwalled,
    right after a hostile or runaway query."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        assert sb.run("SELECT count(*) AS n FROM company").rows == [[5]]
        sb._process._proc.kill()
        sb._process._proc.wait()
        real = sqlprocess.WORKER
        monkeypatch.setattr(sqlprocess, "WORKER", real.with_name("no_such_worker.py"))
        with pytest.raises(SQLExecutionError, match="the query was not run, try again") as info:
            sb.run("SELECT count(*) AS n FROM company")
        assert info.value.kind == "process"
        assert sb._process is not None          # not dropped to in process
        # again: the repair hint no longer asks for a retry (review 20)
        with pytest.raises(SQLExecutionError, match="cannot be restarted: no query can run"):
            sb.run("SELECT count(*) AS n FROM company")
        monkeypatch.setattr(sqlprocess, "WORKER", real)
        with pytest.raises(SQLExecutionError) as info:   # walled again: the cap holds
            sb.run("SELECT len(range(400000000)) AS n", timeout_s=30)
        assert info.value.kind == "memory"
        assert sb.run("SELECT count(*) AS n FROM company").rows == [[5]]


@pytest.mark.parametrize("isolate", [True, False])
def test_the_reply_size_limit_holds_on_both_paths(isolate, monkeypatch):
    """Review 18: the 64 MB limit was checked in the child only; numbers, which the value
    limits do not count, passed in process (10,001 rows of 160 decimals)."""
    monkeypatch.setattr(sandbox_module, "_LIMITS", {**sandbox_module._LIMITS,
                                                    "max_reply_bytes": 2000})
    with SQLSandbox(SCHEMA, ROWS, isolate=isolate) as sb:
        with pytest.raises(SQLExecutionError, match="the sandbox returns at most 2,000") as info:
            sb.run("SELECT i AS n, i * 2 AS m FROM (SELECT unnest(range(1000)) AS i)")
        assert info.value.kind == "size"
        assert sb.run("SELECT count(*) AS n FROM company").rows == [[5]]


def test_code_built_queries_take_named_parameters():
    """03ed4f9 turned a dict of parameters into its keys (review 18)."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        assert sb.run_trusted("SELECT staff FROM company WHERE name = $who",
                              {"who": "c3"}).rows == [[3]]
        assert sb.run_trusted("SELECT staff FROM company WHERE name = ?", ("c2",)).rows == [[2]]


def test_errors_do_not_name_the_sandboxs_folder():
    """A restart that cannot open the database (a killed child had removed it) named the
    temporary folder; errors go back to the model as repair hints."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        assert sb.run("SELECT count(*) AS n FROM company").rows == [[5]]
        (sb._dir / "question.duckdb").unlink()   # the parent's connection keeps it open
        sb._process._proc.kill()
        sb._process._proc.wait()
        with pytest.raises(SQLExecutionError) as info:
            sb.run("SELECT count(*) AS n FROM company")
        assert info.value.kind == "process"
        assert "<the question's folder>/question.duckdb" in str(info.value)
        assert str(sb._dir) not in str(info.value)


@pytest.mark.parametrize("running", [True, False])
def test_a_query_interrupted_while_waiting_does_not_answer_the_next(running, monkeypatch):
    """Ctrl-C while the sandbox waited for a reply (review 19), or for a fresh process's
    "ready" (review 20), left the process running, and the next query read the interrupted
    one's rows, or "ready", as its reply."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        if running:
            sb.run("SELECT 1 AS one")
        real = sqlreply.read_reply

        def interrupted(*args, **kwargs):
            monkeypatch.setattr(sqlreply, "read_reply", real)
            raise KeyboardInterrupt
        monkeypatch.setattr(sqlreply, "read_reply", interrupted)
        with pytest.raises(KeyboardInterrupt):
            sb.run("SELECT name FROM company WHERE staff = 1")
        assert sb._process._proc is None           # the process went with its reply
        assert sb.run("SELECT name FROM company WHERE staff = 2").rows == [["c2"]]


class _Broken(_ShortOfMemory):
    def execute(self, *args):
        raise RuntimeError("not a DuckDB error")


def test_in_process_any_failure_is_the_querys_error_as_in_the_child():
    """Review 20: a failure other than DuckDB's escaped the in-process path raw, where the
    child answers it as a database error."""
    with SQLSandbox(SCHEMA, ROWS, isolate=False) as sb:
        sb._conn = _Broken(sb._conn)
        with pytest.raises(SQLExecutionError, match="RuntimeError: not a DuckDB error") as info:
            sb.run("SELECT count(*) AS n FROM company")
        assert info.value.kind == "database"


def test_error_replies_do_not_name_the_sandboxs_folder(monkeypatch):
    with SQLSandbox(SCHEMA, ROWS, isolate=False) as sb:
        folder = str(sb._dir)
        monkeypatch.setattr(sandbox_module._sqlworker, "answer", lambda *a: (
            ("error", "database", f"IO Error: no file {folder}/x.csv"), b""))
        with pytest.raises(SQLExecutionError) as info:
            sb.run("SELECT count(*) AS n FROM company")
        assert str(info.value) == "IO Error: no file <the question's folder>/x.csv"
