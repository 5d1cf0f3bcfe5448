"""The child process that runs model-written SQL for :class:`~.sandbox.SQLSandbox`.

Started as a plain script (``python _sqlworker.py``) so that it imports DuckDB and the standard
library only. It caps its own address space (``RLIMIT_AS``) before it opens the question's
database read-only, locks the connection down, and then answers one query at a time over its
standard input and output: each message is an 8-byte big-endian length and a pickle. Why a
process: DuckDB's ``memory_limit`` binds its buffer manager, not the values scalar functions
build (``len(range(400000000))`` took 4 GB), and its interrupt is not checked inside one long
scalar call (``regexp_replace`` on 300 million characters ran 40 s past a 2 s limit; review 15).
The parent kills this process when a query outlives its limit, and a query that needs more
memory than the cap fails here, or ends this process, never the parent.

Requests: ``{"sql", "params", "timeout_s", "max_rows"}``. Replies: ``("ok", columns, rows)`` or
``("error", kind, message)`` with ``kind`` one of ``timeout``, ``memory``, ``size``,
``database``. :func:`answer`, which answers each request, is also how the sandbox runs a
query in its own process (queries built by code, or where no process can start).
"""

from __future__ import annotations

import datetime
import decimal
import os
import pickle
import struct
import sys
import threading
import uuid
from typing import Any, BinaryIO

