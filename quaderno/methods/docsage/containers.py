"""A container's table beside its members' table becomes a reference (a draft repair).

Asked for the energy companies "in the Drournlia Markets Commission", the 1.5B measuring
model drew ``companies`` and, beside it, ``DrournliaMarketsCommission`` with the same
columns: a second copy of the companies, read from the same chunks, and no column saying
which company is in the commission. Extraction then wrote the commission into ``sector`` or
``country``, and the SQL filtered ``sector = 'Drournlia Markets Commission'``
(``docsage-containers-set2``). Relationally, membership is a reference:
``companies.commission_name`` to ``commissions(commission_name)``. So, once
:func:`.siblings.merge_siblings` has folded the container's columns into the members' table,
:func:`refer_to_container` gives that table a column naming the container's kind (or keeps
one it has: a reference to a table of the kind, a TEXT ``commission`` or
``commission_name``), declared as a foreign key to a table of that kind (the draft's own, by
its TEXT key or name column, else a new one keyed by the kind's name), and requires it. The
column is placed before the merge, so the column cap never leaves it out. A reference a
chunk says has ended ("left the commission in 2005") is then emptied like any other
(:mod:`.ended`).

The kind is read from the container's name as the question writes it: the word before "of"
("League of Merounddian Cities": league), else the last word ("Drournlia Markets
Commission": commission). A one-word name says no kind, and is left as it is; so is a
container the question does not write as what the members are in, one whose kind ends
another sibling's name, and one of two (:func:`.siblings._referable`).
"""

from __future__ import annotations

from quaderno.methods.docsage.draft import (MAX_REFERENCES, MAX_REQUIRED, MAX_TABLES,
                                            DraftColumn, DraftForeignKey, DraftTable,
                                            SchemaDraft, slug)
from quaderno.methods.docsage.rekey import plural, singular


def container_kind(written: str) -> str:
    """The kind a container's name says it is: ``league`` for "League of Merounddian
    Cities", ``commission`` for "Drournlia Markets Commission"; "" for one word."""
    words = written.split()
    if len(words) < 2:
        return ""
    lower = [w.casefold() for w in words]
    word = words[lower.index("of") - 1] if "of" in lower[1:] else words[-1]
    kind = singular(slug(word))
    return kind if kind.isalpha() else ""


def _names_kind(column: str, kind: str) -> bool:
    return slug(column) in (kind, f"{kind}_name", f"{kind}name", f"{kind}_title")


def _of_kind(table: str, kind: str) -> bool:
    own = slug(table)
    return own in (kind, plural(kind)) or singular(own) == kind


def reference_column(draft: SchemaDraft, members: DraftTable, kind: str) -> str | None:
    """The column of ``members`` that is to name a container of ``kind``: one referring to
    a table of the kind already (``commission_id``), else a TEXT column naming the kind
    (``commission``, ``commission_name``), else ``<kind>_name`` to be added; None when that
    name is taken by a column of another type."""
    for fk in members.foreign_keys:
        if _of_kind(fk.references_table, kind):
            return fk.column
    named = [c for c in members.columns if _names_kind(c.name, kind)]
    text = [c for c in named if c.type == "TEXT"]
    if text:
        return text[0].name
    new = f"{kind}_name"
    return None if any(slug(c.name) == new for c in members.columns) else new


def _kind_table(draft: SchemaDraft, kind: str,
                members: DraftTable) -> tuple[DraftTable | None, str]:
    """The draft's table of ``kind`` and its TEXT column naming each one (a one-column TEXT
    key, else ``name`` or ``<kind>_name``): (table, column), (table, "") when the table
    has no such column, (None, "") when the draft has no table of the kind."""
    for t in draft.tables:
        if t is members or not _of_kind(t.name, kind):
            continue
        text = {slug(c.name): c.name for c in t.columns if c.type == "TEXT"}
        if len(t.primary_key) == 1 and slug(t.primary_key[0]) in text:
            return t, text[slug(t.primary_key[0])]
        named = [text[n] for n in text if n == "name" or _names_kind(n, kind)]
        return t, (named[0] if named else "")
    return None, ""


def refer_to_container(draft: SchemaDraft, members: DraftTable, member_kind: str,
                       written: str, column: str) -> str:
    """``members`` (the table the container was merged into) given its reference to the
    container, in place: ``column`` (:func:`reference_column`, already one of its columns)
    described when it has no description, a foreign key to the draft's table of the
    container's kind (or a new one keyed by its name) unless the column has one, and a
    required attribute; ``written``: the container's name as the question writes it.
    A note of what was done."""
    kind = container_kind(written)
    col = next(c for c in members.columns if slug(c.name) == slug(column))
    if not col.description and col.type == "TEXT":   # an id reference is re-keyed by ASK
        col.description = (f"the {kind} this {member_kind or 'entity'} is part of or listed "
                           f"in, as the text names it (such as {written!r}); empty when the "
                           "text names none")
    note = (f"{written!r} is the {kind} the question filters {members.name!r} by: "
            f"{members.name}.{col.name} names it")
    if len(members.foreign_keys) < MAX_REFERENCES and not any(
            slug(fk.column) == slug(col.name) for fk in members.foreign_keys):
        table, key = _kind_table(draft, kind, members)
        if table is None and len(draft.tables) < MAX_TABLES:
            table, key = DraftTable(name=plural(kind), description=f"each {kind}, by its name",
                                    columns=[DraftColumn(name=f"{kind}_name",
                                                         description=f"the {kind}'s name")],
                                    primary_key=[f"{kind}_name"]), f"{kind}_name"
            draft.tables.append(table)
            note += f", a reference to the new table {table.name!r}"
        elif key:
            note += f", a reference to {table.name}.{key}"
        if table is not None and key:
            members.foreign_keys.append(DraftForeignKey(
                column=col.name, references_table=table.name, references_column=key))
    attribute = f"{members.name}.{col.name}"
    if attribute not in draft.required_attributes and \
            len(draft.required_attributes) < MAX_REQUIRED:
        draft.required_attributes.append(attribute)
    return note


__all__ = ["container_kind", "reference_column", "refer_to_container"]
