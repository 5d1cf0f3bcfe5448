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
chunk named, and two tables' ids meet only where one chunk wrote both. A row CLEAR merged
from several chunks (:func:`.aliases.merge_entities`) is what each of their numbers meant.

- A number every chunk using it states (a real id, "commission no. 7" wherever 7 is used)
  keeps its value and one meaning across chunks; new numbers start above every number the
  keys hold, so none meets it. A number some chunk states by chance ("Tier 1") and another
  does not is the model's.
- Only whole numbers are renumbered: a name in an id column is left as it is.
- Nothing changes when no key has a number used by two chunks; when one has, every key is
  renumbered, so a key left alone cannot meet another's new numbers.

Each renumbered cell records a correction naming its chunk, so the row's provenance says
what was done.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from quaderno.methods.docsage.invented import holders, invented_keys
from quaderno.methods.docsage.rows import Correction, Row, noted, value_chunk
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.spans import mentions

_REASON = "invented-key"


def whole_number(value: Any) -> int | None:
    """``value`` as the whole number it writes (1, "1", " 1 ", 1.0, "-2"), else None (a
    name, a fraction, a bool, a list)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in "+-" else text
        return int(text) if digits.isascii() and digits.isdigit() else None
    return None


@dataclass
class _Cell:
    row: int                 # index into the rows
    table: Table
    column: str
    number: int
    chunks: list[str]        # the chunk the value came from, then those merged into its row


@dataclass
class _Key:
    """One invented key: its table's own column first, then the columns holding it."""

    table: Table
    column: str
    columns: list[tuple[Table, str]]
    cells: list[_Cell] = field(default_factory=list)
    shared: set[int] = field(default_factory=set)   # numbers every chunk using them states

    def owns(self, table: Table, column: str) -> bool:
        """``table.column`` is the key itself, not a column holding it."""
        return (table.name, column) == (self.table.name, self.column)

    def collides(self) -> bool:
        """Some number of the model's stands for things of two chunks."""
        used: dict[int, set[str]] = {}
        for c in self.cells:
            if c.number not in self.shared:
                used.setdefault(c.number, set()).update(c.chunks)
        return any(len(chunks) > 1 for chunks in used.values())


def _keys(schema: Schema, rows: Sequence[Row], texts: Mapping[str, str]) -> list[_Key]:
    keys = []
    for signal in invented_keys(schema, rows, texts):
        table = schema.table(signal.table)
        if table is None or signal.column not in table.column_names:
            continue
        key = _Key(table, signal.column,
                   [(table, signal.column), *holders(schema, table, signal.column)])
        by_table: dict[str, list[tuple[Table, str]]] = {}
        for t, c in key.columns:
            by_table.setdefault(t.name, []).append((t, c))
        for i, r in enumerate(rows):
            for t, c in by_table.get(r.table, ()):
                if (number := whole_number(r.values.get(c))) is None:
                    continue
                chunk = value_chunk(r.provenance.chunk_id, r.provenance.corrections, c)
                # the entity's own key is what every merged row's number meant
                merged = r.provenance.merged if key.owns(t, c) else []
                key.cells.append(_Cell(i, t, c, number, [chunk, *merged]))
        by_number: dict[int, set[str]] = {}
        for cell in key.cells:
            by_number.setdefault(cell.number, set()).update(cell.chunks)
        # a number as a whole word, as an id is written: "1" is not in "1,500" nor "1991"
        key.shared = {n for n, chunks in by_number.items()
                      if all(c in texts and mentions(texts[c], n, "INT") for c in chunks)}
        keys.append(key)
    return keys


def scope_invented_keys(schema: Schema, rows: Sequence[Row],
                        texts: Mapping[str, str]) -> tuple[list[Row], list[str]]:
    """(rows, what was renumbered): ``rows`` with every invented key and the columns holding
    it numbered per chunk (module docstring); ``texts``: chunk id -> the text extraction
    was shown. One line per renumbered key, for the trace and the run's record."""
    keys = _keys(schema, rows, texts)
    if not any(k.collides() for k in keys):
        return list(rows), []
    out, notes = list(rows), []
    start = max(abs(c.number) for k in keys for c in k.cells) + 1
    numbers: dict[tuple[str, int], int] = {}    # (chunk, old number) -> new number

    def number_of(cell: _Cell, shared: set[int]) -> int:
        if cell.number in shared:
            return cell.number
        scopes = [(chunk, cell.number) for chunk in cell.chunks]
        new = next((numbers[s] for s in scopes if s in numbers), start + len(numbers))
        for s in scopes:
            numbers.setdefault(s, new)
        return new

    changes: dict[int, tuple[dict, list[Correction]]] = {}
    for key in keys:
        # the key's own cells first: a merged row claims each of its chunks' number before
        # a reference of one of those chunks is numbered
        moved = 0
        for cell in sorted(key.cells, key=lambda c, k=key: not k.owns(c.table, c.column)):
            new = number_of(cell, key.shared)
            if new == cell.number:
                continue
            moved += 1
            values, corrections = changes.setdefault(cell.row, (dict(out[cell.row].values), []))
            old = values[cell.column]
            values[cell.column] = new if cell.table.column(cell.column).type in (
                "INT", "DOUBLE") else str(new)
            corrections.append(Correction(column=cell.column, old=old,
                                          new=values[cell.column], reason=_REASON,
                                          by="chunk-scope", evidence_chunk=cell.chunks[0]))
        if moved:
            held = ", ".join(f"{t.name}.{c}" for t, c in key.columns[1:])
            chunks = len({ch for c in key.cells for ch in c.chunks})
            notes.append(f"{key.table.name}.{key.column}" + (f" (and {held})" if held else "")
                         + f": no chunk states it; {moved} cell(s) from {chunks} chunk(s) "
                         "numbered per chunk, so a join pairs only rows of one chunk")
    for i, (values, corrections) in changes.items():
        out[i] = noted(out[i], corrections, values)
    return out, notes


__all__ = ["scope_invented_keys", "whole_number"]