_HEADER = struct.Struct(">Q")


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    parts, left = [], size
    while left:
        part = stream.read(left)
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def read_message(stream: BinaryIO) -> Any:
    """The next request on ``stream`` (the parent's own), or None at its end. The parent
    reads replies with :func:`.sqlreply.read_reply`, as data only and under a deadline."""
    head = _read_exactly(stream, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    body = _read_exactly(stream, size)
    if body is None:
        return None
    return pickle.loads(body)  # noqa: S301 - the parent's request, on our own pipe


def write_message(stream: BinaryIO, message: Any) -> None:
    write_body(stream, pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def write_body(stream: BinaryIO, body: bytes) -> None:
    """One message already pickled: its length, then its bytes."""
    view = memoryview(_HEADER.pack(len(body)) + body)
    while view:    # an unbuffered stream may take part of it at a time
        view = view[stream.write(view) or 0:]
    stream.flush()


MAX_DEPTH = 64        # levels of nested lists, maps and structs in one value
MAX_INT_BITS = 256    # HUGEINT and UHUGEINT are 128 bits; BIGNUM comes as text
# values in one result, nested ones counted: reading each costs the parent time (two million
# None cells of one shared row took 17.8 s to check, review 20)
MAX_VALUES = 5_000_000
# what a value may be, in a reply the parent reads (``strict``): what DuckDB fetches
_PLAIN = frozenset({type(None), bool, int, float, str, bytes, decimal.Decimal, datetime.date,
                    datetime.datetime, datetime.time, datetime.timedelta, uuid.UUID, list,
                    tuple, dict})


def _odd_decimal(v: decimal.Decimal) -> bool:
    """Not a value of a DuckDB DECIMAL (at most 38 digits, a scale of 0 to 38): a NaN, or
    ``Decimal('1e300000')``, which takes minutes to turn into an int."""
    if not v.is_finite():
        return True
    t = v.as_tuple()
    return len(t.digits) > 38 or not -38 <= int(t.exponent) <= 0


def _odd_inside(v: Any) -> bool:
    """A UUID or a time whose inside is not what one holds: a reply's pickle sets a UUID's
    state as it likes (a list as its ``int``), and a time zone's name (review 19)."""
    if isinstance(v, uuid.UUID):
        return type(v.int) is not int or not 0 <= v.int < 1 << 128
    if isinstance(v, (datetime.datetime, datetime.time)) and v.tzinfo is not None:
        tz = v.tzinfo
        if type(tz) is datetime.timezone:
            return len(tz.tzname(None) or "") > 64
        return type(tz).__name__ != "ZoneInfo"
    return False


def _size(value: Any, stop: int, seen: set[int] | None = None
          ) -> tuple[int, int, str | None]:
    """(characters, items, what is wrong) of ``value`` through its nested lists, maps and
    structs, counted until either passes ``stop`` (a list of empty lists pickles small and
    unpickles large; cyclic references count each time they are reached). Wrong: nested
    deeper than :data:`MAX_DEPTH`, a number no DuckDB type holds, or, for a reply the parent
    reads (``seen``: the containers met so far), a value of a type DuckDB does not fetch or
    a container met before (DuckDB never shares one; shared ones cost the parent each time
    it reads them, review 20)."""
    chars = items = 0
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo and chars <= stop and items <= stop:
        v, depth = todo.pop()
        if seen is not None:
            if type(v) not in _PLAIN or _odd_inside(v):
                return chars, items, f"a result value is no {type(v).__name__} DuckDB fetches"
            if isinstance(v, (dict, list, tuple)):
                if id(v) in seen:
                    return chars, items, "a result value is shared with another"
                seen.add(id(v))
        if isinstance(v, (str, bytes)):
            chars += len(v)
        elif isinstance(v, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                return chars, items, (f"a result value is nested more than {MAX_DEPTH} "
                                      "levels deep")
            items += len(v)
            if items <= stop:
                todo.extend((x, depth + 1) for x in (
                    [*v.keys(), *v.values()] if isinstance(v, dict) else v))
        elif isinstance(v, int) and v.bit_length() > MAX_INT_BITS:
            return chars, items, f"a result value is an integer of over {MAX_INT_BITS} bits"
        elif isinstance(v, decimal.Decimal) and _odd_decimal(v):
            return chars, items, f"a result value is a decimal no DuckDB type holds ({v:.3})"
    return chars, items, None


def _too_large(rows: list[tuple], max_chars: int, max_items: int,
               strict: bool = False) -> str | None:
    """Why the result is too large to send, or None: a value over ``max_chars`` characters
    or ``max_items`` items, nested ones counted, all values together over 100 times either,
    more than :data:`MAX_VALUES` values, or a value :func:`_size` finds wrong (``strict``:
    in a reply the parent reads, where a row met before is wrong too)."""
    total_chars = total_items = cells = 0
    stop = 100 * max(max_chars, max_items)
    seen: set[int] | None = set() if strict else None
    for row in rows:
        if seen is not None:
            if id(row) in seen:
                return "a result row is shared with another"
            seen.add(id(row))
        cells += len(row)
        if cells + total_items > MAX_VALUES:
            return (f"the result holds more than {MAX_VALUES:,} values: select fewer rows or "
                    "columns, or aggregate them")
        for value in row:
            chars, items, wrong = _size(value, stop, seen)
            if wrong:
                return wrong
            if chars > max_chars:
                return (f"a result value holds {'at least ' if chars > stop else ''}"
                        f"{chars:,} characters; the sandbox returns values of at most "
                        f"{max_chars:,}: select less (a count, a substring)")
            if items > max_items:
                return (f"a result value holds {'at least ' if items > stop else ''}"
                        f"{items:,} items; the sandbox returns values of at most "
                        f"{max_items:,}: aggregate them (count, sum)")
            total_chars, total_items = total_chars + chars, total_items + items
            if total_chars > 100 * max_chars or total_items > 100 * max_items:
                return ("the result's values hold more than the sandbox returns "
                        f"({100 * max_chars:,} characters or {100 * max_items:,} items in "
                        "all): select fewer rows or aggregate them")
    return None


def sized(reply: tuple, limits: dict) -> tuple[tuple, bytes]:
    """``reply`` and its pickle, or a ``size`` error and its pickle when that is over
    ``limits["max_reply_bytes"]``: pickled once, for the child to send and for the
    in-process path to hold to the same limit."""
    body = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    if len(body) > limits["max_reply_bytes"]:
        reply = ("error", "size", f"the result holds {len(body):,} bytes; the sandbox "
                 f"returns at most {limits['max_reply_bytes']:,}: select less")
        body = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    return reply, body


def answer(conn: Any, duckdb: Any, request: dict, limits: dict) -> tuple[tuple, bytes]:
    """The reply to ``request`` and its pickle (:func:`run_query`, held to the reply's size
    by :func:`sized`), whatever fails: the child sends the pickle, the sandbox's in-process
    path keeps the reply, so both answer every failure alike (review 20)."""
    try:
        return sized(run_query(conn, duckdb, request, limits), limits)
    except MemoryError as e:
        reply: tuple = ("error", "memory", str(e)[:200] or "out of memory")
    except Exception as e:  # noqa: BLE001 - any failure is the query's, told as an error
        reply = ("error", "database", f"{type(e).__name__}: {str(e)[:500]}")
    return reply, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)


def run_query(conn: Any, duckdb: Any, request: dict, limits: dict) -> tuple:
    """``request`` run on ``conn`` (the ``duckdb`` module passed in, so this script imports
    it only once its address space is capped), inside a transaction always rolled back, with
    a timer that interrupts it at ``timeout_s`` and ``max_rows + 1`` rows fetched at most.
    The reply, never an exception for the query's own failures: ``("ok", columns, rows)`` or
    ``("error", kind, message)``. The sandbox's in-process path calls this too, so both paths
    answer alike."""
    timeout_s = request["timeout_s"]
    timer = threading.Timer(timeout_s, conn.interrupt)
    timer.daemon = True
    conn.begin()
    try:
        timer.start()
        params = request.get("params")
        cursor = conn.execute(request["sql"], params) if params is not None \
            else conn.execute(request["sql"])
        columns = [d[0] for d in cursor.description or []]
        rows = cursor.fetchmany(request["max_rows"] + 1)
    except duckdb.InterruptException:
        return ("error", "timeout", f"the query ran longer than {timeout_s:g} s")
    except (duckdb.OutOfMemoryException, MemoryError) as e:
        return ("error", "memory", str(e)[:200] or "out of memory")
    except duckdb.Error as e:
        return ("error", "database", f"DuckDB {type(e).__name__}: {str(e)[:500]}")
    except (OverflowError, ValueError) as e:
        # a value Python cannot hold: to_days(2147483647) raises OverflowError on fetch
        return ("error", "database", f"{type(e).__name__}: {str(e)[:500]}")
    finally:
        timer.cancel()
        timer.join()
        try:
            conn.rollback()
        except duckdb.Error:  # nothing was begun, or the interrupt ended it
            pass
    too_large = _too_large(rows, limits["max_cell_chars"], limits["max_cell_items"])
    if too_large:
        return ("error", "size", too_large)
    return ("ok", columns, [list(r) for r in rows])


def main() -> int:
    # replies go out on the original standard output; anything else printed goes to stderr
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    setup = read_message(inp)
    if setup is None:
        return 1
    if setup.get("address_space"):
        try:
            import resource
        except ImportError:   # not on this platform: the parent's time limit still holds
            pass
        else:
            cap = int(setup["address_space"])
            try:
                resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            except (ValueError, OSError) as e:   # a lower hard limit, or not enforced here
                sys.stderr.write(f"_sqlworker: no address-space cap ({e})\n")
    import duckdb

    try:
        # one thread from the start: each thread DuckDB opens reserves address space
        conn = duckdb.connect(setup["path"], read_only=True, config={"threads": 1})
        for statement in setup["lockdown"]:
            conn.execute(statement)
    except (duckdb.Error, MemoryError) as e:
        write_message(out, ("error", "database", f"the sandbox could not start: {e}"))
        return 1
    write_message(out, ("ready",))
    limits = setup["limits"]
    while (request := read_message(inp)) is not None:
        write_body(out, answer(conn, duckdb, request, limits)[1])
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
