"""A container's table beside its members' table becomes a reference (a draft repair).

Asked for the energy companies "in the Drournlia Markets Commission", the 1.5B measuring
model drew ``companies`` and, beside it, ``DrournliaMarketsCommission`` with the same
columns: a second copy of the companies, read from the same chunks, and no column saying
which company is in the commission. Extraction then wrote the commission into ``sector`` or
``country``, and the SQL filtered ``sector = 'Drournlia Markets Commission'``
(``docsage-containers-set2``). Relationally, membership is a reference:
``companies.commission_name`` to ``commissions(commission_name)``. So, once
:func:`.siblings.merge_siblings` has folded the container's columns into the members'
table, :func:`refer_to_container` gives that table a column naming the container's kind
(or keeps one it has: ``commission``, ``commission_name``), declared as a foreign key to a
table of that kind (the draft's own, else a new one keyed by the kind's name), and requires
it. A reference a chunk says has ended ("left the commission in 2005") is then emptied like
any other (:mod:`.ended`).

The kind is read from the container's name as the question writes it: the word before "of"
("League of Merounddian Cities": league), else the last word ("Drournlia Markets
Commission": commission). A one-word name says no kind, and is left as it is.
"""

from __future__ import annotations

from quaderno.methods.docsage.draft import (MAX_COLUMNS, MAX_TABLES, DraftColumn,
                                            DraftForeignKey, DraftTable, SchemaDraft, slug)
from quaderno.methods.docsage.rekey import plural, singular

_MAX_REFERENCES, _MAX_REQUIRED = 4, 12   # the draft's caps (draft.py)


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


def _kind_table(draft: SchemaDraft, kind: str,
                members: DraftTable) -> tuple[DraftTable, str] | None:
    """The draft's table of ``kind`` and the column it is keyed by, when it has one."""
    for t in draft.tables:
        if t is members or slug(t.name) not in (kind, plural(kind)):
            continue
        if len(t.primary_key) == 1:
            return t, t.primary_key[0]
        named = [c.name for c in t.columns if _names_kind(c.name, kind) or slug(c.name) == "name"]
        return (t, named[0]) if named else None
    return None


def refer_to_container(draft: SchemaDraft, members: DraftTable, member_kind: str,
                       written: str, merged: set[str]) -> str:
    """``members`` (the table the container was merged into) given a reference naming the
    container's kind, in place; ``written``: the container's name as the question writes
    it, ``merged``: the slugs of the columns the merge added (one may give way at the
    column cap). A note of what was done, or "" when nothing was."""
    kind = container_kind(written)
    if not kind or kind == singular(slug(member_kind or "")):
        return ""
    column = next((c for c in members.columns if _names_kind(c.name, kind)), None)
    if column is None:
        if len(members.columns) >= MAX_COLUMNS:
            added = [c for c in members.columns if slug(c.name) in merged]
            if not added:
                return ""
            members.columns.remove(added[-1])
        column = DraftColumn(name=f"{kind}_name", description=(
            f"the {kind} this {member_kind or 'entity'} is part of or listed in, as the text "
            f"names it (such as {written!r}); empty when the text names none"))
        members.columns.append(column)
    target = _kind_table(draft, kind, members)
    made = ""
    if target is None and len(draft.tables) < MAX_TABLES:
        table = DraftTable(name=plural(kind), description=f"each {kind}, by its name",
                           columns=[DraftColumn(name=f"{kind}_name",
                                                description=f"the {kind}'s name")],
                           primary_key=[f"{kind}_name"])
        draft.tables.append(table)
        target, made = (table, f"{kind}_name"), f", a new table {table.name!r}"
    if target is not None and len(members.foreign_keys) < _MAX_REFERENCES and not any(
            slug(fk.column) == slug(column.name) for fk in members.foreign_keys):
        members.foreign_keys.append(DraftForeignKey(
            column=column.name, references_table=target[0].name,
            references_column=target[1]))
    attribute = f"{members.name}.{column.name}"
    if attribute not in draft.required_attributes and \
            len(draft.required_attributes) < _MAX_REQUIRED:
        draft.required_attributes.append(attribute)
    return (f"{written!r} is a {kind} the question filters {members.name!r} by: "
            f"{members.name}.{column.name} names it"
            + (f", a reference to {target[0].name}.{target[1]}" if target else "") + made)


__all__ = ["container_kind", "refer_to_container"]
