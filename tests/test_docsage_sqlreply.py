"""How the parent reads the query process's replies (sqlreply.py): as data only, under the
deadline, within the limits, checked as the child checks its own (reviews 18 and 19: a child
taken over by a DuckDB memory bug could send anything)."""

from __future__ import annotations

import datetime
import decimal
import io
import os
import pickle
import time
import uuid
import zoneinfo
from zoneinfo import ZoneInfo

import pytest
from docsage_fakes import COMPANY_ROWS as ROWS
from docsage_fakes import COMPANY_SCHEMA as SCHEMA

from quaderno.errors import SQLExecutionError
from quaderno.methods.docsage import _sqlworker, sqlprocess, sqlreply
from quaderno.methods.docsage import sandbox as sandbox_module
from quaderno.methods.docsage.sandbox import SQLSandbox, SQLTimeoutError

pytestmark = pytest.mark.skipif(not sqlprocess.available(), reason="needs a POSIX system")


ALL_TYPES = ("SELECT DATE '2020-01-02' AS d, TIMESTAMP '2020-01-02 03:04:05' AS ts, "
             "TIMESTAMPTZ '2020-01-02 03:04:05+02' AS tz, TIME '03:04:05' AS t, "
             "TIMETZ '03:04:05+02' AS ttz, INTERVAL 3 DAY AS i, 1.25::DECIMAL(10, 2) AS dec, "
             "'d4c4b71e-457f-4063-86b9-d3fbb27b698c'::UUID AS u, 'ab'::BLOB AS b, "
             "MAP {'a': 1} AS m, {'x': 1, 'y': [1, 2]} AS s, [1.5, NULL] AS l, "
             "2::HUGEINT AS h, 'nan'::DOUBLE AS n, '-infinity'::DATE AS ninf, "
             "'a'::ENUM('a', 'b') AS en, '101'::BIT AS bit")


