"""Moving a table's key to a column the documents state (ASK's repair of an invented key).

A weak model keys its tables by ids no document gives (``companies.companyid``, numbered 1
for every chunk's company): rows cannot be aligned by them, and joins over them match
nothing. :func:`rekey` keys the table by another column instead (its name, or for a table of
facts about another entity, the column naming that entity) and drops the old key. Every
column that held the old key follows it:

* a declared foreign key keeps its role name (``host`` stays ``host``; ``manager_id``
  becomes ``manager_name``), takes the new key's type and points at it;
* a column named after the key (:func:`named_after`: ``company_id`` or ``companyid`` in
  another table, for ``companies.companyid``) is renamed after the new key, qualified by
  the entity (``companyname``; ``city_name`` for ``cities.name``), and becomes a foreign key
  to it;

in primary keys, constraints and required attributes too. A referring column whose new name
is taken by a column of the same type folds into it (``city_id`` beside ``city_name``); by one
of another type, it is left as it was (its foreign key cannot stand; the schema repair notes
it).
"""

from __future__ import annotations

import re

from quaderno.methods.docsage.draft import (DraftColumn, DraftConstraint, DraftForeignKey,
                                            DraftTable, slug)


# plurals in -ies of words in -ie, words in -s that are their own singular, and irregulars
_IE_PLURALS = frozenset("movies cookies zombies rookies calories goalies selfies brownies "
                        "genies hoodies".split())
_SAME_PLURAL = frozenset("series species news".split())
# words in -che, whose plural is not one in -ches of a word in -ch (matches, churches);
# a consonant before -aches is one too (caches, headaches; beaches and coaches are -ach)
_CHE_WORDS = frozenset("niche avalanche moustache mustache psyche cliche creche quiche "
                       "microfiche fiche tranche brioche pastiche apache porsche "
                       "synecdoche".split())
_IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman"}


def singular(name: str) -> str:
    """The last word of ``name`` (words end at ``_`` or a space) made singular: "cities" ->
    "city", "companies" -> "company", "leagues" -> "league", "movies" -> "movie", "series"
    -> "series", "addresses" -> "address", "matches" -> "match", "boxes" -> "box",
    "caches" -> "cache", "people" -> "person", "top_movies" -> "top_movie"."""
    cut = max(name.rfind("_"), name.rfind(" ")) + 1
    head, word = name[:cut], name[cut:]
    if word in _SAME_PLURAL:
        return name
    if word in _IRREGULAR:
        return head + _IRREGULAR[word]
    if word in _IE_PLURALS:
        return head + word[:-1]
    if word.endswith("ies") and len(word) > 4:
        return head + word[:-3] + "y"
    if word.endswith("aches") and (len(word) == 5 or word[-6] not in "aeiou"):
        return head + word[:-1]
    if word.endswith(("sses", "ches", "shes", "xes")) and len(word) > 4 \
            and word[:-1] not in _CHE_WORDS:
        return head + word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return head + word[:-1]
    return name


def plural(name: str) -> str:
    """The last word of ``name`` made plural, as :func:`singular` reads it back: "company"
    -> "companies", "city" -> "cities", "address" -> "addresses", "church" -> "churches",
    "campus" -> "campuses", "league" -> "leagues", "person" -> "people"; a word already
    plural stays."""
    cut = max(name.rfind("_"), name.rfind(" ")) + 1
    head, word = name[:cut], name[cut:]
    if word.endswith("us") and len(word) > 3:       # campus, status, bonus
        return head + word + "es"
    if singular(name) != name:
        return name
    back = {v: k for k, v in _IRREGULAR.items()}
    if word in back:
        return head + back[word]
    if word in _SAME_PLURAL or not word:
        return name
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return head + word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return head + word + "es"
    return head + word + "s"


def stems(table: str) -> set[str]:
    """The table's name and its singular (``companies``, ``company``): what a column named
    after the table's own entity starts with."""
    t = slug(table)
    return {t, singular(t)}


def id_named(column: str, table: str) -> bool:
    """A column named as a surrogate id of ``table``: ``id``, ``..._id``, or the table's
    name with ``id`` (``companyid`` of ``companies``)."""
    c = slug(column)
    return c == "id" or c.endswith("_id") or any(c == f"{s}id" for s in stems(table))


def name_columns(table: str) -> set[str]:
    """The names a column naming ``table``'s entity goes by: ``name``, ``title``,
    ``commissionname``, ``commission_title`` (for ``commissions``)."""
    return {"name", "title"} | {f"{s}{sep}{w}" for s in stems(table) for sep in ("", "_")
                                for w in ("name", "title")}


# things whose title is their name: a film's "title" names it, an employee's is a job
WORKS = frozenset("film movie book novel song album series show paper article episode "
                  "painting poem opera publication documentary videogame".split())
