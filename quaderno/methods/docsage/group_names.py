"""The proper name of the group a table is named after, as a text writes it: a table of a
group's members (``drournlia_markets_commission_members``) is named after the group, and a
chunk that writes "Members of the Drournlia Markets Commission" is that group's roster. Read by
:mod:`.ended` (members a roster says have left), :mod:`.group_keyed` (a member's row keyed by
its group's name) and :mod:`.denied`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from quaderno.methods.docsage.normalize import NAME_JOINERS, fold_text, name_run
from quaderno.methods.docsage.schema import Table

# a run of capitalized words on one line, "of"/"the"/"and"/"for" and a name's particles
# allowed inside ("League of X Cities"); a possessive "'s" ends a word of it
_CAPITAL = r"[A-Z\u00c0-\u00d6\u00d8-\u00de][\w\u2019'-]*"
PROPER_NAME = re.compile(name_run(_CAPITAL))
_ROSTER = frozenset({"members", "member", "membership", "memberships", "roster"})
_POSSESSIVE = re.compile(r"['\u2019]s?$")


def compact(name: str) -> str:
    """``name`` folded, without spaces or underscores: a table's name and a written one."""
    return re.sub(r"[\W_]+", "", fold_text(name))


def _names_in(text: str, longest: int) -> Iterator[str]:
    """The proper names ``text`` writes, each whole segments of a run of capitalized words
    between "of", "the", "and", "for" ("League of Merounddian Cities", and "Drournlia
    Markets Commission" of "Members of the Drournlia Markets Commission"; never "Drournlia
    Markets" of it), of two words or more and at most ``longest`` letters compacted."""
    for m in PROPER_NAME.finditer(text):
        words = [_POSSESSIVE.sub("", w) for w in m[0].split()]
        cuts = [k for k, w in enumerate(words) if w in NAME_JOINERS or (w == "The" and (
            k == 0 or words[k - 1] in NAME_JOINERS))]
        ends = {*cuts, len(words)}
        size = [len(compact(w)) for w in words]
        for start in [0, *(k + 1 for k in cuts)]:
            length = 0
            for k in range(start, len(words)):
                length += size[k]
                if length > longest:
                    break
                if k > start and k + 1 in ends:
                    yield " ".join(words[start:k + 1])


def group_forms(table: Table) -> set[str]:
    """The compacted names a group ``table`` is named after may have: its name, or its
    name less a word for its roster (``drournlia_markets_commission_members``)."""
    parts = table.name.lower().split("_")
    return {compact(table.name)} | ({compact("".join(parts[:-1]))}
                                     if len(parts) > 2 and parts[-1] in _ROSTER else set())


def roster_of(group: str) -> re.Pattern[str]:
    """Where a text calls a list the members of ``group``: "members of (the) G", "G's
    members", "G members", "G — members"."""
    name = re.escape(group)
    return re.compile(rf"\bmembers?\s+(?:of|in)\s+(?:the\s+)?{name}(?!\w)"
                      rf"|(?<!\w){name}(?:['\u2019]s)?[ \t]*(?:[\u2014\u2013:-][ \t]*)?"
                      r"members?\b", re.I)


def group_named(table: Table, text: str) -> str | None:
    """The proper name in ``text`` of the group ``table`` is named after, or None: a name
    of two words or more, capitalized ("Drournlia Markets Commission", "Stedrurial Medal",
    "League of Merounddian Cities"; :func:`_names_in`), written as the table's name is,
    underscores and case aside (``drournliamarketscommission``,
    ``drournlia_markets_commission``), or that name and a word for its roster
    (``drournlia_markets_commission_members``). Its rows are then the group's members."""
    wanted = group_forms(table)
    return next((n for n in _names_in(text, max(map(len, wanted)))
                 if compact(n) in wanted), None)


__all__ = ["PROPER_NAME", "compact", "group_forms", "group_named", "roster_of"]