def test_every_value_type_duckdb_fetches_crosses_the_restricted_reply():
    """The parent unpickles replies with an allow-list of classes: each type a result can
    hold comes back as in process."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        request = {"sql": ALL_TYPES, "params": None, "timeout_s": 10.0, "max_rows": 5}
        isolated = sb._process.run(request)
        local = sandbox_module._sqlworker.run_query(sb._conn, sandbox_module.duckdb, request,
                                                    sandbox_module._LIMITS)
        assert isolated[0] == "ok" and isolated[1] == local[1]
        # NaN is not equal to itself: compared by its text
        assert repr(isolated[2]) == repr(local[2])
        assert type(isolated[2][0][2].tzinfo).__name__ == "ZoneInfo"


class _Evil:
    def __reduce__(self):
        return (os.system, ("true",))


def _short(text):   # SHORT_BINUNICODE
    return b"\x8c" + bytes([len(text)]) + text.encode()


def test_a_reply_that_would_run_code_is_refused_unread():
    stream = io.BytesIO()
    _sqlworker.write_message(stream, ("ok", ["a"], [[_Evil()]]))
    with pytest.raises(pickle.UnpicklingError, match="may not hold posix.system"):
        sqlreply.loads(stream.getvalue()[8:])
    # getattr is how a ZoneInfo unpickles, and all it may look up
    evil = b"cbuiltins\ngetattr\n(cdatetime\ndate\nV__subclasses__\ntR."
    with pytest.raises(pickle.UnpicklingError, match="may not look up '__subclasses__'"):
        sqlreply.loads(evil)


def test_a_reply_cannot_change_what_the_parent_keeps():
    """Review 18: BUILD set attributes on uuid.SafeUUID (process-wide) and on the function
    the unpickler handed out for getattr; the reply was then accepted."""
    safe_uuid = (b"\x80\x04" + _short("uuid") + _short("SafeUUID") + b"\x93"
                 + b"N}" + _short("_value2member_map_") + b"}s" + b"\x86b.")
    with pytest.raises(pickle.UnpicklingError, match="may not hold uuid.SafeUUID"):
        sqlreply.loads(safe_uuid)
    renamed = (b"\x80\x04" + _short("builtins") + _short("getattr") + b"\x93"
               + b"N}" + _short("__name__") + _short("tampered") + b"s" + b"\x86b.")
    sqlreply.loads(renamed)            # a fresh function was renamed, nothing kept
    assert sqlreply._zone_lookup.__name__ == "_zone_lookup"
    assert sqlreply._zone_lookup({}).__name__ == "lookup"
    # a zone asked for uncached comes from the cache (each uncached one re-reads a file)
    zone = ZoneInfo.no_cache("Europe/Rome")
    assert sqlreply.loads(pickle.dumps(zone)) is ZoneInfo("Europe/Rome")
    assert uuid.UUID(int=1) == sqlreply.loads(pickle.dumps(uuid.UUID(int=1)))


def _uuid_holding(value):
    u = uuid.UUID.__new__(uuid.UUID)
    object.__setattr__(u, "int", value)       # what a reply's pickle state can do
    return u


@pytest.mark.parametrize("reply,why", [
    (("ok", ["a"], [[]]), "not a result"),                           # a row short of a value
    (("ok", ["a"], [[decimal.Decimal("sNaN")]]), "decimal no DuckDB type holds"),
    (("ok", ["a"], [[decimal.Decimal("1e300000")]]), "decimal no DuckDB type holds"),
    (("ok", ["a"], [[2 ** 4000]]), "integer of over 256 bits"),
    (("ok", ["a"], [[{1, 2}]]), "no set DuckDB fetches"),
    (("ok", ["a"], [[bytearray(b"x")]]), "no bytearray DuckDB fetches"),
    (("ok", ["a"], [[_uuid_holding([1, 2])]]), "no UUID DuckDB fetches"),
    (("ok", ["a"], [[datetime.time(1, tzinfo=datetime.timezone(datetime.timedelta(0),
                                                                "x" * 100))]]),
     "no time DuckDB fetches"),
    (("ok", ["a"], [[1]] * 12), "not a result"),                     # rows past max_rows + 1
    (("ok", ["a" * 30_000], [[1]]), "not a result"),                 # a name past any query's
    (("error", "shell", "x"), "not an error reply"),
    (("error", "database", "x" * 20_000_0), "not an error reply"),
])
def test_a_reply_is_checked_as_the_child_checks_its_own(reply, why):
    assert why in sqlreply.problem(reply, sandbox_module._LIMITS, 10)


def test_shared_cyclic_and_deep_values_stop_at_the_limits():
    """166 bytes of shared references made 3.2 million characters in the parent; 200,000
    levels of nesting made json_cell raise RecursionError (review 18)."""
    level = ["x" * 100]
    for _ in range(6):
        level = [level] * 10
    assert len(pickle.dumps(level)) < 400
    assert sqlreply.problem(("ok", ["a"], [[level]]), sandbox_module._LIMITS, 10) == \
        "a result value is shared with another"
    # unshared checks too stop counting at the limit
    assert "holds at least 10,000,100 characters" in _sqlworker._too_large(
        [[level]], sandbox_module.MAX_CELL_CHARS, sandbox_module.MAX_CELL_ITEMS)
    cycle: list = []
    cycle.append(cycle)
    assert sqlreply.problem(("ok", ["a"], [[cycle]]), sandbox_module._LIMITS, 10) == \
        "a result value is shared with another"
    assert "nested more than 64" in _sqlworker._too_large(
        [[cycle]], sandbox_module.MAX_CELL_CHARS, sandbox_module.MAX_CELL_ITEMS)
    deep: list = []
    for _ in range(200):
        deep = [deep]
    assert "nested more than 64" in sqlreply.problem(("ok", ["a"], [[deep]]),
                                                     sandbox_module._LIMITS, 10)
    fine = ("ok", ["a", "b"], [[[[1, 2], {"k": "v"}], decimal.Decimal("-12.50")]])
    assert sqlreply.problem(fine, sandbox_module._LIMITS, 10) is None
    zoned = ("ok", ["t", "u"], [[datetime.datetime(2020, 1, 2, tzinfo=ZoneInfo("Asia/Kolkata")),
                                 uuid.UUID(int=7)]])
    assert sqlreply.problem(zoned, sandbox_module._LIMITS, 10) is None


FAKE_WORKER = '''
import decimal, os, pickle, struct, sys, time
H = struct.Struct(">Q")
inp, out = sys.stdin.buffer, sys.stdout.buffer
def read():
    (n,) = H.unpack(inp.read(8)); return pickle.loads(inp.read(n))
def send(body):
    out.write(H.pack(len(body)) + body); out.flush()
class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + MARKER,))
read()
send(pickle.dumps(("ready",)))
while True:
    read()
    send(REPLY)
'''


@pytest.mark.parametrize("reply", ["pickle.dumps(('ok', ['a'], [[Evil()]]))",
                                   "pickle.dumps(('ok', 'a', 3))",
                                   "b'not a pickle'",
                                   "pickle.dumps(('ok', ['n'], [[decimal.Decimal('1e300000')]]))",
                                   "pickle.dumps(('ok', ['n', 'm'], [[1]]))"])
def test_a_child_that_sends_code_or_garbage_is_stopped_and_nothing_runs(
        reply, tmp_path, monkeypatch):
    """A child taken over (a memory-corruption bug reached by a query) could send any bytes:
    the parent runs none of them, and answers the query with an error."""
    marker = tmp_path / "ran"
    worker = tmp_path / "fake_worker.py"
    worker.write_text(FAKE_WORKER.replace("MARKER", repr(str(marker)))
                      .replace("REPLY", reply))
    monkeypatch.setattr(sqlprocess, "WORKER", worker)
    with SQLSandbox(SCHEMA, ROWS) as sb:
        with pytest.raises(SQLExecutionError, match="unreadable reply") as info:
            sb.run("SELECT count(*) AS n FROM company")
        assert info.value.kind == "reply"
        assert sb._process._proc is None       # stopped, not trusted with another query
    assert not marker.exists()


STALLS = FAKE_WORKER.replace("    send(REPLY)", """    out.write(H.pack(100) + b"x"); out.flush()
    time.sleep(60)""")


def test_a_reply_that_starts_and_stalls_is_a_timeout_not_a_hang(tmp_path, monkeypatch):
    """Review 18: once a reply's header came, the parent read the rest without a deadline,
    holding the sandbox's lock: the query, every later one and close() hung."""
    worker = tmp_path / "stalls.py"
    worker.write_text(STALLS.replace("MARKER", "''").replace("REPLY", "b''"))
    monkeypatch.setattr(sqlprocess, "WORKER", worker)
    with SQLSandbox(SCHEMA, ROWS) as sb:
        start = time.monotonic()
        with pytest.raises(SQLTimeoutError, match="longer than 0.5 s"):
            sb.run("SELECT count(*) AS n FROM company", timeout_s=0.5)
        assert time.monotonic() - start < 0.5 + sqlprocess.GRACE_S + 3
    assert sb._closed


