"""Normal forms shared by CLEAR's modules: entity names, cell values, a table's entity key.

Kept apart so that extraction (sample agreement), the constraint checks (alias merge) and
correction (committee votes) compare values the same way.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from quaderno.methods.docsage.rows import coerce
from quaderno.methods.docsage.schema import Column, Table

# legal and organisational suffixes dropped from entity names ("Acme Holdings Inc." -> "acme
# holdings"); a word is dropped only at the end and only when something remains
LEGAL_SUFFIXES = frozenset({
    "inc", "incorporated", "ltd", "limited", "llc", "llp", "plc", "corp", "corporation", "co",
    "company", "gmbh", "ag", "sa", "sas", "srl", "spa", "bv", "nv", "oy", "ab", "pty", "lp"})
# words that name a kind of entity, not one ("university", "bank"): a short form made only of
# these names no entity (aliases.py, unstated.py)
KIND_WORDS = frozenset({"university", "college", "institute", "academy", "school", "company",
                        "club", "group", "bank", "museum", "society", "association", "council",
                        "city", "town", "team", "foundation", "hospital", "centre", "center"})
# and the kinds of body the benchmark's families name beside them (a commission's "Markets", a
# company's "Systems"): a word of a name that tells one entity from another is none of these
BODY_WORDS = KIND_WORDS | {"commission", "committee", "markets", "market", "holdings",
                           "systems", "ministry", "agency", "authority", "board", "fc"}
# kinds of bodies an entity is a member of, whose names end in the kind ("Sopael Markets
# Commission"); not places, parties or companies, whose kind word ends many other names
# ("Mexico City", "Liberal Party", "Ohio State")
BODY_KINDS = frozenset("commission committee council league federation association union "
                       "alliance consortium coalition conference network organization "
                       "organisation society guild chamber syndicate".split())
# the small words a proper name holds uncapitalized ("League of Merounddian Cities")
NAME_JOINERS = frozenset({"of", "the", "and", "for"})
# and the particles of names in other languages ("Banca di Roma", "Ludwig van Beethoven")
NAME_PARTICLES = frozenset("de des du da di del la le van von der".split())


def name_run(word: str, joiners: Iterable[str] = NAME_JOINERS | NAME_PARTICLES,
             space: str = r"[ \t]+", at_most: int | None = None) -> str:
    """A regular expression (a pattern string) for a run of proper-name ``word``s, small
    ``joiners`` allowed between them ("Bank of the Rastou", "Kelvo & Sons" with ``&``), each
    pair separated by ``space`` (spaces on one line unless told); ``at_most`` joiners
    between two words (any number when None; 1 keeps "France and the Drournlia Markets
    Commission" two names). The modules that look for runs of names forward build them
    here, with their own ``word`` (capitals only or any script's)."""
    between = "|".join(re.escape(j) for j in sorted(joiners, key=lambda j: (-len(j), j)))
    times = "*" if at_most is None else f"{{0,{at_most}}}"
    return rf"{word}(?:{space}(?:(?:{between}){space}){times}{word})*"

# a word in capitals ("DMC", "D.M.C.", "SKOR", "US"): an acronym or an alias
ACRONYM = re.compile(r"(?<!\w)[^\W\d_a-z](?:\.?[^\W\d_a-z])+\.?(?!\w)")
_LEADING = ("the ",)
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_SPACE = re.compile(r"\s+")
# "University of X" and "X University" are one institution; reorder to the latter
_OF_PREFIX = re.compile(r"^(university|college|institute|academy|school|bank|museum) of (.+)$")
# replies that mean "not stated" and must become NULL, never a string
NULL_WORDS = frozenset({"", "null", "none", "n/a", "na", "unknown", "not mentioned",
                        "not stated", "not specified", "not given", "not available", "-", "--",
                        "none mentioned", "no data", "nil"})


def initials(words: Sequence[str]) -> str:
    """The first letters of ``words`` ("chief executive officer" -> "ceo"); "" for fewer
    than two words, whose first letter abbreviates nothing."""
    return "".join(w[0] for w in words) if len(words) >= 2 else ""


# words an acronym leaves out ("University of Xandria" is "UX")
_ACRONYM_STOP = frozenset({"of", "the", "and", "for", "de", "at"})


def name_acronym(name: str) -> str:
    """The initials of a normalized ``name``, the words of :data:`_ACRONYM_STOP` left out
    ("dmc" of "drournlia markets commission"); "" for a name of fewer than two such words."""
    return initials([w for w in name.split() if w not in _ACRONYM_STOP])


# capitals that name no body a question or a text refers to: countries, roles, measures,
# currencies ("the CEO", "in USD"); never read as a group's acronym. No body's own ("NBA",
# "FIFA"): a group may be written so
COMMON_ACRONYMS = frozenset({"us", "usa", "uk", "eu", "un", "uae", "ceo", "cfo", "cto",
                             "coo", "gdp", "ai", "it", "hr", "pr", "rd", "ipo", "vat", "id",
                             "tv", "pc", "usd", "eur", "gbp"})


def acronym_hits(acronym: str, names: Iterable[str]) -> list[str]:
    """The normalized ``names`` of two words or more whose :func:`name_acronym` is
    ``acronym`` (normalized: one word of 2 to 6 letters; else none): "dmc" of "drournlia
    markets commission"."""
    if " " in acronym or not 2 <= len(acronym) <= 6 or not acronym.isalpha():
        return []
    return [m for m in names if m != acronym and " " in m and name_acronym(m) == acronym]


def is_null(value: Any) -> bool:
    """True for None and for strings that only say a value is missing ("None", "N/A")."""
    if value is None:
        return True
    if isinstance(value, str):
        text = _SPACE.sub(" ", value.strip().strip(".").casefold())
        return text in NULL_WORDS or text.startswith("none (") or text.startswith("not mentioned")
    return False


# a year written in text (1000-2099), and the years a value may plausibly be
YEAR_IN_TEXT = re.compile(r"(?<!\d)(1\d{3}|20\d{2})(?!\d)")


def entity_name(value: Any) -> str | None:
    """A cell as an entity's name a search or a text match can use: text with a letter in
    it, stripped; None for an id, a number, NaN, a boolean or nothing."""
    return value.strip() if isinstance(value, str) and any(
        ch.isalpha() for ch in value) else None


def plausible_year(year: int, current_year: int | None = None) -> bool:
    """1000 <= year <= next year: what extraction and evidence dating accept as a year."""
    return 1000 <= year <= (current_year or dt.date.today().year) + 1


_YEAR_WORDS = re.compile(r"(year|founded|established|born|died|since)", re.I)


def is_year_column(col: Column) -> bool:
    """A DATE column, or an INT column that holds years (by its name, unit or description)."""
    return col.type == "DATE" or (col.type == "INT" and bool(
        _YEAR_WORDS.search(col.name) or "year" in col.unit.lower()
        or "year" in col.description.lower()))


def fold_text(text: str) -> str:
    """Text as compared everywhere in DocSage: accents and case dropped, "&" as "and",
    punctuation as space, whitespace collapsed."""
    return _fold(text)


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = text.replace("&", " and ")
    return _SPACE.sub(" ", _PUNCT.sub(" ", text)).strip()


def folded_name(name: str) -> str:
    """``name`` as :func:`fold_text` writes it, without a leading "the" ("the Drournlia
    Markets Commission" as "drournlia markets commission"): a name looked for in folded
    text, such as a question."""
    words = fold_text(name).split()
    return " ".join(words[1:] if len(words) > 1 and words[0] == "the" else words)


def normalize_entity(name: Any, aliases: Mapping[str, str] | None = None) -> str:
    """The comparison key of an entity name: accents and case folded, punctuation and
    legal suffixes (Inc, Ltd, GmbH, ...) and a leading "the" dropped, "University of X"
    read as "X University"; then looked up in ``aliases`` (normalized alias -> normalized
    canonical name), so "XU" can map to "xandria university". '' for a missing name."""
    if is_null(name):
        return ""
    text = _fold(str(name).replace(".", ""))   # "S.A." -> "sa", "Inc." -> "inc"
    for lead in _LEADING:
        if text.startswith(lead) and len(text) > len(lead):
            text = text[len(lead):]
    words = text.split()
    while len(words) > 1 and words[-1] in LEGAL_SUFFIXES:
        words.pop()
    text = " ".join(words)
    match = _OF_PREFIX.match(text)
    if match:
        text = f"{match.group(2)} {match.group(1)}"
    if aliases:
        text = aliases.get(text, text)
    return text


def normalize_value(value: Any, col_type: str = "TEXT") -> str | None:
    """A cell's comparison form: None for missing, the typed value for numbers, dates and
    booleans (so "2,300" equals 2300), folded text otherwise; a value that cannot be read
    as its type is compared as folded text."""
    if is_null(value):
        return None
    typed, ok = coerce(value, col_type)
    if ok and typed is not None and col_type != "TEXT":
        if isinstance(typed, float) and typed.is_integer():
            typed = int(typed)
        return str(typed)
    return _fold(str(value)) or None


def key_columns(table: Table) -> list[str]:
    """The columns that name a table's entity: its primary key, else its first TEXT
    column, else its first column."""
    if table.primary_key:
        return list(table.primary_key)
    text = [c.name for c in table.columns if c.type == "TEXT"]
    return [text[0]] if text else [table.columns[0].name]


def key_name(table: Table, values: Mapping[str, Any]) -> str | None:
    """A row's entity as a search or a text match names it: its key's values joined, when
    they hold a letter (:func:`entity_name`); None for an id or no key value."""
    return entity_name(" ".join(str(values[k]).strip() for k in key_columns(table)
                                if not is_null(values.get(k))))


def entity_key(table: Table, values: Mapping[str, Any],
               aliases: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The normalized key of a row of ``table`` ('' parts for missing key values)."""
    out = []
    for name in key_columns(table):
        col = table.column(name)
        value = values.get(name)
        out.append(normalize_entity(value, aliases) if col.type == "TEXT"
                   else (normalize_value(value, col.type) or ""))
    return tuple(out)


def multi_valued(table: Table) -> list[str]:
    """The columns of ``table`` an entity has several values of (one row per value), key
    columns aside."""
    return table.multi_valued(key_columns(table))


def row_identity(table: Table, values: Mapping[str, Any],
                 aliases: Mapping[str, str] | None = None,
                 skip: str | None = None) -> tuple[str, ...]:
    """What tells one row from another: the entity key, and in a table with multi-valued
    columns their values too (Acme's Widget row is not its Gadget row); ``skip`` leaves one
    multi-valued column out."""
    extra = tuple(cell_form(table, c, values.get(c), aliases) or ""
                  for c in multi_valued(table) if c != skip)
    return entity_key(table, values, aliases) + extra


def names_entity(table: Table, column: str) -> bool:
    """True for a TEXT column whose values are entity names: a key column, or a foreign key
    (which names an entity of another table)."""
    if table.column(column).type != "TEXT":
        return False
    return column in key_columns(table) or any(column in fk.cols for fk in table.foreign_keys)


def cell_form(table: Table, column: str, value: Any,
              aliases: Mapping[str, str] | None = None) -> str | None:
    """How votes and sample agreement compare a cell: entity names (key and foreign-key
    columns) as :func:`normalize_entity` reads them, so "ACME" equals "Acme Inc."; other
    columns by :func:`normalize_value`."""
    if names_entity(table, column):
        return normalize_entity(value, aliases) or None
    return normalize_value(value, table.column(column).type)


def body_name(value: str) -> bool:
    """``value`` is the proper name of a body: capitalized words whose head is a kind of
    body ("Drournlia Markets Commission", "League of Merounddian Cities"), not a category
    that holds the word ("Credit union", "Social network")."""
    words = value.split()
    if len(words) < 2 or not all(w[0].isupper() for w in words
                                 if w.lower() not in NAME_JOINERS):
        return False
    head = [words[-1].lower(), words[0].lower()] if words[1].lower() == "of" else \
        [words[-1].lower()]
    return bool(BODY_KINDS & set(head))
