"""The cells a question needs, and the entities of the extracted rows whose needed cells are
empty: what completion (:mod:`.complete`) searches for.

The cells the question needs are checked per entity the rows name (aliases merged, as CLEAR
will merge them):

* the required attributes of the schema, the columns holding what the question measures
  (:func:`.terms.measured_columns`), the references along its join path (a company's
  commission), and the columns the question names by every word of their name (its filter
  "whose sector is energy", its answer "the chief executive of ..."): Bryskound Holdings'
  sector, stated in a document of its own, was never searched for
  (``docsage-head-set2``).

An entity a row of a table on the join path refers to that has no row of its own (a member
city named only in the league's roster) misses every needed cell of its table. An entity
named by a number only (an id) is not searched for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quaderno.methods.docsage.aliases import canonicalize, merge_entities
from quaderno.methods.docsage.ended import ended_columns
from quaderno.methods.docsage.misplaced import all_back_links
from quaderno.methods.docsage.normalize import (entity_name, is_null, key_columns, key_name,
                                                normalize_entity)
from quaderno.methods.docsage.rekey import singular
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.terms import measured_columns

# one-word column names too generic to be what a question names by them
_GENERIC_NAMES = frozenset("name type year value status date code number count total title "
                           "description notes note kind category label".split())


def named_columns(schema: Schema, question: str) -> list[tuple[str, str]]:
    """(table, column) of each column every word of whose name ``question`` writes, plurals
    aside (``sector``, ``chief_executive``); never an id (``company_id``: its "id" is no
    word of the question), nor a one-word name too generic to be named (``name``,
    ``year``, ``type``)."""
    asked = {singular(w) for w in re.findall(r"[a-z0-9]+", question.lower())}
    out = []
    for t in schema.tables:
        for c in t.columns:
            words = [singular(w) for w in re.split(r"[^a-z0-9]+", c.name.lower()) if w]
            if not words or (len(words) == 1 and words[0] in _GENERIC_NAMES):
                continue
            if all(w in asked for w in words):
                out.append((t.name, c.name))
    return out


def needed_columns(schema: Schema, question: str,
                   named: bool = True) -> list[tuple[str, str]]:
    """(table, column) of every non-key cell the question needs (module docstring); without
    ``named``, not those it only names (:func:`named_columns`)."""
    out: list[tuple[str, str]] = []
    for attr in schema.requirements.attributes:
        table, _, column = attr.partition(".")
        t = schema.table(table)
        if t is not None and column in t.column_names:
            out.append((table, column))
    out += measured_columns(schema, question)
    path = set(schema.requirements.join_path)
    for t in schema.tables:
        if t.name in path:
            out += [(t.name, c) for fk in t.foreign_keys if fk.ref_table in path for c in fk.cols]
    out += named_columns(schema, question) if named else []
    keys = {(t.name, k) for t in schema.tables for k in key_columns(t)}
    return [c for c in dict.fromkeys(out) if c not in keys]


def missing_words(schema: Schema, table: str, column: str) -> str:
    """What a search says is missing: a reference by the entity it names ("commission"),
    else the column's name ("annual revenue")."""
    t = schema.table(table)
    ref = next((fk.ref_table for fk in t.foreign_keys if column in fk.cols), None)
    return singular(ref.replace("_", " ")) if ref else column.replace("_", " ")


def entity_references(schema: Schema, table: Table) -> list[tuple[str, str]]:
    """(column, table it names an entity of) for each single-column foreign key of ``table``
    to its parent's key, and each column naming back the entity of a table that refers to
    ``table`` (:func:`.misplaced.back_links`: a roster's ``commissions.company_name``)."""
    out = []
    for fk in table.foreign_keys:
        parent = schema.table(fk.ref_table)
        if len(fk.cols) == 1 and parent is not None and fk.ref_cols == key_columns(parent):
            out.append((fk.cols[0], parent.name))
    return out + all_back_links(schema, table.name)


def missing_cells(schema: Schema, rows: Sequence[Row],
                  needed: Sequence[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """(entity, what is missing) for each entity whose needed cells are all or partly empty,
    in the order of its first row; an entity is named by its key's values. An entity a row
    refers to (a league's member city) that has no row of its own misses every needed cell
    of its table, and comes at the place of the first row naming it."""
    return [(n, w) for n, w, _ in missing_in_merged(
        schema, merge_entities(schema, canonicalize(schema, rows)[0]), needed)]


def missing_in_merged(schema: Schema, merged: Sequence[Row],
                      needed: Sequence[tuple[str, str]],
                      ) -> list[tuple[str, list[str], tuple[str, ...]]]:
    """:func:`missing_cells` over rows already canonicalized and merged, each entity with
    the tables it misses cells of, in the order it first misses one."""
    wanted: dict[str, list[str]] = {}
    for t, c in needed:
        wanted.setdefault(t, []).append(c)
    present: dict[str, set[str]] = {}
    for r in merged:
        table = schema.table(r.table)
        key = key_name(table, r.values) if table is not None else None
        if key:
            present.setdefault(r.table, set()).add(normalize_entity(key))
    missing: dict[str, list[str]] = {}
    of: dict[str, list[str]] = {}              # entity -> its tables
    path = set(schema.requirements.join_path)
    refers = {t.name: entity_references(schema, t) for t in schema.tables}

    def add(name: str, what: str, table: str) -> None:
        if table not in of.setdefault(name, []):
            of[name].append(table)
        if what not in missing.setdefault(name, []):
            missing[name].append(what)
    for r in merged:
        table = schema.table(r.table)
        if table is None:
            continue
        name = key_name(table, r.values)
        # a reference the text said has ended (ended.py) is known, not missing
        ended = ended_columns(r)
        if name is not None:                   # a name (an id is not searched for)
            for c in wanted.get(r.table, []):
                if is_null(r.values.get(c)) and c not in ended:
                    add(name, missing_words(schema, r.table, c), r.table)
        # the entities a row refers to, on the question's join path when it has one (a
        # city another table names for another reason is not what the question counts)
        for column, parent_name in refers[r.table] if not path or r.table in path else []:
            parent = schema.table(parent_name)
            ref = entity_name(r.values.get(column))
            if parent is None or ref is None or \
                    normalize_entity(ref) in present.get(parent.name, set()):
                continue
            for c in wanted.get(parent.name, []):
                add(ref, missing_words(schema, parent.name, c), parent.name)
    return [(n, w, tuple(of[n])) for n, w in missing.items() if w]


__all__ = ["entity_references", "missing_cells", "missing_in_merged", "missing_words",
           "named_columns", "needed_columns"]
