"""Tables named after one entity each, made one table of their kind (a draft repair).

Asked for the average number of offices of the energy companies of the Drournlia Markets
Commission, the 1.5B measuring model drew one table per company it saw in the sample
(``DrournliaMarketsCommission``, ``GrounlenkreEnergy``, ``GouqinEnergy``, ...), each with
the same columns (``company_name, sector, country, employees, revenue, chief_executive``).
Extraction then split the companies over those tables, and the SQL read the few rows one of
them held. Such tables are *siblings*: they share at least :data:`MIN_SHARED` columns that
are neither an id nor named after the table itself, making up at least :data:`SHARE` of the
smaller one's.

:func:`merge_siblings` merges the siblings whose name is a proper name the question or the
sample documents write ("Grounlenkre Energy" → ``grounlenkreenergy``) into one table of
their kind, in the draft the model wrote, before it becomes a
:class:`~quaderno.methods.docsage.schema.Schema`:

* into the sibling named after the entity their shared name column names (``companies``,
  for ``company_name``) when there is one;
* else into a table so named, the sibling with most columns giving its columns and key;
* else into the first of them the question's requirements name (else the first drawn).

The merged table gains the other siblings' columns it lacks (never their ids or columns named
after them), up to the draft's column cap. Foreign keys, constraints, required attributes,
entity types and the join path that named a merged sibling name the merged table. Siblings
with ordinary names (``players`` and ``coaches`` with the same columns) are different kinds
and are left apart, and so is a sibling whose name the texts do not write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from quaderno.methods.docsage.draft import (MAX_COLUMNS, DraftForeignKey, DraftTable,
                                            SchemaDraft, slug)
from quaderno.methods.docsage.rekey import id_named, name_columns, plural, singular, stems

MIN_SHARED = 3   # columns two tables must share to be siblings
SHARE = 0.75     # and the share of the smaller table's columns they make up
_MAX_WORDS = 6   # longest proper name looked for
_PROPER = re.compile(r"[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*)*")


def proper_names(texts: Iterable[str]) -> set[str]:
    """Every run of capitalized words in ``texts`` (and each shorter run inside it), as a
    slug without separators: "The Drournlia Markets Commission" gives
    ``drournliamarketscommission``, ``drournlia``, ``thedrournlia`` and the rest."""
    out: set[str] = set()
    for text in texts:
        for m in _PROPER.finditer(text):
            words = m.group(0).split()
            for i in range(len(words)):
                for j in range(i + 1, min(len(words), i + _MAX_WORDS) + 1):
                    out.add(_bare(" ".join(words[i:j])))
    return out


def _bare(name: str) -> str:
    return slug(name).replace("_", "")


def _own(table: DraftTable) -> set[str]:
    """The columns that say what a table holds: not its ids, not those named after it."""
    named = name_columns(slug(table.name)) - {"name", "title"}
    return {s for c in table.columns if not id_named(s := slug(c.name), table.name)
            and s not in named}


def siblings(a: DraftTable, b: DraftTable) -> bool:
    """Whether ``a`` and ``b`` hold the same kind of entity (:data:`MIN_SHARED`,
    :data:`SHARE`)."""
    own_a, own_b = _own(a), _own(b)
    shared = len(own_a & own_b)
    return shared >= MIN_SHARED and shared >= SHARE * min(len(own_a), len(own_b))


def _groups(tables: list[DraftTable]) -> list[list[DraftTable]]:
    """Tables in groups of siblings (transitively), in draft order; singletons left out."""
    parent = list(range(len(tables)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i
    for i, a in enumerate(tables):
        for j in range(i + 1, len(tables)):
            if siblings(a, tables[j]):
                parent[root(j)] = root(i)
    groups: dict[int, list[DraftTable]] = {}
    for i, t in enumerate(tables):
        groups.setdefault(root(i), []).append(t)
    return [g for g in groups.values() if len(g) > 1]


def _kind(group: list[DraftTable]) -> str:
    """The entity a name column every sibling has names (``company`` for ``company_name``
    or ``companyname``), not one sibling's own; "" when there is none or several."""
    shared = set.intersection(*({slug(c.name) for c in t.columns} for t in group))
    own = {_bare(t.name) for t in group}
    kinds = {c[:-len(w)].rstrip("_") for c in shared for w in ("name", "title")
             if c.endswith(w) and len(c) > len(w)}
    kinds = {k for k in kinds if k and _bare(k) not in own}
    return kinds.pop() if len(kinds) == 1 else ""


