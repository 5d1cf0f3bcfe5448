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
``database``. :func:`run_query`, which answers each request, is also how the sandbox runs a
query in its own process (queries built by code, or where no process can start).
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import sys
import threading
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


# what a reply may hold beyond plain values: the classes DuckDB fetches values as
_REPLY_CLASSES = frozenset({("datetime", "date"), ("datetime", "datetime"), ("datetime", "time"),
                            ("datetime", "timedelta"), ("datetime", "timezone"),
                            ("decimal", "Decimal"), ("uuid", "UUID"), ("uuid", "SafeUUID"),
                            ("zoneinfo", "ZoneInfo")})


def _zoneinfo_unpickle(obj: Any, name: str) -> Any:
    """``getattr`` as a ZoneInfo's pickle uses it (``ZoneInfo._unpickle``), and no other."""
    import zoneinfo

    if obj is zoneinfo.ZoneInfo and name == "_unpickle":
        return obj._unpickle
    raise pickle.UnpicklingError(f"a reply may not look up {name!r}")


class _ReplyUnpickler(pickle.Unpickler):
    """Unpickles a reply into plain values and the classes above only: what the parent reads
    from the child holds query results, and a child taken over (a memory-corruption bug in
    DuckDB reached by a query) must not run code in the parent through a pickle."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("builtins", "getattr"):
            return _zoneinfo_unpickle
        if (module, name) in _REPLY_CLASSES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a reply may not hold {module}.{name}")


def read_message(stream: BinaryIO, *, reply: bool = False) -> Any:
    """The next message on ``stream``, or None at its end. A ``reply`` (read by the parent)
    may hold plain values and DuckDB's value classes only (pickle.UnpicklingError
    otherwise); a request is the parent's own."""
    head = _read_exactly(stream, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    body = _read_exactly(stream, size)
    if body is None:
        return None
    if reply:
        return _ReplyUnpickler(io.BytesIO(body)).load()
    return pickle.loads(body)  # noqa: S301 - the parent's request, on our own pipe


def write_message(stream: BinaryIO, message: Any) -> None:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(body)) + body)
    while view:    # an unbuffered stream may take part of it at a time
        view = view[stream.write(view) or 0:]
    stream.flush()


def _size(value: Any, stop: int) -> tuple[int, int]:
    """(characters, items) of ``value`` through its nested lists, maps and structs, counted
    until either passes ``stop``: a list of empty lists pickles small and unpickles large."""
    chars = items = 0
    todo = [value]
    while todo and chars <= stop and items <= stop:
        v = todo.pop()
        if isinstance(v, (str, bytes)):
            chars += len(v)
        elif isinstance(v, dict):
            items += len(v)
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, (list, tuple)):
            items += len(v)
            todo.extend(v)
    return chars, items


def _too_large(rows: list[tuple], max_chars: int, max_items: int) -> str | None:
    """Why the result is too large to send, or None: a value over ``max_chars`` characters
    or ``max_items`` items, nested ones counted, or all values together over 100 times
    either."""
    total_chars = total_items = 0
    stop = 100 * max(max_chars, max_items)
    for row in rows:
        for value in row:
            chars, items = _size(value, stop)
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
        try:
            reply = run_query(conn, duckdb, request, limits)
            body = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
            if len(body) > limits["max_reply_bytes"]:
                reply = ("error", "size", f"the result holds {len(body):,} bytes; the sandbox "
                         f"returns at most {limits['max_reply_bytes']:,}: select less")
        except MemoryError as e:
            reply = ("error", "memory", str(e)[:200] or "out of memory")
        except Exception as e:  # noqa: BLE001 - any failure is the query's, told to the parent
            reply = ("error", "database", f"{type(e).__name__}: {str(e)[:500]}")
        write_message(out, reply)
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
