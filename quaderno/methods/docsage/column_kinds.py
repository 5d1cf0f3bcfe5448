"""What kind of quantity a numeric column holds: a count of people, a count of things, an
amount of money, or a figure whose scale a text states.

Reading a cell's number as its chunk writes it (:mod:`.amounts`) needs to know what the cell's
column can hold: a column that counts people or things (population, employees, offices)
never takes a number written as money or as a measure, a column of money never one written
as a count of people or things, and a count of people never a count of things, nor the other
way round. This module says which a column is, by its name, description and unit
(:func:`counts`, :func:`money`, :func:`column_kind`), and what a number's noun counts
(:func:`counted_kind`). The words a count may be of are one list here (:data:`THING_NOUNS`,
:data:`AGENTS`, :data:`WORKS_COUNTED`), read after a number by :mod:`.amounts` and in a
clause by :mod:`.figures`. Key columns and year columns carry no scale (:func:`rescalable`).
"""

from __future__ import annotations

import re

from quaderno.methods.docsage.normalize import is_year_column, key_columns
from quaderno.methods.docsage.schema import Column, Table


# columns that count people or things: a currency amount or a measure is never their value
_HEADCOUNT = re.compile(r"(population|inhabitants|residents|employees|staff|headcount|"
                        r"members|students|players|seats|people|visitors)", re.I)
# the things a count may be of, singular and plural: one list for a column's name
# (:func:`counts`), what a column counts (:func:`counted_kind`), the words after a number
# (amounts.py) and a clause's nouns (figures.py)
THING_NOUNS = ("office", "branch", "store", "shop", "plant", "outlet", "location")
THING_PLURALS = tuple(w + ("es" if w.endswith(("ch", "sh")) else "s") for w in THING_NOUNS)
# people named by what they do ("360 researchers", "40 physicians"): one list, so that no
# thing ending like them ("centers", "servers", "sectors") and none of those who bring money
# ("investors", "donors", "customers": "$5m from donors") is read as a headcount
AGENTS = ("researcher", "scientist", "physician", "doctor", "nurse", "surgeon", "engineer",
          "teacher", "professor", "lecturer", "scholar", "volunteer", "officer", "soldier",
          "athlete", "author", "writer", "artist", "musician", "technician", "analyst",
          "developer", "programmer", "designer", "journalist", "editor", "pilot", "driver",
          "farmer", "miner", "clinician", "academic", "graduate")
AGENT_WORDS = r"(?:" + "|".join(AGENTS) + r")s?"
# works and results a number may count ("413 publications", "12 patents", "30 goals"):
# never money, of no kind a count column is checked against (people or things)
WORKS_COUNTED = ("publications", "papers", "articles", "books", "patents", "citations",
                 "songs", "albums", "films", "goals", "wins", "matches", "games", "titles")
# what a count counts: people, or things (the nouns of amounts._COUNTED, and column names)
_PEOPLE = re.compile(r"(?i)population|inhabitants|residents|employees|staff|headcount|workers|"
                     rf"members|students|players|people|persons|visitors|"
                     rf"(?<![a-z]){AGENT_WORDS}(?![a-z])")
# (not seats: "seats 1,200 people", "120 members" state a capacity in people)
_THINGS = re.compile(r"(?i)(?<![a-z])(?:" + "|".join(THING_PLURALS) + r")(?![a-z])")
# a count of things by its column's name ("offices", "num_stores", "office_count"), unless
# the name measures them ("office_space", "plant_capacity", "store_area")
_THING_WORDS = frozenset(THING_NOUNS + THING_PLURALS)
_MEASURE_NAMES = frozenset("space area capacity size floor footage output volume value "
                           "rent cost rate pct percent share ratio growth id".split())
# words after the thing that still name a count of it, and units a count may carry
_COUNT_WORDS = frozenset("count counts number total num".split())
_COUNT_UNITS = frozenset("count counts number units unit items item #".split())
# columns holding money, by name or description
_MONEY_NAME = re.compile(r"(?i)revenue|budget|cost|price|payroll|grant|salary|salaries|"
                         r"income|profit|sales|spending|funding|turnover|wage|fee|earning|"
                         r"capital|assets|endowment|debt")
_MONEY_UNIT = re.compile(r"(?i)usd|eur|gbp|[$€£]|dollar|euro|pound")
# a currency with a scale letter in a column's unit ("$M", "USD k"): money, at a scale
# (:func:`.amounts.unit_scale`)
UNIT_LETTER = re.compile(r"(?:[$€£]|\b(?:usd|eur|gbp))\s?(k|m|b)\b|\b(k|m|b)\s?(?:[$€£]|"
                         r"(?:usd|eur|gbp)\b)", re.I)


def counts(col: Column) -> bool:
    """A column counting people or things (population, employees, seats, offices, stores),
    in no currency: a number written as money or as a measure is not its value (the
    measuring model read Riandgiax Systems' "$42.8107 billion" as its offices)."""
    money = UNIT_LETTER.search(col.unit) or _MONEY_UNIT.search(col.unit)
    if col.type not in ("INT", "DOUBLE") or money:
        return False
    if _HEADCOUNT.search(f"{col.name} {col.description}"):
        return True
    # things: by the column's own name only, whose head word is the thing ("offices",
    # "num_stores") or a count of it ("office_count"); never a measure, a rate or money of
    # them ("office_space", "plant_capacity", "stores_pct", "office_occupancy_rate")
    words = [w for w in re.split(r"[^a-z]+", col.name.lower()) if w]
    while len(words) > 1 and words[-1] in _COUNT_WORDS:
        words.pop()
    unit = col.unit.strip().lower()
    return bool(words) and words[-1] in _THING_WORDS and not set(words) & _MEASURE_NAMES \
        and not _MONEY_NAME.search(col.name) and (not unit or unit in _COUNT_UNITS
                                                   or unit in _THING_WORDS)


def money(col: Column) -> bool:
    """A column holding amounts of money: a currency unit, or a name or description that
    says so (revenue, budget, grant)."""
    return col.type in ("INT", "DOUBLE") and bool(
        UNIT_LETTER.search(col.unit) or _MONEY_UNIT.search(col.unit)
        or _MONEY_NAME.search(f"{col.name} {col.description}"))


def counted_kind(text: str) -> str:
    """"people" or "things" when ``text`` (a column's name and description, or the noun a
    number counts) says which it counts, else ""."""
    return _kind(bool(_PEOPLE.search(text)), bool(_THINGS.search(text)))


def _kind(people: bool, things: bool) -> str:
    """"people" or "things" when exactly one of them is counted, else ""."""
    return "people" if people and not things else "things" if things and not people else ""


def column_kind(col: Column) -> str:
    """What ``col`` counts (:func:`counted_kind`): by its name, where the things may run
    into other words ("numoffices"), else by its name and description ("employees"
    described as "across all locations" counts people)."""
    name = col.name.lower()
    return _kind(bool(_PEOPLE.search(name)), any(t in name for t in THING_PLURALS)) \
        or counted_kind(f"{col.name} {col.description}")


def rescalable(table: Table, col: Column) -> bool:
    """Numeric, not a key, not a year: the columns whose values carry a scale."""
    return (col.type in ("INT", "DOUBLE") and col.name not in key_columns(table)
            and not is_year_column(col))


__all__ = ["AGENTS", "AGENT_WORDS", "THING_NOUNS", "THING_PLURALS", "UNIT_LETTER",
           "WORKS_COUNTED", "column_kind", "counted_kind", "counts", "money", "rescalable"]
