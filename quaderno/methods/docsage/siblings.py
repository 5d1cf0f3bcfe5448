"""Tables named after one entity each, made one table of their kind (a draft repair).

Asked for the average number of offices of the energy companies of the Drournlia Markets
Commission, the 1.5B measuring model drew one table per company it saw in the sample
(``GrounlenkreEnergy``, ``GouqinEnergy``, ...), each with the same columns
(``company_name, sector, country, employees, revenue, chief_executive``). Extraction then
split the companies over those tables, and the SQL read the few rows one of them held. Such
tables are *siblings*: they share at least :data:`MIN_SHARED` columns that are neither an id,
a bare ``name`` or ``title``, nor named after the table itself, making up at least
:data:`SHARE` of the smaller one's and more than the columns they do not share; a group of
siblings is one where every two are.

:func:`merge_siblings` merges the siblings named after an *instance* into one table, in the
draft the model wrote, before it becomes a :class:`~quaderno.methods.docsage.schema.Schema`.
An instance's name is a proper name the sample documents write (:func:`proper_names`:
capitalized, with a word the texts never write in lower case, so "Players" opening a
sentence is not one). A sibling named after something the question names while it asks about
the kind ("the companies in the Drournlia Markets Commission": ``DrournliaMarketsCommission``)
is a container: the table of its members, which the question filters by. The instances merge:

* into the sibling named after the entity their shared name column names (``companies`` or
  ``energy_companies``, for ``company_name``) when there is one;
* else, when a container's name says a kind of its own ("Drournlia Markets Commission"), into
  a table named after their entity, the widest of them giving its columns and key;
* else into the one container the question names (the commission's table of companies);
* else into a table named after their entity, as above;
* else into the first of them the question's requirements name (else the first drawn).

A container whose name says its kind, beside the table of its members' kind (drawn so, a
table named ``members`` when none is named after the kind, or made by the merge), is merged
into it too, and that table gains a reference naming the container
(``companies.commission_name`` to ``commissions``: :mod:`.containers`), when the
question writes it as what the members are in, of, belong to or are regulated by ("the
companies in the Commission", "the Commission's companies"), no other sibling's name ends
in its kind and no other container qualifies. Other containers are never merged away. A
``members`` table keyed by an id of the kind, with no column naming its rows, is keyed by
their name (``laureate_name`` for ``laureate_id``: :func:`_name_members`).

The merge itself (what the merged table gains and loses, and how what named a merged
table follows it) is :func:`.merge_tables.merge_tables`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from quaderno.methods.docsage.containers import (container_kind, reference_column,
                                                 refer_to_container)
from quaderno.methods.docsage.draft import (MAX_COLUMNS, DraftColumn, DraftTable, SchemaDraft,
                                            rename_table, slug)
from quaderno.methods.docsage.merge_tables import bare_name, merge_tables, without
from quaderno.methods.docsage.normalize import NAME_JOINERS, NAME_PARTICLES, name_run
from quaderno.methods.docsage.rekey import (entity_of_key, id_named, is_name_column,
                                            name_columns, name_to_add, plural,
                                            rekey_by_added, singular)

MIN_SHARED = 3   # columns two tables must share to be siblings
SHARE = 0.75     # and the share of the smaller table's columns they make up
_MAX_WORDS = 6   # longest proper name looked for
_CAP = r"[A-Z][\w'’-]*"
# capitalized words, and the small words inside a name ("University of Gryrn")
_PROPER = re.compile(name_run(_CAP, NAME_JOINERS | NAME_PARTICLES | {"on"}))
_POSSESSIVE = re.compile(r"['’]s?$")
_LOWER = re.compile(r"(?<![\w'’-])[a-z][\w'’-]*")
_WORD = re.compile(r"[A-Za-z]+")
# the first half of a name column that names no kind of entity (full_name, job_title)
_NOT_KINDS = frozenset("first last full given family middle maiden nick sur user display "
                       "short long legal official common brand trade job file host domain "
                       "screen code pen stage birth".split())


def proper_names(texts: Iterable[str]) -> set[str]:
    """Every run of capitalized words in ``texts`` (and each shorter run inside it) with a
    word the texts never write in lower case, as a slug without separators: "The Drournlia
    Markets Commission" gives ``drournliamarketscommission``, ``drournlia``,
    ``thedrournlia`` and the rest, but not ``the`` or ``commission`` where the texts write
    "the commission" (or "the commissions"); a possessive's ``'s`` is not part of the name."""
    texts = list(texts)
    common = {singular(w.casefold()) for t in texts for w in _LOWER.findall(t)}
    out: set[str] = set()
    for text in texts:
        for m in _PROPER.finditer(text):
            words = [_POSSESSIVE.sub("", w) for w in m.group(0).split()]
            for i in range(len(words)):
                for j in range(i + 1, min(len(words), i + _MAX_WORDS) + 1):
                    if any(singular(w.casefold()) not in common for w in words[i:j]):
                        out.add(bare_name(" ".join(words[i:j])))
    return out


def _own(table: DraftTable) -> set[str]:
    """The columns that say what a table holds: not its ids, not its name."""
    named = name_columns(slug(table.name))
    return {s for c in table.columns if not id_named(s := slug(c.name), table.name)
            and s not in named}


def siblings(a: DraftTable, b: DraftTable) -> bool:
    """Whether ``a`` and ``b`` hold the same kind of entity (:data:`MIN_SHARED`,
    :data:`SHARE`, and more columns shared than not)."""
    own_a, own_b = _own(a), _own(b)
    shared = len(own_a & own_b)
    return shared >= MIN_SHARED and shared >= SHARE * min(len(own_a), len(own_b)) \
        and shared > len(own_a | own_b) - shared


def _groups(tables: list[DraftTable]) -> list[list[DraftTable]]:
    """Groups of tables every two of which are siblings, in draft order (a table joins the
    first group it fits); singletons left out."""
    groups: list[list[DraftTable]] = []
    for t in tables:
        home = next((g for g in groups if all(siblings(t, o) for o in g)), None)
        if home is None:
            groups.append([t])
        else:
            home.append(t)
    return [g for g in groups if len(g) > 1]


def _kinds(group: list[DraftTable], words: set[str],
           suffixes: tuple[str, ...] = ("name", "title")) -> set[str]:
    """The entities a name column every table of ``group`` has names (``company`` for
    ``company_name`` or ``companyname``; with ``suffixes=("id",)``, ``laureate_id``), words
    of the texts (``words``), none a table's own; none when a table has a bare ``name`` or
    ``title`` (then ``director_name`` names another entity)."""
    columns = [{slug(c.name) for c in t.columns} for t in group]
    if any(c & {"name", "title"} for c in columns):
        return set()
    own = {bare_name(t.name) for t in group}
    kinds = {c[:-len(w)].rstrip("_") for c in set.intersection(*columns)
             for w in suffixes if c.endswith(w) and len(c) > len(w)}
    return {k for k in kinds if k.isalpha() and k not in _NOT_KINDS and bare_name(k) not in own
            and {k, plural(k), singular(k)} & words}


# a table named for members alone, beside a container with the same columns, is the
# table of the members' kind (Set1's ``members(laureate_name, ...)`` beside
# ``stedrurial_medal(laureate_name, ...)``)
_MEMBER_TABLES = frozenset({"members", "member"})


def _kind(group: list[DraftTable], names: set[str], words: set[str]) -> str:
    """The one entity the siblings are of (:func:`_kinds`): read from all of them, else from
    those named after instances (a table of the kind may call its name ``name``); of several,
    the one a sibling's table is named after; "" when none is."""
    named = [t for t in group if bare_name(t.name) in names]
    # name columns first; an id every sibling shares when none names it (Set1's
    # ``laureate_id`` in ``Stedrurial_Medal`` and ``Members``, before ASK keys them by name)
    for suffixes in (("name", "title"), ("id",)):
        for tables in (group, named):
            if len(tables) < 2:
                continue
            kinds = _kinds(tables, words, suffixes)
            if len(kinds) > 1:
                kinds = {k for k in kinds if any(_is_kind(t, k, names) for t in group)}
            if len(kinds) == 1:
                return kinds.pop()
    return ""