def test_a_reply_longer_than_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    worker = tmp_path / "huge.py"
    worker.write_text(FAKE_WORKER.replace("MARKER", "''").replace("    send(REPLY)", """\
    out.write(H.pack(2 ** 40)); out.flush()
    time.sleep(60)"""))
    monkeypatch.setattr(sqlprocess, "WORKER", worker)
    with SQLSandbox(SCHEMA, ROWS) as sb:
        with pytest.raises(SQLExecutionError, match="a reply of 1,099,511,627,776 bytes") as info:
            sb.run("SELECT count(*) AS n FROM company", timeout_s=5)
        assert info.value.kind == "reply"


def test_each_zone_is_built_once_per_reply(monkeypatch):
    """Review 19: a reply cycling through more zones than ZoneInfo's cache of 8, each asked
    uncached, re-read a tz file per value."""
    keys = ["Europe/Rome", "Asia/Tokyo", "America/Lima", "Africa/Cairo", "Europe/Oslo",
            "Asia/Dubai", "America/Bogota", "Australia/Perth", "Europe/Madrid", "Asia/Seoul"]
    body = pickle.dumps([ZoneInfo.no_cache(k) for _ in range(3) for k in keys])
    built = []

    def counting(key):
        built.append(key)
        return ZoneInfo(key)
    counting._unpickle = ZoneInfo._unpickle
    monkeypatch.setattr(zoneinfo, "ZoneInfo", counting)
    back = sqlreply.loads(body)
    assert [z.key for z in back] == keys * 3
    assert built == keys                        # ten zones built, not thirty


def test_shared_rows_and_values_are_refused_before_they_cost_the_parent():
    """Review 20: 2,000 None columns times 10,001 copies of one row pickled to 67 KB and took
    17.8 s to check; DuckDB never shares a row or a container between cells."""
    row = [None] * 2000
    start = time.monotonic()
    assert sqlreply.problem(("ok", [f"c{i}" for i in range(2000)], [row] * 10_001),
                            sandbox_module._LIMITS, 10_000) == \
        "a result row is shared with another"
    assert time.monotonic() - start < 1
    cell = [1, 2]
    assert sqlreply.problem(("ok", ["a", "b"], [[cell, 1], [cell, 2]]),
                            sandbox_module._LIMITS, 10) == "a result value is shared with another"
    assert sqlreply.problem(("ok", ["a", "b"], [[[1, 2], 1], [[1, 2], 2]]),
                            sandbox_module._LIMITS, 10) is None


def test_a_result_of_too_many_values_is_a_size_error(monkeypatch):
    """Scalars count too (the child runs the same check before it sends; patched here in
    this process only)."""
    monkeypatch.setattr(_sqlworker, "MAX_VALUES", 50)
    with SQLSandbox(SCHEMA, ROWS, isolate=False) as sb:
        with pytest.raises(SQLExecutionError, match="more than 50 values") as info:
            sb.run("SELECT i AS n, [i, i] AS l FROM (SELECT unnest(range(20)) AS i)")
        assert info.value.kind == "size"
        assert sb.run("SELECT [1, 2] AS l, name FROM company").rows[0] == [[1, 2], "c0"]