# words after the thing a table lists ("film_releases", "book_editions")
_OF_WORKS = frozenset("release edition list catalog catalogue record entry detail info"
                      .split())


def _of_works(table: str) -> bool:
    """``table`` lists works (:data:`WORKS`): its last word names them, or the word before
    a listing word (``film_releases``); ``film_crew`` and ``paper_authors`` list people."""
    words = [singular(w) for w in slug(table).split("_") if w]
    while len(words) > 1 and words[-1] in _OF_WORKS:
        words.pop()
    return bool(words) and words[-1] in WORKS


def mislabeled_names(table: str) -> set[str]:
    """The :func:`name_columns` that name the entity for certain, so that marked
    multi-valued they are mislabeled: all but a bare ``title`` (an employee's job title is
    rightly multi-valued), unless the table lists works (:func:`_of_works`: ``movies``,
    ``film_releases``), whose title is their name."""
    names = name_columns(table)
    return names if _of_works(table) else names - {"title"}


def entity_of_key(table: str, key: str) -> str:
    """The entity an id names: ``laureate`` for ``laureate_id`` or ``laureateid``; a bare
    ``id``, the table's own ``companyid``, a short form of its name's first word
    (``dept_id`` of ``departments``) or an id of one or two letters (``p_id``) names the
    table's entity, ``company``, ``department``; a whole word of the table's name is that
    word (``player_id`` of ``player_stats`` names a player)."""
    k, own = slug(key), singular(slug(table))
    if k == "id" or any(k in (f"{s}id", f"{s}_id") for s in stems(table)):
        return own
    k = (k[:-3] if k.endswith("_id") else k[:-2] if k.endswith("id") else k).strip("_")
    words = [w for w in slug(table).split("_") if w]
    if k in words or singular(k) in {singular(w) for w in words}:
        return singular(k)
    if len(k) < 3:
        return own
    first = singular(words[0]) if words else own
    rest = iter(first)  # a short form keeps the word's letters in order: dept, dep, co
    if len(k) < len(first) and k[:1] == first[:1] and all(ch in rest for ch in k):
        return own if len(words) == 1 else first
    return k


def name_to_add(table: str, key: str) -> str:
    """The column a table keyed by an invented ``key`` and naming nothing is keyed by
    instead: the name of the entity the key numbers (``laureate_name`` for ``laureate_id``,
    ``company_name`` for ``companies.id``)."""
    return f"{entity_of_key(table, key)}_name"


def is_name_column(column: str) -> bool:
    """A column named as some entity's name: ``name``, ``title``, ``full_name``,
    ``laureate_name``, ``companyname``."""
    c = slug(column)
    return c in ("name", "title", "fullname") or c.endswith(("_name", "_title")) or (
        c.endswith("name") and len(c) > 6)


def may_add_as_key(column: str, table: str, key: str | None) -> bool:
    """A column a ``rekey`` may add to ``table`` to be keyed by: the entity's own name
    (:func:`mislabeled_names`: ``name``, ``company_name``; ``title`` for works) or the name
    of the entity its current ``key`` numbers (:func:`name_to_add`); never another
    entity's (``department_name`` of employees)."""
    c = slug(column)
    return c in mislabeled_names(table) or (key is not None and c == name_to_add(table, key))


def id_column(table: str, columns: list[str]) -> str | None:
    """The one column of a table without a primary key that is named as its own id (``id``,
    ``commissionid`` or ``commission_id`` of ``commissions``; not ``dept_id`` of
    ``employees``, a reference): the key its rows are joined by, declared or not. None when
    there is none or several."""
    own = {"id"} | {f"{s}{sep}id" for s in stems(table) for sep in ("", "_")}
    ids = [c for c in columns if slug(c) in own]
    return ids[0] if len(ids) == 1 else None


def id_part(table: str, key: list[str] | tuple[str, ...]) -> str | None:
    """The one column of a key of several named as an id (:func:`id_named`:
    ``laureate_id`` of ``(laureate_id, nationality)``, the 1.5B model's Set1 nationality
    table): the part a re-key replaces. None for a key of one column, or with no id part
    or several."""
    ids = [k for k in key if id_named(k, table)] if len(key) > 1 else []
    return ids[0] if len(ids) == 1 else None


def named_after(column: str, table: str, key: str) -> bool:
    """True when ``column`` (of any table) is named as a reference to ``table``'s ``key``:
    ``company_id``, ``companyid``, ``companies_id`` for the key ``id`` or ``companyid`` of
    ``companies``. A key that does not name its table (``code``) is referred to only with
    the table's name in front (``country_code``), so another table's own ``code`` is not
    taken for a reference."""
    c, k, own = slug(column), slug(key), stems(table)
    names = {f"{s}{sep}{k}" for s in own for sep in ("_", "")}
    for s in own:
        if k.startswith(s) and len(k) > len(s):
            names |= {k, f"{s}_{k[len(s):].lstrip('_')}"}
    return c in names