def _name_members(draft: SchemaDraft, members: DraftTable, kind: str) -> list[str]:
    """A table named for members alone (:data:`_MEMBER_TABLES`), keyed by an id of their
    ``kind`` and with no column naming them, keyed by their name instead (a note; none when
    it is not so). Set1's ``Members(laureate_id, home_institution, ...)``: no document
    numbers the laureates, so with the id its only key the measuring model wrote each
    laureate's name into ``home_institution`` (members-no-clear-set1, ecdbd62) or left it
    out, and no row said whose grant it held. Members are named: the ``laureate_name`` the
    re-key adds is read from each chunk like any value (:func:`.rekey.rekey_by_added`,
    the repair ASK makes after a trial extraction shows the id unstated)."""
    key = members.primary_key
    if slug(members.name) not in _MEMBER_TABLES or len(key) != 1 \
            or not id_named(key[0], members.name) or entity_of_key(members.name, key[0]) != kind:
        return []
    references = {slug(f.column) for f in members.foreign_keys}
    if any(is_name_column(c.name) or slug(c.name) in name_columns(plural(kind))
           for c in members.columns if slug(c.name) not in references):
        return []           # a column names them already (``full_name``, ``winner_name``)
    if any(o is not members and (slug(key[0]) in {slug(c.name) for c in o.columns}
                                 or any(slug(f.references_table) == slug(members.name)
                                        for f in o.foreign_keys))
           for o in draft.tables):
        return []           # another table joins it by the id: ASK re-keys both together
    old, name = key[0], name_to_add(members.name, key[0])
    if rekey_by_added(draft.tables, members, name, draft.constraints,
                      draft.required_attributes,
                      description=f"the name of the {kind}, as the documents write it"):
        return []
    return [f"table {members.name!r} keyed by {name} instead of {old}: its rows are "
            f"{plural(kind)}, whom the documents name"]


