"""An invented key: a primary key no chunk states, which cannot align rows (spec §2, step 2).

The measuring model keys tables by a surrogate ``companyid`` it numbers 1, 2, ...; no
document says it, so two chunks' rows of one company never meet, and a table referring to
it joins by numbers the model made up. :func:`invented_keys` finds such a key on the trial
rows, by code, and gives the alignment-conflict signal a fix: key the table by a column the
chunks do state (or by the entity's name, added). :mod:`.detect` gathers it with the other
signals; its helpers :func:`id_key`, :func:`is_reference`, :func:`named_key` and
:func:`holders` serve :func:`.detect.empty_tables` and :func:`.detect.detect_all` too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.normalize import is_null
from quaderno.methods.docsage.patch import SchemaPatch
from quaderno.methods.docsage.rekey import (entity_of_key, id_column, id_named, id_part,
                                            is_name_column, mislabeled_names, name_columns,
                                            name_to_add, named_after, stems)
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.signals import Signal
from quaderno.methods.docsage.spans import mentions
from quaderno.methods.docsage.unstated import was_unstated


def _unstated(rows: Sequence[Row], table: Table, column: str, texts: Mapping[str, str],
              emptied: bool = False) -> tuple[list[Row], list[Row]]:
    """(the rows with a value of ``column`` and their chunk's text, those of them whose
    chunk does not state it). With ``emptied``, a value the read emptied as unstated
    (:mod:`.unstated`) counts as one not stated, and its row among both: the model wrote
    it."""
    col = table.column(column)
    gone = [r for r in rows if emptied and is_null(r.values.get(column))
            and was_unstated(r, column) and r.provenance.chunk_id in texts]
    seen = [r for r in rows
            if not is_null(r.values.get(column)) and r.provenance.chunk_id in texts]
    return seen + gone, [r for r in seen if not mentions(texts[r.provenance.chunk_id],
                                                         r.values[column], col.type)] + gone


def is_reference(schema: Schema, table: Table, column: str) -> bool:
    """True when ``table.column`` holds another table's key: a declared foreign key, or a
    column named after that key (``company_id``)."""
    if any(column in fk.cols for fk in table.foreign_keys):
        return True
    return any(o is not table and (key := id_key(o)) is not None
               and named_after(column, o.name, key) for o in schema.tables)


def id_key(table: Table) -> str | None:
    """The column ``table``'s rows are aligned and joined by, when it is one: its primary
    key, or without one its id column (:func:`.rekey.id_column`)."""
    if table.primary_key:
        return table.primary_key[0] if len(table.primary_key) == 1 else None
    return id_column(table.name, table.column_names)


def holders(schema: Schema, table: Table, key: str) -> list[tuple[Table, str]]:
    """(table, column) for every column that holds ``table.key``: a declared foreign key to
    it, or a column of another table named after it (``companies.commissionid`` for
    ``commissions.commissionid``) and declared to refer to nothing else; the columns
    :func:`.rekey.rekey` moves with the key."""
    out = []
    for o in schema.tables:
        declared = {c for fk in o.foreign_keys if fk.ref_table == table.name
                    for c, r in zip(fk.cols, fk.ref_cols) if r == key}
        elsewhere = {c for fk in o.foreign_keys for c in fk.cols} - declared
        for c in o.columns:
            if o is table and c.name == key:
                continue
            if c.name in declared or (o is not table and c.name not in elsewhere
                                      and named_after(c.name, table.name, key)):
                out.append((o, c.name))
    return out


def _referenced(schema: Schema, table: Table, key: str) -> bool:
    """True when a column of some table holds ``table.key``."""
    return bool(holders(schema, table, key))


def _unique_per_chunk(rows: Sequence[Row], column: str | Sequence[str]) -> bool:
    """No chunk's trial rows repeat a value of ``column`` (or of the columns together: two
    rows of one chunk with the same value are two things the column cannot tell apart)."""
    columns = [column] if isinstance(column, str) else list(column)
    seen: set[tuple[str, ...]] = set()
    for r in rows:
        v = [r.values.get(c) for c in columns]
        if any(is_null(x) for x in v):
            continue
        k = (r.provenance.chunk_id, *(str(x).casefold() for x in v))
        if k in seen:
            return False
        seen.add(k)
    return True


def named_key(schema: Schema, table: Table, key: str) -> str | None:
    """The column a table with no trial rows is keyed by instead of its invented ``key``:
    one that says it is the entity's name (:func:`.rekey.name_columns`: ``name``,
    ``title``, ``commissionname``, ``department_title``, never ``department_head``), TEXT,
    single-valued or a name marked multi-valued (:func:`.rekey.mislabeled_names`), and no
    reference; None when the table has none."""
    names, mislabeled = name_columns(table.name), mislabeled_names(table.name)
    return next((c.name for c in table.columns
                 if c.type == "TEXT" and c.name != key and slug(c.name) in names
                 and (c.single_valued or slug(c.name) in mislabeled)
                 and not is_reference(schema, table, c.name)), None)


def _new_key(schema: Schema, table: Table, key: str, rows: Sequence[Row],
             texts: Mapping[str, str], share: float,
             rest: Sequence[str] = ()) -> list[str] | None:
    """What to key ``table`` by instead of its invented key: its name (a single-valued TEXT
    column called ``name`` or ``title`` or named after the entity, ``companyname``, or one of
    :func:`.rekey.mislabeled_names` a model marked multi-valued, that the
    chunks state in more than ``share`` of its rows; the most distinct values first); else,
    for a table nothing refers to, the column naming the entity its rows are about (a
    foreign key; a table linking several, ``league_city``, by all of them together, since one
    would keep a single city per league). Either must be unique within each chunk's rows. The
    key's columns, or None when there is none:
    another entity's name (``country_name`` of employees) would merge distinct rows. A table
    with no trial rows (judged by its references) has nothing to check a column against: it
    is keyed only by a column that says it is the name (``name``, ``title``,
    ``commissionname``, ``department_title``), never by ``department_head``. A table
    that names nothing at all (no name column, no reference: ``stedrurial_medal(laureate_id,
    year, nationality)``, the 1.5B model's Set1 draft) is keyed by the name of the entity
    its key numbers, a column the re-key adds (:func:`.rekey.name_to_add`,
    ``laureate_name``); each row's name is then read from its chunk like any value. ``rest``:
    the other columns of a key whose id part ``key`` is (``nationality`` of
    ``(laureate_id, nationality)``): they stay in the key, so the new column need only tell
    rows apart with them, and is never one of them."""
    own = stems(table.name)
    names, mislabeled = name_columns(table.name), mislabeled_names(table.name)
    # the rest of the key names the entity already (``(film_id, title)``): the id goes
    named_rest = [r for r in rest if slug(r) in names or slug(r) in mislabeled]
    if named_rest:
        return named_rest[:1]
    if not rows and (named := named_key(schema, table, key)) is not None:
        return [named]
    added = name_to_add(table.name, key)
    scored = []
    for i, c in enumerate(table.columns):
        # a name marked multi-valued is mislabeled (an entity has one): the re-key fixes it
        if c.type != "TEXT" or (not c.single_valued and c.name not in mislabeled) \
                or c.name == key or c.name in rest or is_reference(schema, table, c.name) \
                or not _unique_per_chunk(rows, [c.name, *rest]):
            continue
        if not rows or not (c.name in ("name", "title", "full_name", "fullname", added)
                            or any(c.name.startswith(s) for s in own)):
            continue
        seen, unstated = _unstated(rows, table, c.name, texts, emptied=True)
        n = len(seen)
        if n and n - len(unstated) > share * n:
            distinct = len({str(r.values.get(c.name)) for r in rows
                            if not is_null(r.values.get(c.name))})
            scored.append((-distinct, i, c.name))
    if scored:
        return [min(scored)[-1]]
    refs = [c.name for c in table.columns if c.name != key and c.name not in rest
            and c.single_valued and is_reference(schema, table, c.name)]
    if refs and not _referenced(schema, table, key):
        if len(refs) > 1:  # a table linking entities (league_city): keyed by its references
            return refs if _unique_per_chunk(rows, [*refs, *rest]) else None
        return refs[:1] if _unique_per_chunk(rows, [refs[0], *rest]) else None
    # an entity table that names nothing (``laureates(laureate_id, year, nationality)``: no
    # row says whose it is) gains the entity's name as its key; not a table with a name
    # column the checks above refused, nor one of facts about another entity: a reference,
    # or a name column whose trial values tell rows apart (``awards(award_id,
    # laureate_name)``; the Set1 draft's award_name, the same medal in every row, does not)
    if refs or added in table.column_names or any(
            c.name not in rest and (c.name in names or is_name_column(c.name) and (
                not rows or any(c.name.startswith(s) for s in own)
                or len({str(r.values[c.name]).casefold() for r in rows
                        if not is_null(r.values.get(c.name))}) > 1))
            for c in table.columns):
        return None
    return [added]


def _numbered(rows: Sequence[Row], column: str) -> bool:
    """Every value of ``column`` in ``rows`` is a whole number (1, "2"): what a model
    numbering rows writes, unlike a real code such as "E1042"."""
    values = [r.values.get(column) for r in rows if not is_null(r.values.get(column))]
    return bool(values) and all(
        (isinstance(v, int) and not isinstance(v, bool)) or
        (isinstance(v, str) and v.strip().isdigit()) or
        (isinstance(v, float) and v.is_integer()) for v in values)


def _evidence(schema: Schema, table: Table, key: str, rows: Sequence[Row],
              texts: Mapping[str, str], min_rows: int) -> list[tuple[Table, str, list[Row]]]:
    """Where the values of ``table.key`` are read: its own trial rows; when fewer than
    ``min_rows`` of them give a key and their chunk (a table the trial extracted little or
    nothing of: ``commissions``, named in every company's row by a made-up
    ``commissionid``), the rows of every column that holds it and holds whole numbers too.
    Own rows that state their key are never outvoted by references that do not. Empty when
    an own row's key is not a whole number (a key by name or code)."""
    mine = [r for r in rows if r.table == table.name]
    given = [r for r in mine if not is_null(r.values.get(key))]
    if given and not _numbered(given, key):
        return []
    found = [(table, key, mine)] if given else []
    if sum(r.provenance.chunk_id in texts for r in given) >= min_rows:
        return found
    for other, column in holders(schema, table, key):
        theirs = [r for r in rows if r.table == other.name]
        if _numbered(theirs, column):
            found.append((other, column, theirs))
    return found


def invented_keys(schema: Schema, rows: Sequence[Row], texts: Mapping[str, str], *,
                  min_rows: int = 2, share: float = 0.5) -> list[Signal]:
    """Tables keyed by an invented id: a single-column primary key named as an id (``id``,
    ``..._id``, ``companyid`` of ``companies``; without a primary key, the table's own id
    column, :func:`id_key`; or the one id part of a key of several,
    :func:`.rekey.id_part`, which the re-key replaces keeping the rest), holding whole
    numbers, that is no reference to another table, and whose values the row's chunk
    (``texts``: chunk id -> the text extraction was shown) does not state in more than
    ``share`` of at least ``min_rows`` trial rows; a table with fewer rows of its own is
    read in the columns that refer to it too, from at least ``min_rows`` chunks
    (:func:`_evidence`). Keys by name, code or date are never taken for invented ones. The
    signal's fix re-keys the table (:func:`_new_key`: by a column it has, or by its
    entity's name, added); a table with no column to key it by and none to add (a name
    column refused, a fact table's reference that cannot tell its rows apart) gets a
    signal without a fix, asked like any other."""
    signals: list[tuple[bool, Signal]] = []
    for t in schema.tables:
        # a key of several columns with one id part (``(laureate_id, nationality)``) keeps
        # its other parts when the id goes
        key = id_key(t) or id_part(t.name, t.primary_key)
        if key is None or not id_named(key, t.name):
            continue
        rest = [k for k in t.primary_key if k != key]
        # a key that refers to another table's is as invented as that one: re-keying the
        # other moves it
        if is_reference(schema, t, key):
            continue
        n, unstated, where, chunks = 0, [], [], set()
        for holder, column, held in _evidence(schema, t, key, rows, texts, min_rows):
            seen, missed = _unstated(held, holder, column, texts)
            n += len(seen)
            unstated += [(r, column) for r in missed]
            chunks |= {r.provenance.chunk_id for r in seen}
            if seen:
                where.append(f"{holder.name}.{column}")
        own = where == [f"{t.name}.{key}"]
        # one chunk's company row and its revenue row are one statement, not two
        if n < min_rows or len(unstated) <= share * n or (not own and len(chunks) < min_rows):
            continue
        # by their text: a model may give any JSON value, a list included
        values = list({str(r.values[c]): r.values[c] for r, c in unstated}.values())[:6]
        told = "" if own else f" (read in {', '.join(where)})"
        detail = (f"no chunk states the key {t.name}.{key} in {len(unstated)} of {n} trial "
                  f"rows{told}: the key is invented and cannot align rows")
        mine = [r for r in rows if r.table == t.name]
        cols = _new_key(schema, t, key, mine, texts, share, rest)
        # the new key: the columns found, then the rest of the old key
        kept = [*cols, *(r for r in rest if r not in cols)] if cols else []
        new_column = bool(cols) and cols[0] not in t.column_names
        described = ""
        if new_column:
            entity = entity_of_key(t.name, key)
            described = f"the name of the {entity} the row is about, as the documents write it"
            detail += f"; no column names the {entity}: key {t.name} by a new column " \
                      f"{cols[0]}, its name"
        elif cols:
            by = kept[0] if len(kept) == 1 else f"({', '.join(kept)})"
            detail += f"; key {t.name} by {by}, which the chunks state" if mine else \
                f"; key {t.name} by {by}"
        signal = Signal(kind="alignment_conflict", table=t.name, column=key, detail=detail,
                        values=values, fix=SchemaPatch(op="rekey", table=t.name, column=cols[0],
                                                       key_with=kept[1:], description=described)
                        if cols else None,
                        chunk_ids=sorted({r.provenance.chunk_id for r, _ in unstated})[:5])
        # a table of facts is re-keyed by its reference before that reference is renamed
        # after the entity's new key (revenue by companyid, then companies by companyname)
        first = bool(cols) and is_reference(schema, t, cols[0])
        signals.append((not first, signal))
    return [s for _, s in sorted(signals, key=lambda x: x[0])]
