"""A result's numbers as the documents write them.

A numeric result cell is a number in its column's unit: 63907400000.0 for a revenue one
document writes "USD 63907.4M". The model often gives a column no unit, so the number alone
says neither dollars nor people, and an answer that repeats it ("63,907,400,000") leaves the
user to guess. The row's lineage says which tuples it was computed from, and each tuple which
chunk a value was read from: :func:`stated_values` finds, per numeric cell of the result, a
source tuple holding the same value in a column the query's projection reads, and quotes the
chunk's number with its currency sign, scale word or measure (:meth:`Mention.as_written`).
A count, an average or any computed value equals no stated value, so it gets no quote.

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

from quaderno.methods.docsage.amounts import mentions_in, stated_mentions
from quaderno.methods.docsage.records import ResultTable, RowSource, StatedValue
from quaderno.methods.docsage.rows import exact_number
from quaderno.methods.docsage.schema import Schema


def projected_columns(sql: str, columns: Sequence[str]) -> list[set[str]]:
    """Per result column, the names of the table columns its projection reads (lower case);
    empty for a count, whose value no document states. ``SELECT *`` and a projection that
    cannot be read map a result column to its own name."""
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
        elif inner.find(exp.Count):
            out.append(set())
        else:
            out.append({c.name.lower() for c in inner.find_all(exp.Column)})
    return out


def _number(value: Any) -> Decimal | None:
    return exact_number(value) if isinstance(value, (int, float)) else None


def _quote(value: Decimal, wanted: set[str], sources: Sequence[RowSource], schema: Schema,
           texts: Mapping[str, str]) -> tuple[str, str, str] | None:
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
            chunk = src.cell_chunks.get(col.name, src.chunk_id)
            text = texts.get(chunk)
            found = stated_mentions(text, cell, col) if text else []
            if found:
                return (found[0].as_written(text), chunk,
                        src.doc_id if chunk == src.chunk_id else "")
    return None


def _adds(quote: str) -> bool:
    """True when a quote says more than its figures: a currency, scale or measure."""
    return any(ch.isalpha() or ch in "$€£¥%°" for ch in quote)


def stated_values(table: ResultTable, schema: Schema,
                  texts: Mapping[str, str]) -> list[StatedValue]:
    """Every numeric cell of ``table`` a source chunk states with more than its figures (a
    currency, scale word or measure: not "1874" for 1874), with the chunk's words for it.
    ``texts``: chunk id → the text extraction read (``Chunk.render()``)."""
    wanted = projected_columns(table.sql, table.columns)
    out = []
    for i, row in enumerate(table.rows):
        sources = table.sources[i] if i < len(table.sources) else []
        for j, cell in enumerate(row):
            value = _number(cell)
            if value is None or j >= len(wanted) or not wanted[j]:
                continue
            found = _quote(value, wanted[j], sources, schema, texts)
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
