"""What a refusal of an unknown column tells the model: where the column lives, and how.

A small model repeats its query when told only that a column is unknown, so the gate's
refusal (:func:`.sqlgate.check_sql`) names the tables that have the column and whether the
query reads them; for a table it does not read, the join that reaches it from one it does:

* along declared foreign keys, through link tables too (``awards`` between ``laureates``
  and ``medals``): "join awards ON awards.laureate_name = laureates.name, then medals ON
  medals.medal_name = awards.medal_name";
* else along columns both tables have that name one side's entity (``laureate_id``,
  ``laureate_name`` of ``laureates``), which no foreign key declares: the same, with "or
  write the query without" the column, since nothing says they hold the same values. A
  column every table may have (``name``, ``id``, ``year``) links nothing: a medal's name is
  no laureate's;
* else: the table cannot be joined, and the query must do without the column (told only to
  "join stedrurial_medal", a table nothing linked, the 1.5B model wrote its refused query
  twice more: ``abstain-docsage-set1``).

Every table that has the column is tried: the fewest joins first, then the fewest no foreign
key declares. Otherwise the closest column names are given.
"""

from __future__ import annotations

import difflib
from collections import deque

from quaderno.methods.docsage.autojoin import unresolved
from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.rekey import stems
from quaderno.methods.docsage.schema import Schema

# at most this many tables joined to reach the column
_MAX_HOPS = 3


def _links(schema: Schema, a: str, b: str) -> tuple[str, bool] | None:
    """(condition, declared) of a join between tables ``a`` and ``b``: a declared foreign
    key either way, else the columns both have that name one side's entity; None."""
    for t in schema.tables:
        for fk in t.foreign_keys:
            if {t.name, fk.ref_table} == {a, b} and a != b:
                return " AND ".join(f"{t.name}.{c} = {fk.ref_table}.{r}"
                                    for c, r in zip(fk.cols, fk.ref_cols, strict=True)), True
    ta, tb = schema.table(a), schema.table(b)
    if ta is None or tb is None or a == b:
        return None
    named = {f"{s}{sep}{w}" for s in stems(a) | stems(b) for sep in ("", "_")
             for w in ("id", "name")}
    shared = [c for c in ta.column_names if c in tb.column_names and slug(c) in named]
    if shared:
        return " AND ".join(f"{a}.{c} = {b}.{c}" for c in shared), False
    return None


def join_path(schema: Schema, table: str, read: list[str],
              declared_only: bool = False) -> list[tuple[str, str, bool]]:
    """The shortest join from a table of ``read`` to ``table``: (table joined, condition,
    declared) per step, in order; [] when none within :data:`_MAX_HOPS`. ``declared_only``:
    along declared foreign keys alone."""
    names = [t.name for t in schema.tables]
    seen = set(read)
    queue: deque[tuple[str, list[tuple[str, str, bool]]]] = deque((r, []) for r in read)
    while queue:
        at, path = queue.popleft()
        if len(path) >= _MAX_HOPS:
            continue
        for nxt in names:
            if nxt in seen or (link := _links(schema, nxt, at)) is None or \
                    (declared_only and not link[1]):
                continue
            step = [*path, (nxt, *link)]
            if nxt == table:
                return step
            seen.add(nxt)
            queue.append((nxt, step))
    return []


def column_hint(error: str, schema: Schema, read: list[str]) -> str:
    """Where the unresolved column of ``error`` lives and how the query can reach it
    (module docstring); "" when the error names no column."""
    what = unresolved(error)
    if what is None:
        return ""
    name = what[0]
    owners = [t.name for t in schema.tables if name in t.column_names]
    if not owners:
        scored = sorted(((difflib.SequenceMatcher(None, name, c).ratio(), f"{t.name}.{c}")
                         for t in schema.tables for c in t.column_names), reverse=True)
        close = [q for ratio, q in scored[:3] if ratio >= 0.6]
        return f". No table has {name}" + (f"; the closest: {', '.join(close)}" if close else "")
    unread = [t for t in owners if t not in read]
    if not unread:
        return (f". {name} is a column of {' and '.join(owners)}: qualify it with that "
                "table's name or alias")
    where = f". {name} is a column of {' and '.join(unread)}, which the query does not read"
    paths = [p for t in unread for only in (True, False)
             if (p := join_path(schema, t, read, declared_only=only))]
    if paths:
        # the fewest joins, then the fewest no foreign key declares
        path = min(paths, key=lambda p: (len(p), sum(not d for _, _, d in p)))
        said = ", then ".join(f"{t} ON {on}" for t, on, _ in path)
        if all(declared for _, _, declared in path):
            return f"{where}: join {said}"
        return (f"{where}: join {said} (columns of the same name; no foreign key declares "
                f"them), or write the query without {name}")
    return (f"{where}, and no foreign key or column naming the same entity links "
            f"{' or '.join(unread)} to {' or '.join(read) or 'the tables it reads'}: it "
            f"cannot be joined; write the query without {name}")


__all__ = ["column_hint", "join_path"]