def _is_kind(table: DraftTable, kind: str, names: set[str]) -> bool:
    """``table`` is named after ``kind``: ``companies``, ``company``, ``energy_companies``;
    not ``Olav Church``, a proper name (``names``) ending in the kind."""
    own, kind = slug(table.name), slug(kind)
    if own in (kind, plural(kind)) or singular(own) == singular(kind):
        return True
    last = own.split("_")[-1]
    return last in (kind, plural(kind)) and bare_name(table.name) not in names


def merge_siblings(draft: SchemaDraft, question: str,
                   texts: Iterable[str]) -> tuple[SchemaDraft, list[str]]:
    """``draft`` with each group of sibling tables named after instances (proper names in
    ``texts``, the documents the model read) merged into one table, as the module doc says
    (a container the ``question`` names becomes a reference of the table of its members'
    kind when its name says a kind; else it stays, and takes them when there is no table
    of their kind), and a note per merge."""
    draft = draft.model_copy(deep=True)
    texts = [question, *texts]
    names = proper_names(texts)
    asked = proper_names([question]) & names
    words = {w.casefold() for t in texts for w in _WORD.findall(t)}
    notes: list[str] = []
    asked_words = {w.casefold() for w in _WORD.findall(question)}
    for group in _groups(draft.tables):
        kind = _kind(group, names, words)
        # the table of the kind: named after it, else a table named for members alone
        kinds = [t for t in group if kind and _is_kind(t, kind, names)] or \
            [t for t in group if kind and slug(t.name) in _MEMBER_TABLES]
        rest = without(group, kinds)
        # a table the question names holds its members when the question asks about the
        # kind ("the companies in the Commission"); else it is one of them ("the revenue of
        # Gouqin Energy")
        of_kind = not kind or bool({kind, plural(kind)} & asked_words)
        containers = [t for t in rest if bare_name(t.name) in asked and of_kind]
        referable = _referable(containers, group, kind, question)
        if kinds:   # beside the members' table a container is a reference (containers.py)
            referred = _refer(draft, kinds[0], referable, kind, question)
            notes += referred.values()
            rest = without(rest, [t for t in containers if t.name in referred])
            containers = without(containers, [t for t in containers if t.name in referred])
            notes += _name_members(draft, kinds[0], kind)
        instances = [t for t in without(rest, containers) if bare_name(t.name) in names]
        # without a table of the kind, the instances make one, named after it, when a
        # container can then refer to it; else the one container the question names holds
        # them
        taken = {slug(t.name) for t in without(draft.tables, instances)}
        refer = not kinds and bool(kind) and bool(instances) and bool(referable) and \
            not {slug(plural(kind)), slug(singular(kind))} & taken
        home = kinds[:1] or (containers if len(containers) == 1 and not refer else [])
        if not instances or (len(instances) + len(home) < 2 and not refer):
            continue
        before = [t.name for t in [*home, *instances]]
        into, gone = _target(draft, instances, home, kind)
        cut = merge_tables(draft, into, gone, before)
        if len(before) > 1:
            notes.append(f"tables {', '.join(repr(n) for n in before if n != into.name)} "
                         f"merged into {into.name!r}: the same columns, each table named "
                         "after one entity"
                         + (f" (columns past the cap of {MAX_COLUMNS} left out: "
                            f"{', '.join(cut)})" if cut else ""))
        else:
            notes.append(f"table {before[0]!r} renamed {into.name!r}: it is named after one "
                         f"{kind}, and the question asks about the {plural(kind)}")
        if refer:
            notes += _refer(draft, into, referable, kind, question, before).values()
    return draft, notes


