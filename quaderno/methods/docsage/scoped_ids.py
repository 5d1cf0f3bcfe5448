"""A number no chunk states joins only the rows of the chunk that wrote it.

An extraction call reads one chunk and numbers what it finds from 1. So on held-out Set2
(``s15r3-docsage-q006-set2``) eight rows of ``qixskouxba_markets_commission``, from five
chunks, all had ``id`` 1, and so did every membership row's ``qixskouxba_markets_commission_id``:
"the chief executive of the member with the most employees" joined every membership to every
company and answered with a name from another document. ASK re-keys such a table by a name
the chunks state (:mod:`.invented`); a table it cannot re-key (no column to key it by, or
its rounds spent) keeps the number, and a join on it pairs unrelated rows.

Of the committed runs' queries that ran, six joined two id columns, and all six answered
wrong: the other five read ``laureates.laureate_id = stedrurial_medal.laureate_id``, both
numbered from 1 in every chunk.

Before the tables are queried, each key :func:`.invented.invented_keys` finds in the final
rows, and every column holding it (:func:`.invented.holders`), is renumbered: one new number
per (chunk the cell's value came from, old number), one numbering for all such keys. A
number means what its own chunk meant by it: a join pairs a company with the memberships its
chunk named, and two tables' ids meet only where one chunk wrote both. A cell whose chunk
states its number (a real id, "commission no. 3") keeps one number across chunks. Nothing
changes where no number is used by two chunks. Each renumbered cell records a correction
naming its chunk, so the row's provenance says what was done.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from quaderno.methods.docsage.invented import holders, invented_keys
from quaderno.methods.docsage.normalize import is_null
from quaderno.methods.docsage.rows import Correction, Row, noted, value_chunk
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.spans import mentions

_REASON = "invented-key"


def _form(value: Any) -> str:
    """A number's text, the same for 1, "1" and 1.0."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text.casefold()
    return str(int(number)) if number.is_integer() else text


def _typed(number: int, col_type: str) -> Any:
    return number if col_type in ("INT", "DOUBLE") else str(number)


def _cells(rows: Sequence[Row], columns: Sequence[tuple[Table, str]],
           texts: Mapping[str, str]) -> list[tuple[int, Table, str, tuple[str | None, str]]]:
    """(row index, table, column, scope) of every filled cell of ``columns``; the scope is
    (the chunk the value came from, or None when that chunk states it; the number)."""
    by_table: dict[str, list[tuple[Table, str]]] = {}
    for t, c in columns:
        by_table.setdefault(t.name, []).append((t, c))
    out = []
    for i, r in enumerate(rows):
        for t, c in by_table.get(r.table, ()):
            value = r.values.get(c)
            if is_null(value):
                continue
            chunk = value_chunk(r.provenance.chunk_id, r.provenance.corrections, c)
            text = texts.get(chunk)
            stated = text is not None and mentions(text, value, t.column(c).type)
            out.append((i, t, c, (None if stated else chunk, _form(value))))
    return out


def scope_invented_keys(schema: Schema, rows: Sequence[Row],
                        texts: Mapping[str, str]) -> tuple[list[Row], list[str]]:
    """(rows, what was renumbered): ``rows`` with every invented key and the columns holding
    it numbered per chunk (module docstring); ``texts``: chunk id -> the text extraction
    was shown. One line per renumbered key, for the trace and the run's record."""
    out, notes = list(rows), []
    # one numbering for every key: a chunk's 1 of one table and its 1 of another stay one
    # number (``ON t1.id = t2.id`` pairs the rows one chunk wrote), and no two chunks'
    # numbers ever meet
    numbers: dict[tuple[str | None, str], int] = {}
    for signal in invented_keys(schema, rows, texts):
        table = schema.table(signal.table)
        if table is None or signal.column not in table.column_names:
            continue
        columns = [(table, signal.column), *holders(schema, table, signal.column)]
        cells = _cells(out, columns, texts)
        scopes: dict[str, set[str | None]] = {}
        for *_, (chunk, number) in cells:
            scopes.setdefault(number, set()).add(chunk)
        if not any(len(chunks) > 1 for chunks in scopes.values()):
            continue   # no number means two things: nothing to tell apart
        changes: dict[int, tuple[dict, list[Correction]]] = {}
        for i, t, c, scope in cells:
            new = _typed(numbers.setdefault(scope, len(numbers) + 1), t.column(c).type)
            old = out[i].values[c]
            if _form(old) == _form(new):
                continue
            values, corrections = changes.setdefault(i, (dict(out[i].values), []))
            values[c] = new
            corrections.append(Correction(column=c, old=old, new=new, reason=_REASON,
                                          by="chunk-scope", evidence_chunk=scope[0]))
        for i, (values, corrections) in changes.items():
            out[i] = noted(out[i], corrections, values)
        held = ", ".join(f"{t.name}.{c}" for t, c in columns[1:])
        notes.append(f"{table.name}.{signal.column}" + (f" (and {held})" if held else "")
                     + f": no chunk states it, and {len(scopes)} number(s) stood for "
                     f"{sum(map(len, scopes.values()))} things in different chunks; numbered "
                     "per chunk, so a join pairs only rows of one chunk")
    return out, notes


__all__ = ["scope_invented_keys"]
