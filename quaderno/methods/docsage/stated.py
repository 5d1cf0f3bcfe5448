"""A result's numbers as the documents write them.

A numeric result cell is a number in its column's unit: 63907400000.0 for a revenue one
document writes "USD 63907.4M". The model often gives a column no unit, so the number alone
says neither dollars nor people, and an answer that repeats it ("63,907,400,000") leaves the
user to guess. The row's lineage says which tuples it was computed from, and each tuple which
chunk a value was read from: :func:`stated_values` quotes, per numeric cell of the result that
is one tuple's value (a bare column, or the MIN, MAX or ANY_VALUE of one), the chunk's number
with its currency sign, scale word or measure (:meth:`Mention.as_written`). A count, a sum,
an average or any arithmetic is computed, not stated, and gets no quote even where it equals a
stated value. A number the chunk writes as something the column cannot hold (a count's "3%")
is no quote, and neither is a number the chunk writes two ways.

:func:`with_stated` adds such a quote to an answer that gives a quoted number in figures only,
so the unit the documents used reaches the user: "63907400000.0 (written "USD 63907.4M" in
d00043)".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from quaderno.corpus.chunk import Chunk
from quaderno.methods.docsage.amounts import foreign, mentions_in, stated_mentions
from quaderno.methods.docsage.chunk_extract import doc_id_of
from quaderno.methods.docsage.records import ResultTable, RowSource, StatedValue
from quaderno.methods.docsage.rows import exact_number
from quaderno.methods.docsage.schema import Column, Schema


# aggregates whose value is one tuple's value
_PICKS = (exp.Max, exp.Min, exp.AnyValue, exp.First, exp.Last)


def _read_column(node: exp.Expression) -> str | None:
    """The column a projection returns a value of unchanged, or None (computed)."""
    if isinstance(node, exp.Paren):
        return _read_column(node.this)
    if isinstance(node, exp.Column):
        return node.name.lower()
    if isinstance(node, _PICKS) and not node.expressions:
        return _read_column(node.this)
    return None


def projected_columns(sql: str, columns: Sequence[str]) -> list[set[str]]:
    """Per result column, the table column whose values it returns unchanged (a bare
    column, or the MIN, MAX or ANY_VALUE of one), lower case; empty for anything computed
    (a count, a sum, an average, arithmetic), which no document states. ``SELECT *`` and a
    projection that cannot be read map a result column to its own name."""
    own = [{c.lower()} for c in columns]
    try:
        root = sqlglot.parse_one(sql, read="duckdb") if sql else None
    except SqlglotError:
        return own
    while isinstance(root, (exp.SetOperation, exp.Subquery)):
        root = root.this
    if not isinstance(root, exp.Select) or len(root.expressions) != len(columns):
        return own
    out: list[set[str]] = []
    for proj, name in zip(root.expressions, columns, strict=True):
        inner = proj.this if isinstance(proj, exp.Alias) else proj
        if isinstance(inner, exp.Star):
            out.append({name.lower()})
            continue
        column = _read_column(inner)
        out.append({column} if column else set())
    return out


def _number(value: Any) -> Decimal | None:
    return exact_number(value) if isinstance(value, (int, float)) else None


def _written(src: RowSource, col: Column, cell: Any, text: str) -> str | None:
    """How ``text`` writes ``cell`` of ``col``: one form, or None when it writes the value
    as something the column cannot hold or in two different ways."""
    found = [m for m in stated_mentions(text, cell, col) if not foreign(col, m)]
    scaled = [c.get("evidence_quote") for c in src.corrections
              if c.get("reason") == "scale" and c.get("column") == col.name]
    if scaled:     # the number extraction read the scale from
        found = [m for m in found if text[m.start:m.end] in scaled] or found
    forms = {m.as_written(text) for m in found}
    return forms.pop() if len(forms) == 1 else None


def _quote(value: Decimal, wanted: set[str], sources: Sequence[RowSource], schema: Schema,
           chunks: Mapping[str, Chunk]) -> tuple[str, str, str] | None:
    """(quote, chunk id, document id) of the first source cell stating ``value``."""
    for src in sources:
        table = schema.table(src.table)
        if table is None:
            continue
        for col in table.columns:
            if col.name.lower() not in wanted:
                continue
            cell = src.values.get(col.name)
            if _number(cell) != value:
                continue
            chunk = chunks.get(src.cell_chunks.get(col.name, src.chunk_id))
            quote = _written(src, col, cell, chunk.render()) if chunk is not None else None
            if quote is not None:
                return quote, chunk.id, doc_id_of(chunk)
    return None


def _adds(quote: str) -> bool:
    """True when a quote says more than its figures: a currency, scale or measure."""
    return any(ch.isalpha() or ch in "$€£¥%°" for ch in quote)


def stated_values(table: ResultTable, schema: Schema, chunks: Mapping[str, Chunk], *,
                  limit: int = 50) -> list[StatedValue]:
    """Every numeric cell of the first ``limit`` rows of ``table`` a source chunk states with
    more than its figures (a currency, scale word or measure: not "1874" for 1874), with the
    chunk's words for it. ``chunks``: chunk id → the chunk extraction read."""
    wanted = projected_columns(table.sql, table.columns)
    out = []
    for i, row in enumerate(table.rows[:limit]):
        sources = table.sources[i] if i < len(table.sources) else []
        for j, cell in enumerate(row):
            value = _number(cell)
            if value is None or value < 0 or j >= len(wanted) or not wanted[j]:
                continue
            found = _quote(value, wanted[j], sources, schema, chunks)
            if found and _adds(found[0]):
                quote, chunk, doc = found
                out.append(StatedValue(row=i + 1, column=table.columns[j], value=cell,
                                       quote=quote, chunk_id=chunk, doc_id=doc))
    return out


def with_stated(answer: str, stated: Sequence[StatedValue], rows: Sequence[int]) -> str:
    """``answer`` with the documents' own words for each number it gives of the ``rows``
    (1-based) cited, where the answer does not quote them already."""
    given = {m.value for m in mentions_in(answer)}
    notes = []
    for s in stated:
        if s.row not in rows or s.quote in answer:
            continue
        if _number(s.value) not in given:
            continue
        where = f" in {s.doc_id}" if s.doc_id else ""
        note = f'written "{s.quote}"{where}'
        if note not in notes:
            notes.append(note)
    return f"{answer} ({'; '.join(notes)})" if notes else answer


__all__ = ["projected_columns", "stated_values", "with_stated"]
