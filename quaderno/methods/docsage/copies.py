"""A row's own name copied into a column for a person, emptied (an extraction repair).

Asked for a company's chief executive where its chunk names none, the 1.5B measuring model
wrote the company's own name (``chief_executive = 'Bridarndou Holdings'`` for Bridarndou
Holdings; ``'Dixvhukrand'`` for Dixvhukrand), and a Set2 query answered with it. In a table
keyed by one TEXT column (the entity's name; :func:`.normalize.key_columns`), a cell of a
column named for a person's role (:data:`_PERSON`: chief executive, founder, director, ...)
that repeats the key's value (case and spacing aside) is emptied, with a correction
(``reason="self-copy"``). Other columns may rightly repeat it: an eponymous album's artist,
a city-state's country, a match's winner.

The proper name of a body ("Drournlia Markets Commission", :func:`.normalize.body_name`) in
a column for a role only a person holds (a word of its name in :data:`_ONLY_PERSON`: chief
executive, president, chairman, mayor, coach, ...; not a founder, owner, author, director or
chair, which a body may be, nor a column named for a body, ``executive_committee``) is
emptied too (``reason="not-a-person"``): a committee's re-read of Gouqin Energy's page,
which names no chief executive, wrote the commission's name there
(``abstain-docsage-set2``), and the vote kept it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from quaderno.methods.docsage.normalize import body_name, key_columns
from quaderno.methods.docsage.rows import Correction
from quaderno.methods.docsage.schema import Table

# a column for a person in a role (never the entity a table of organisations is about)
_PERSON = re.compile(r"chief|ceo|executive|director|founder|president|manager|chair|leader|"
                     r"head|owner|mayor|governor|coach|captain|principal|dean|rector|"
                     r"chancellor|minister|secretary|spouse|author|composer|editor|"
                     r"curator|commander|chairman|chairwoman|chairperson", re.I)
# a role only a person holds, as a word of the column's name ("rector" is no word of
# "director"; a body may chair, direct or produce), in a column not named for a body
_ONLY_PERSON = frozenset("ceo president mayor governor coach captain spouse dean rector "
                         "chancellor chairman chairwoman chairperson".split())
_BODY_WORDS = frozenset("committee board body council agency organisation organization "
                        "institution commission office department company firm authority "
                        "branch bureau ministry union country".split())


def _only_person(column: str) -> bool:
    words = set(re.split(r"[^a-z]+", column.lower()))
    held = bool(words & _ONLY_PERSON) or "chiefexecutive" in re.sub(r"[^a-z]", "",
                                                                     column.lower())
    return held and not words & _BODY_WORDS


def _plain(value: Any) -> str:
    return " ".join(str(value).casefold().split()).strip(" .,;:")


def self_copies(table: Table, values: Mapping[str, Any]) -> tuple[dict[str, Any],
                                                                   list[Correction]]:
    """``values`` with every person cell that repeats the row's own name, or that names a
    body where only a person can be, emptied, and a correction per cell."""
    out, changes = dict(values), []
    keys = key_columns(table)
    if len(keys) != 1 or table.column(keys[0]).type != "TEXT":
        return out, changes
    key = keys[0]
    own = _plain(values.get(key)) if isinstance(values.get(key), str) else ""
    if not own:
        return out, changes
    for col in table.columns:
        value = values.get(col.name)
        if col.name == key or col.type != "TEXT" or not _PERSON.search(col.name) \
                or not isinstance(value, str):
            continue
        if _plain(value) == own:
            reason = "self-copy"
        elif _only_person(col.name) and body_name(value.strip()):
            reason = "not-a-person"
        else:
            continue
        out[col.name] = None
        changes.append(Correction(column=col.name, old=value, new=None, reason=reason,
                                  by="as-stated"))
    return out, changes


__all__ = ["self_copies"]
