"""Model-written SQL runs in a child process with a capped address space, killed when it
outlives its time limit (review 15: DuckDB's memory limit does not bind values scalar
functions build, and its interrupt is not checked inside one long scalar call)."""

from __future__ import annotations

import time

import pytest

from quaderno.errors import ConfigError, SQLExecutionError
from quaderno.methods.docsage import sqlprocess
from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.sandbox import SQLSandbox, SQLTimeoutError
from quaderno.methods.docsage.schema import Column, Schema, Table

pytestmark = pytest.mark.skipif(not sqlprocess.available(), reason="needs a POSIX system")

SCHEMA = Schema(tables=[Table(name="company", columns=[Column(name="name"),
                                                       Column(name="staff", type="INT")])])
ROWS = [Row(table="company", values={"name": f"c{i}", "staff": i},
            provenance=Provenance(chunk_id=f"d{i}#0")) for i in range(5)]


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
            with pytest.raises(SQLExecutionError) as info:
                process.run(sql, None, 5.0, 10)
            assert info.value.kind == "database", sql
        assert process.run("SELECT count(*) FROM company", None, 5.0, 10)[1] == [[5]]


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