def referrers(tables: list[DraftTable], table: DraftTable,
              key: str) -> list[tuple[DraftTable, DraftColumn, bool]]:
    """(table, column, declared) for every column that holds ``table``'s ``key``: a declared
    foreign key to it, or an undeclared column :func:`named_after` it; the key itself aside."""
    out = []
    for other in tables:
        declared = {slug(f.column) for f in other.foreign_keys
                    if slug(f.references_table) == slug(table.name)
                    and slug(f.references_column) == slug(key)}
        fk_cols = {slug(f.column) for f in other.foreign_keys}
        for c in other.columns:
            if other is table and slug(c.name) == slug(key):
                continue
            if slug(c.name) in declared:
                out.append((other, c, True))
            elif slug(c.name) not in fk_cols and named_after(c.name, table.name, key):
                out.append((other, c, False))
    return out


def rename_in(constraints: list[DraftConstraint], required: list[str], table: str, old: str,
              new: str) -> None:
    """``table.old`` is called ``new`` now in ``constraints`` and ``required`` (in place); a
    constraint left naming one column twice is dropped."""
    for c in list(constraints):
        if slug(c.table) == slug(table):
            c.columns = [new if slug(x) == slug(old) else x for x in c.columns]
            if len({slug(x) for x in c.columns}) < len(c.columns):
                constraints.remove(c)
    before, after = f"{slug(table)}.{slug(old)}", f"{slug(table)}.{slug(new)}"
    required[:] = list(dict.fromkeys(after if r == before else r for r in required))


def entity_reference(table: str, key: str) -> str:
    """The name of a column in another table that holds ``table``'s ``key``, qualified by
    the entity: ``companyname`` for ``companies.companyname`` (already qualified),
    ``city_name`` for ``cities.name``."""
    name, stem = slug(key), singular(slug(table))
    return key if name.startswith(stem) else f"{stem}_{name}"


def _new_name(ref: DraftColumn, table: DraftTable, key: str, col: DraftColumn) -> str:
    """A column named after the key is named after the new one, qualified by the entity
    (``companyname``, ``city_name``); another (a declared foreign key in a role) keeps its
    role (``host``; ``manager_id`` -> ``manager_name``)."""
    name, stem = slug(col.name), singular(slug(table.name))
    if named_after(ref.name, table.name, key):
        return entity_reference(table.name, col.name)
    own = slug(ref.name)
    bare = name[len(stem):].lstrip("_") if name.startswith(stem) and name != stem else name
    return f"{own[:-3]}_{bare}" if own.endswith("_id") and len(own) > 3 else ref.name


def _points_at(other: DraftTable, column: str, table: DraftTable, col: DraftColumn) -> bool:
    return any(slug(f.column) == slug(column) and slug(f.references_table) == slug(table.name)
               and slug(f.references_column) == slug(col.name) for f in other.foreign_keys)


def _follow(other: DraftTable, ref: DraftColumn, declared: bool, table: DraftTable, key: str,
            col: DraftColumn, constraints: list[DraftConstraint], required: list[str]) -> None:
    """Make ``other.ref`` hold ``table.col`` instead of the old key."""
    wanted = _new_name(ref, table, key, col)
    clash = next((c for c in other.columns if c is not ref and slug(c.name) == slug(wanted)),
                 None)
    if clash is not None:
        # a column of that name and type already holds the new key's values (``city_name``
        # beside ``city_id``): the old reference folds into it; one of another type is
        # something else, and the reference is left as it was
        if clash.type != col.type and not _points_at(other, clash.name, table, col):
            return
        other.columns.remove(ref)
        other.foreign_keys = [f for f in other.foreign_keys if slug(f.column) != slug(ref.name)]
        other.primary_key = list(dict.fromkeys(
            clash.name if slug(k) == slug(ref.name) else k for k in other.primary_key))
        rename_in(constraints, required, other.name, ref.name, clash.name)
        if not _points_at(other, clash.name, table, col):
            other.foreign_keys.append(DraftForeignKey(
                column=clash.name, references_table=table.name, references_column=col.name))
        return
    rename_in(constraints, required, other.name, ref.name, wanted)
    other.primary_key = [wanted if slug(k) == slug(ref.name) else k for k in other.primary_key]
    other.foreign_keys = [f for f in other.foreign_keys if slug(f.column) != slug(ref.name)]
    if re.search(r"\b(id|identifier)\b", ref.description, re.IGNORECASE) or not declared:
        ref.description = f"the {singular(slug(table.name))}'s {col.name} " \
                          f"({table.name}.{col.name})"
    ref.name, ref.type, ref.unit = wanted, col.type, col.unit
    other.foreign_keys.append(DraftForeignKey(column=wanted, references_table=table.name,
                                              references_column=col.name))


