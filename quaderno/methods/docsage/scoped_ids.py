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
chunk named, and two tables' ids meet only where one chunk wrote both.

- A row CLEAR merged from rows of several chunks that gave the entity the same number
  (:func:`.aliases.merge_entities`, ``Provenance.agreed``) is what that number meant in each
  of those chunks, for that key's references only: another key's 1 in the same chunks
  stays apart.
- A number that two or more chunks use and that every chunk using it, for any key, states
  (a real id, "commission no. 7") keeps its value and one meaning across chunks; new numbers
  are allocated from 1 up, past such numbers and those of id columns no key renumbers (a
  table too small to judge). A number one chunk alone uses, or some chunk states by chance
  ("Tier 1") and another does not, is the model's.
- Only cells read as whole numbers (as the loader reads an INT: "1,024", "4.0") are
  renumbered: a name in an id column is left as it is.
- Nothing changes when no key has a number used by two chunks; when one has, every key is
  renumbered, so a key left alone cannot meet another's new numbers.

Each renumbered cell records a correction naming its chunk, so the row's provenance says
what was done.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from quaderno.methods.docsage.invented import holders, invented_keys, is_reference
from quaderno.methods.docsage.rekey import id_named
from quaderno.methods.docsage.rows import (BIGINT_MAX, Correction, Row, noted, value_chunk,
                                          whole_number)
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.spans import mentions

_REASON = "invented-key"


@dataclass
class _Cell:
    row: int                 # index into the rows
    table: Table
    column: str
    number: int
    chunk: str               # the chunk the value came from
    agreed: list[str]        # chunks whose merged rows gave the same number (own cells)


@dataclass
class _Key:
    """One invented key: its table's own column first, then the columns holding it."""

    table: Table
    column: str
    columns: list[tuple[Table, str]]
    cells: list[_Cell] = field(default_factory=list)

    def owns(self, table: Table, column: str) -> bool:
        """``table.column`` is the key itself, not a column holding it."""
        return (table.name, column) == (self.table.name, self.column)

    def collides(self, shared: set[int]) -> bool:
        """Some number of the model's stands for things of two chunks."""
        used: dict[int, set[str]] = {}
        for c in self.cells:
            if c.number not in shared:
                used.setdefault(c.number, set()).update([c.chunk, *c.agreed])
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
                # chunks whose merged rows gave this number, while the cell still holds it
                agreed = [ch for ch, v in r.provenance.agreed.get(c, {}).items()
                          if whole_number(v) == number] if key.owns(t, c) else []
                key.cells.append(_Cell(i, t, c, number, chunk, agreed))
        keys.append(key)
    return keys


def _shared(keys: Sequence[_Key], texts: Mapping[str, str]) -> set[int]:
    """The numbers two or more chunks use, each of which states it wherever it is used, for
    any key: a real id, with one meaning everywhere."""
    by_number: dict[int, set[str]] = {}
    for key in keys:
        for cell in key.cells:
            by_number.setdefault(cell.number, set()).update([cell.chunk, *cell.agreed])
    # a number as a whole word, as an id is written: "1" is not in "1,500" nor "1991"
    return {n for n, chunks in by_number.items() if len(chunks) > 1
            and all(c in texts and mentions(texts[c], n, "INT") for c in chunks)}


def _kept(schema: Schema, rows: Sequence[Row], keys: Sequence[_Key],
          shared: set[int]) -> set[int]:
    """The numbers new ones must pass: the shared ones, and every whole number held by an id
    column or reference no key renumbers (a table too small to judge its key invented):
    a new number equal to one would meet it in a join."""
    renumbered = {(k_t.name, k_c) for k in keys for k_t, k_c in k.columns}
    ids = {(t.name, c.name) for t in schema.tables for c in t.columns
           if (t.name, c.name) not in renumbered
           and (id_named(c.name, t.name) or is_reference(schema, t, c.name))}
    held = {n for r in rows for (t, c) in ids if t == r.table
            and (n := whole_number(r.values.get(c))) is not None}
    return shared | held


def _free(taken: set[int]) -> Iterator[int]:
    """1, 2, 3, ... without the numbers ``taken``."""
    n = 0
    while n < BIGINT_MAX:
        n += 1
        if n not in taken:
            yield n


def scope_invented_keys(schema: Schema, rows: Sequence[Row],
                        texts: Mapping[str, str]) -> tuple[list[Row], list[str]]:
    """(rows, what was renumbered): ``rows`` with every invented key and the columns holding
    it numbered per chunk (module docstring); ``texts``: chunk id -> the text extraction
    was shown. One line per renumbered key, for the trace and the run's record."""
    keys = _keys(schema, rows, texts)
    shared = _shared(keys, texts)
    if not any(k.collides(shared) for k in keys):
        return list(rows), []
    out, notes = list(rows), []
    free = _free(_kept(schema, rows, keys, shared))
    numbers: dict[tuple[str, int], int] = {}    # (chunk, old number) -> new, for every key

    def number(scope: tuple[str, int]) -> int:
        if scope not in numbers:
            numbers[scope] = next(free)
        return numbers[scope]

    changes: dict[int, tuple[dict, list[Correction]]] = {}
    for key in keys:
        # this key's own rows first: a merged row is its number in each chunk that agreed,
        # for this key's references (``mine``); no other key sees it
        mine: dict[tuple[str, int], int] = {}
        moved: list[_Cell] = []
        for cell in sorted(key.cells, key=lambda c, k=key: not k.owns(c.table, c.column)):
            scope = (cell.chunk, cell.number)
            if cell.number in shared:
                new = cell.number
            elif key.owns(cell.table, cell.column):
                new = mine.get(scope) or number(scope)
                for chunk in [cell.chunk, *cell.agreed]:
                    mine.setdefault((chunk, cell.number), new)
            else:
                new = mine.get(scope) or number(scope)
            old = out[cell.row].values[cell.column]
            typed = new if cell.table.column(cell.column).type in ("INT", "DOUBLE") else str(new)
            if type(typed) is type(old) and typed == old:
                continue
            moved.append(cell)
            values, corrections = changes.setdefault(cell.row, (dict(out[cell.row].values), []))
            values[cell.column] = typed
            corrections.append(Correction(column=cell.column, old=old, new=typed,
                                          reason=_REASON, by="chunk-scope",
                                          evidence_chunk=cell.chunk))
        if moved:
            held = ", ".join(f"{t.name}.{c}" for t, c in key.columns[1:])
            notes.append(f"{key.table.name}.{key.column}" + (f" (and {held})" if held else "")
                         + f": {len(moved)} cell(s) from "
                         f"{len({c.chunk for c in moved})} chunk(s) numbered per chunk, as no "
                         "chunk states them; a join pairs only rows of one chunk")
    for i, (values, corrections) in changes.items():
        out[i] = noted(out[i], corrections, values)
    return out, notes


__all__ = ["scope_invented_keys", "whole_number"]
