"""How the parent reads a reply from the query process (:mod:`._sqlworker`): as data only,
within the query's deadline, and no larger than the child may send.

The child is quaderno's own script, but it runs model-written SQL: a memory-corruption bug in
DuckDB that a query reached would hand the child to whoever wrote the document the query was
built from. So nothing in a reply is trusted (reviews 18 to 20):

- it is read without blocking, under the deadline, and a length over the reply limit is
  refused before anything is read (a header and a stall held the sandbox's lock for good);
- it is unpickled into plain values and the classes DuckDB fetches values as, nothing else:
  of callables only a time zone's, which builds a zone and nothing more, and no class that
  BUILD could change for the whole process;
- its shape and values are checked as the child checks its own before sending, and more
  strictly (rows, sizes, nesting, sharing, numbers no DuckDB type holds, types and their
  insides), so no later step meets a value a query cannot produce (``Decimal('1e300000')``
  took 34 s to become an int; shared references made 3 million characters of 166 bytes).

Anything else is :class:`Unreadable`; the process that sent it is stopped.
"""

from __future__ import annotations

import io
import os
import pickle
import selectors
import time
from typing import Any, BinaryIO

from quaderno.methods.docsage import _sqlworker

EOF = object()     # the process closed its output: it ended
_MARGIN = 1 << 16  # an error reply, or the ready message, beyond the limit on results
_KINDS = frozenset({"timeout", "memory", "size", "database"})   # what answer() replies
MAX_MESSAGE = 2_000    # an error's message (the worker's are 500 characters and a prefix)
MAX_COLUMNS = 10_000   # a result's columns
MAX_NAME = 25_000      # a column's name (an expression of a query of 20,000 characters)

# the classes DuckDB fetches values as (tzinfo inside times and timestamps included)
_CLASSES = frozenset({("datetime", "date"), ("datetime", "datetime"), ("datetime", "time"),
                      ("datetime", "timedelta"), ("datetime", "timezone"),
                      ("decimal", "Decimal"), ("uuid", "UUID"), ("zoneinfo", "ZoneInfo")})


class Unreadable:
    """A reply that is not one the worker writes; ``why`` says how."""

    def __init__(self, why: str) -> None:
        self.why = why


def _zone_lookup(zones: dict[str, Any]) -> Any:
    """``getattr`` as a ZoneInfo pickles (``ZoneInfo._unpickle``), and nothing else. Fresh
    functions for each reply, so that BUILD cannot change one the process keeps; a zone is
    built once per reply whatever the pickle asks (uncached, each one re-reads a tz file,
    and ZoneInfo's own cache keeps 8: a reply cycling through more re-read them, review
    19), and there are a few hundred zones."""
    import zoneinfo

    def lookup(obj: Any, name: str) -> Any:
        if obj is not zoneinfo.ZoneInfo or name != "_unpickle":
            raise pickle.UnpicklingError(f"a reply may not look up {name!r}")

        def unpickle(key: str, from_cache: int = 1) -> zoneinfo.ZoneInfo:
            if type(key) is not str or len(key) > 100:
                raise pickle.UnpicklingError("a reply's time zone is no zone name")
            if key not in zones:
                zones[key] = zoneinfo.ZoneInfo(key)
            return zones[key]
        return unpickle
    return lookup


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: BinaryIO) -> None:
        super().__init__(file)
        self.zones: dict[str, Any] = {}

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("builtins", "getattr"):
            return _zone_lookup(self.zones)
        if (module, name) in _CLASSES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a reply may not hold {module}.{name}")


def loads(body: bytes) -> Any:
    """A reply's pickle as data (pickle.UnpicklingError for anything else)."""
    return _Unpickler(io.BytesIO(body)).load()


def problem(reply: Any, limits: dict[str, int], max_rows: int) -> str | None:
    """What is wrong with ``reply``, or None when it is ``("ok", [names], [[values]])`` with
    at most ``max_rows + 1`` rows of one value per column, each one DuckDB could have
    fetched and within the limits, or ``("error", kind, message)`` of a kind
    :func:`._sqlworker.answer` replies, its message as long as the worker writes them."""
    if not isinstance(reply, tuple) or len(reply) != 3:
        return "not a reply"
    tag, first, second = reply
    if tag == "error":
        ok = type(first) is str and first in _KINDS and type(second) is str and \
            len(second) <= MAX_MESSAGE
        return None if ok else "not an error reply"
    if tag != "ok" or type(first) is not list or type(second) is not list or \
            len(first) > MAX_COLUMNS or len(second) > max_rows + 1 or \
            any(type(c) is not str or len(c) > MAX_NAME for c in first) or \
            any(type(r) is not list or len(r) != len(first) for r in second):
        return "not a result"
    return _sqlworker._too_large(second, limits["max_cell_chars"], limits["max_cell_items"],
                                 strict=True)


def read_reply(stream: BinaryIO, deadline: float, max_bytes: int) -> Any:
    """The next message on ``stream`` if it comes whole by ``deadline`` (a
    :func:`time.monotonic` time): the message, None when the deadline passed, :data:`EOF`
    when the process ended, :class:`Unreadable` when its length is over ``max_bytes`` (and a
    margin) or it is not data."""
    fd = stream.fileno()
    buf = bytearray()
    need, size = _sqlworker._HEADER.size, None
    with selectors.DefaultSelector() as sel:   # not select(): descriptors pass 1024
        sel.register(fd, selectors.EVENT_READ)
        while True:
            if size is None and len(buf) == need:
                (size,) = _sqlworker._HEADER.unpack(bytes(buf))
                if size > max_bytes + _MARGIN:
                    return Unreadable(f"a reply of {size:,} bytes")
                need += size
            if size is not None and len(buf) == need:
                try:
                    return loads(bytes(buf[_sqlworker._HEADER.size:]))
                except Exception as e:  # noqa: BLE001 - any bytes may come; none are run
                    return Unreadable(f"{type(e).__name__}: {str(e)[:200]}")
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if not sel.select(left):
                continue
            part = os.read(fd, min(need - len(buf), 1 << 20))   # never into the next one
            if not part:
                return EOF
            buf += part