def rekey(tables: list[DraftTable], table: DraftTable, col: DraftColumn,
          constraints: list[DraftConstraint], required: list[str],
          key_with: list[str] | tuple[str, ...] = ()) -> str | None:
    """Key ``table`` by ``col`` in place (module docstring); a note when it cannot be done:
    ``col`` is multi-valued (unless it is the entity's name, :func:`mislabeled_names`: then the
    label was wrong, and it becomes single-valued) or already the key, the key has several
    columns (rekey moves a single-column key), or the key is a foreign key (the parent's
    re-key moves it). A table without a primary key is keyed by its :func:`id_column` all
    the same (its rows are joined by it): that column goes as a key would. ``key_with``: the
    new key's other columns, for a table linking entities (``league_city`` keyed by
    ``league_id`` and ``city_id``). A key of several columns is moved when ``col`` and
    ``key_with`` keep all of them but its one id part (:func:`id_part`), which goes:
    ``(laureate_id, nationality)`` becomes ``(laureate_name, nationality)``, and
    ``(film_id, title)`` keyed by ``title`` becomes ``(title)``."""
    others = [c for c in table.columns for k in key_with if slug(c.name) == slug(k)]
    if len(others) != len(key_with) or any(c is col for c in others):
        return f"rekey {table.name}.{col.name}: the key's other columns {list(key_with)} " \
               "are not all other columns of the table"
    # an entity has one name: a name column marked multi-valued is mislabeled (the 1.5B
    # model marked every column of its Set3 tables so), and becomes single-valued as the key
    relabel = not col.single_valued and slug(col.name) in mislabeled_names(table.name)
    if not col.single_valued and not relabel:
        return f"rekey {table.name}.{col.name}: a multi-valued column"
    kept = {slug(col.name), *(slug(c.name) for c in others)}
    gone = [k for k in table.primary_key if slug(k) not in kept]
    in_key = {slug(k) for k in table.primary_key}
    if len(table.primary_key) > 1 and (
            len(gone) != 1 or gone[0] != id_part(table.name, table.primary_key)
            or any(slug(c.name) not in in_key for c in others)):
        return f"rekey {table.name}.{col.name}: the key {table.primary_key} has several " \
               "columns; rekey moves a single-column key, or the id part of one the new " \
               "key keeps the rest of"
    if [slug(k) for k in table.primary_key] == [slug(col.name)]:
        return f"rekey {table.name}.{col.name}: already the key"
    old = gone[0] if len(table.primary_key) > 1 else table.primary_key[0] if \
        table.primary_key else id_column(table.name, [c.name for c in table.columns])
    if not table.primary_key and any(slug(f.column) == slug(old or "")
                                     for f in table.foreign_keys):
        old = None  # a reference, not the table's own id: it stays
    if old is not None and slug(old) != slug(col.name):
        parent = next((f.references_table for f in table.foreign_keys
                       if slug(f.column) == slug(old)), None)
        if parent is not None:
            return f"rekey {table.name}.{col.name}: the key {old} refers to {parent}; " \
                   f"re-key {parent} and it follows"
        for other, ref, declared in referrers(tables, table, old):
            if ref is not col:
                _follow(other, ref, declared, table, old, col, constraints, required)
        rename_in(constraints, required, table.name, old, col.name)
        table.columns = [c for c in table.columns if slug(c.name) != slug(old)]
        table.foreign_keys = [f for f in table.foreign_keys if slug(f.column) != slug(old)]
    table.primary_key = [col.name, *(c.name for c in others)]
    col.single_valued = col.single_valued or relabel
    return None


_NAMED_ROWS = "the name of the entity each row is about, as the documents write it"


def rekey_by_added(tables: list[DraftTable], table: DraftTable, name: str,
                   constraints: list[DraftConstraint], required: list[str],
                   key_with: list[str] | tuple[str, ...] = (),
                   description: str = "") -> str | None:
    """Key ``table`` by a name column ``name`` it gains (a table keyed by an invented id
    that names nothing: :func:`may_add_as_key`), placed first, with :func:`rekey`; a note,
    and the column taken out again, when the re-key cannot be done."""
    col = DraftColumn(name=name, type="TEXT", single_valued=True,
                      description=description or _NAMED_ROWS)
    table.columns.insert(0, col)
    note = rekey(tables, table, col, constraints, required, key_with=key_with)
    if note:
        table.columns.remove(col)
    return note