# "to", "with", "by" say membership only after a verb of it ("compete with" does not)
_JOINED = (r"(?:belong(?:s|ing)?|affiliated|registered|regulated|supervised|"
           r"listed|admitted|accredited)\s+(?:to|with|by)")


def _referable(containers: list[DraftTable], group: list[DraftTable], kind: str,
               question: str) -> list[DraftTable]:
    """The container the members' table can refer to, when there is one: the question
    writes it as what the members are in or of ("in the Drournlia Markets Commission", "the
    Commission's companies"), its name says a kind of its own
    (:func:`.containers.container_kind`), no other sibling's name ends in that kind (Gouqin
    Energy beside Grounlenkre Energy is one of them), and no other container is referable
    (two named in one question are compared, not filtered by); every copy of it when the
    model drew it twice."""
    out = []
    for t in containers:
        written = _written(question, bare_name(t.name))
        ref = container_kind(written)
        if ref in ("", singular(slug(kind or ""))) or not re.search(
                rf"(?i:\b(?:in|of|within|from|under|at|on|across|inside|among|{_JOINED})"
                rf"\s+(?:the\s+)?){re.escape(written)}\b|{re.escape(written)}['’]s?\s",
                question):
            continue
        # (a copy of the container, drawn twice, is the container)
        if any(singular(slug(o.name).split("_")[-1]) == ref or bare_name(o.name).endswith(ref)
               for o in group if bare_name(o.name) != bare_name(t.name)):
            continue
        out.append(t)
    return out if len({bare_name(t.name) for t in out}) == 1 else []


def _written(question: str, bare: str) -> str:
    """The proper name of ``question`` whose bare slug is ``bare``, as the question writes
    it ("Drournlia Markets Commission"); "" when none is."""
    for m in _PROPER.finditer(question):
        words = [_POSSESSIVE.sub("", w) for w in m.group(0).split()]
        for i in range(len(words)):
            for j in range(len(words), i, -1):
                if bare_name(" ".join(words[i:j])) == bare:
                    return " ".join(words[i:j])
    return ""


def _refer(draft: SchemaDraft, members: DraftTable, containers: list[DraftTable], kind: str,
           question: str, merged: Iterable[str] = ()) -> dict[str, str]:
    """Each container whose name says its kind merged into ``members``, which gains a
    reference naming it (:func:`.containers.refer_to_container`): container name -> note.
    ``merged``: the tables merged into ``members`` before (columns named after them are
    not taken from the container either)."""
    notes = {}
    for t in containers:
        written = _written(question, bare_name(t.name))
        column = reference_column(draft, members, container_kind(written))
        have = {slug(c.name) for c in members.columns}
        if column is None or (slug(column) not in have and len(have) >= MAX_COLUMNS):
            continue
        if slug(column) not in have:   # placed first: the merge's cap never leaves it out
            members.columns.append(DraftColumn(name=column))
        cut = merge_tables(draft, members, [t], [members.name, t.name, *merged])
        how = refer_to_container(draft, members, kind, written, column)
        notes[t.name] = (f"table {t.name!r} merged into {members.name!r}: the same columns; "
                         + how + (f" (columns past the cap of {MAX_COLUMNS} left out: "
                                  f"{', '.join(cut)})" if cut else ""))
    return notes


def _target(draft: SchemaDraft, instances: list[DraftTable], home: list[DraftTable],
            kind: str) -> tuple[DraftTable, list[DraftTable]]:
    """The table the ``instances`` merge into, and the tables merged away."""
    if home:
        return home[0], instances
    taken = {slug(t.name) for t in without(draft.tables, instances)}
    base = max(instances, key=lambda t: len(t.columns))  # first of the widest
    if kind and slug(plural(kind)) not in taken and slug(singular(kind)) not in taken:
        old = base.name
        base.name = plural(kind)
        rename_table(draft, old, base.name)
        return base, without(instances, [base])
    asked = {slug(n) for n in [*draft.entity_types, *draft.join_path,
                               *(a.partition(".")[0] for a in draft.required_attributes)]}
    first = next((t for t in instances if slug(t.name) in asked), instances[0])
    return first, without(instances, [first])


__all__ = ["merge_siblings", "siblings", "proper_names", "MIN_SHARED", "SHARE"]