def merge_siblings(draft: SchemaDraft, texts: Iterable[str]) -> tuple[SchemaDraft, list[str]]:
    """``draft`` with each group of sibling tables named after instances (proper names in
    ``texts``: the question and the sample documents) merged into one table, and a note per
    merge."""
    draft = draft.model_copy(deep=True)
    names = proper_names(texts)
    notes: list[str] = []
    for group in _groups(draft.tables):
        instances = [t for t in group if _bare(t.name) in names]
        kind = _kind(group)
        kinds = [t for t in group if kind and t not in instances
                 and singular(slug(t.name)) == singular(slug(kind))]
        if len(instances) + min(len(kinds), 1) < 2:
            continue
        names_before = [t.name for t in [*kinds[:1], *instances]]
        into, gone = _target(draft, instances, kinds[:1], kind)
        _merge(draft, into, gone, names_before)
        notes.append(f"tables {', '.join(repr(t.name) for t in gone)} merged into "
                     f"{into.name!r}: the same columns, each table named after one entity")
    return draft, notes


def _target(draft: SchemaDraft, instances: list[DraftTable], kinds: list[DraftTable],
            kind: str) -> tuple[DraftTable, list[DraftTable]]:
    """The table the ``instances`` merge into, and the tables merged away."""
    if kinds:
        return kinds[0], instances
    taken = {slug(t.name) for t in draft.tables if t not in instances}
    base = max(instances, key=lambda t: len(t.columns))  # first of the widest
    if kind and slug(plural(kind)) not in taken and slug(singular(kind)) not in taken:
        old = base.name
        base.name = plural(kind)
        _rename(draft, old, base.name)
        return base, [t for t in instances if t is not base]
    asked = {slug(n) for n in [*draft.entity_types, *draft.join_path,
                               *(a.partition(".")[0] for a in draft.required_attributes)]}
    first = next((t for t in instances if slug(t.name) in asked), instances[0])
    return first, [t for t in instances if t is not first]


def _rename(draft: SchemaDraft, old: str, new: str) -> None:
    """Every mention of table ``old`` names ``new``."""
    def swap(name: str) -> str:
        return new if slug(name) == slug(old) else name
    for t in draft.tables:
        for fk in t.foreign_keys:
            fk.references_table = swap(fk.references_table)
    for c in draft.constraints:
        c.table = swap(c.table)
    draft.required_attributes = [f"{swap(t)}.{c}" if sep else a
                                 for a in draft.required_attributes
                                 for t, sep, c in [a.partition(".")]]
    draft.entity_types = list(dict.fromkeys(swap(e) for e in draft.entity_types))
    draft.join_path = list(dict.fromkeys(swap(t) for t in draft.join_path))


def _about(column: str, table: str) -> bool:
    """``column`` is ``table``'s own id or named after it (``id``, ``grounlenkreenergy_id``,
    ``gouqinenergyname``); a bare ``name`` or ``title`` is not."""
    return slug(column) == "id" or slug(column) in {
        f"{s}{sep}{w}" for s in stems(table) for sep in ("", "_") for w in ("id", "name",
                                                                             "title")}


def _merge(draft: SchemaDraft, into: DraftTable, gone: list[DraftTable],
           merged: list[str]) -> None:
    """``gone`` merged into ``into``; ``merged``: the names all of them had before."""
    # the columns named after a table of the group name nothing once it is one table
    keys = {slug(k) for k in into.primary_key}
    drop = {slug(c.name) for c in into.columns if slug(c.name) not in keys | {"id"}
            and any(_about(c.name, name) for name in merged if slug(name) != slug(into.name))}
    into.columns = [c for c in into.columns if slug(c.name) not in drop]
    into.foreign_keys = [fk for fk in into.foreign_keys if slug(fk.column) not in drop]
    have = {slug(c.name) for c in into.columns}
    for t in gone:
        for c in t.columns:
            s = slug(c.name)
            if s in have or s in drop or len(into.columns) >= MAX_COLUMNS \
                    or any(_about(s, name) for name in [*merged, into.name]):
                continue
            into.columns.append(c)
            have.add(s)
        into.foreign_keys += [fk for fk in t.foreign_keys if slug(fk.column) in have]
    draft.tables = [t for t in draft.tables if t not in gone]
    for t in gone:
        _rename(draft, t.name, into.name)
    for t in draft.tables:  # one reference once; none from a column to itself
        seen: set[tuple[str, str, str]] = set()
        kept: list[DraftForeignKey] = []
        for fk in t.foreign_keys:
            key = (slug(fk.column), slug(fk.references_table), slug(fk.references_column))
            if key in seen or (t is into and key[1] == slug(into.name) and key[0] == key[2]):
                continue
            seen.add(key)
            kept.append(fk)
        t.foreign_keys = kept[:4]
    seen_c: set[tuple[str, str, tuple[str, ...]]] = set()
    constraints = []
    for c in draft.constraints:
        key = (c.kind, slug(c.table), tuple(slug(x) for x in c.columns))
        if key not in seen_c:
            seen_c.add(key)
            constraints.append(c)
    draft.constraints = constraints
    draft.required_attributes = list(dict.fromkeys(draft.required_attributes))


__all__ = ["merge_siblings", "siblings", "proper_names", "MIN_SHARED", "SHARE"]
