"""A list of names written into one cell, made one row per name (an extraction repair).

A roster chunk ("Members of the Drournlia Markets Commission (DMC) include Riaska, Gouqin
Energy, BS, Grysskynd, Kriarngyrtia, Roustoustus, Grounlenkre, SS.") is how a collection says
which entities belong to a group, and often the only place a member is named beside the
group. The 1.5B measuring model read it as a row per member in most replies, but in some as
one row whose ``company_name`` is "Riaska, Gouqin Energy, BS, ...": no member then had a row,
so completion never searched for their headcounts and Roustoustus Systems, the Set2
Relationship question's answer, was never read (``docsage-case-set2``).

A TEXT cell is a list when it is a key column's, a multi-valued reference's or a back
link's (a roster's ``commissions.company_name``, which names the companies that refer to
the commission: :func:`.misplaced.back_links`), it splits at commas or semicolons (a last
"and" too: "A, B and C") into three names or more, each of at most six words and none a
legal suffix ("Acme, Inc." is one name), the first no number (an address: "10 Downing St,
London, UK"), no name twice, and the chunk writes every name (case aside). A value the
chunk writes whole is a list only after a roster's words ("include", "members", "such as",
"namely", "comprising", "are", a colon): "Crosby, Stills, Nash & Young released an album"
is one name. The row becomes one row per name, each with a correction quoting the list
(``reason="list"``). A list in a key leaves each new row the row's other key parts and
references (the group), and empties the rest: what the model wrote beside a list is no one
member's ("employees": 0 for the roster). A multi-valued reference, or a back link, keeps
every other value (a row per value is what such a column means). Only the first list in a
row is split. Applied on every read, first, so :mod:`.ended` then judges each member on its
own ("Former members: Gedroun Bank (left 2009), ..."), and stored tuples need no new key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quaderno.methods.docsage.normalize import LEGAL_SUFFIXES, key_columns
from quaderno.methods.docsage.rows import Correction, Row, noted
from quaderno.methods.docsage.schema import Table

_COMMA = re.compile(r"\s*[,;]\s*")
_AND = re.compile(r"\s+(?:and|&)\s+", re.I)
MIN_ITEMS = 3
_CUE = re.compile(r"(?:\binclud\w*|\bmembers?\b|\bsuch as|\bnamely|\bcompris\w*|\bconsists? of|"
                  r"\bare|\bwere|\bjoined by|:)\s*(?:the\s+)?$")
MAX_WORDS = 6


def items(value: str, text: str) -> list[str] | None:
    """The names of a list ``value`` that ``text`` writes every one of (module docstring),
    or None when ``value`` is no such list."""
    parts = _COMMA.split(value.strip().strip(".;, "))
    if len(parts) < 2:
        return None
    *first, last = parts
    last = re.sub(r"^(?:and|&)\s+", "", last, flags=re.I)
    names = [p.strip() for p in [*first, *_AND.split(last)]]
    if len(names) < MIN_ITEMS:
        return None
    names = list(dict.fromkeys(names))
    if len(names) < MIN_ITEMS or re.match(r"\d", names[0]):   # an address: "10 Downing St, ..."
        return None
    low = text.casefold()
    # a name the chunk writes whole ("Crosby, Stills, Nash & Young released ...", "Smith,
    # Jones and Partners advised ...") is one name unless a roster's words lead it in
    whole = re.escape(value.strip().strip(".;, ").casefold()).replace(r"\ ", r"\s+")
    for m in re.finditer(rf"(?<!\w){whole}(?!\w)", low):
        if not _CUE.search(low[max(0, m.start() - 40):m.start()]):
            return None
    for name in names:
        if not any(ch.isalpha() for ch in name) or len(name.split()) > MAX_WORDS or \
                name.casefold().strip(".") in LEGAL_SUFFIXES:
            return None
        if not re.search(rf"(?<!\w){re.escape(name.casefold())}(?!\w)", low):
            return None
    return names


def _split(table: Table, row: Row, column: str, names: Sequence[str], in_key: bool) -> list[Row]:
    keep = set(key_columns(table)) | {c for fk in table.foreign_keys for c in fk.cols}
    listed = row.values[column]
    out = []
    for name in names:
        values = {c: (name if c == column else v if (not in_key or c in keep) else None)
                  for c, v in row.values.items()}
        notes = [Correction(column=column, old=listed, new=name, reason="list", by="as-stated"),
                 *(Correction(column=c, old=v, new=None, reason="list", by="as-stated")
                   for c, v in row.values.items() if v is not None and values[c] is None)]
        out.append(noted(row, notes, values))
    return out


def split_lists(table: Table, rows: Sequence[Row], text: str,
                links: Sequence[str] = ()) -> list[Row]:
    """``rows`` of ``table`` read from ``text``, each with a list of names in a key column, a
    multi-valued reference or one of the ``links`` (columns naming back the entities of a
    table that refers to this one: a roster's ``commissions.company_name``) made one row per
    name (module docstring)."""
    keys = [k for k in key_columns(table) if table.column(k).type == "TEXT"]
    multi = set(table.multi_valued(key_columns(table)))
    refs = [c for fk in table.foreign_keys for c in fk.cols
            if c in multi and table.column(c).type == "TEXT"]
    refs += [c for c in links if c not in keys and c not in refs
             and table.column(c).type == "TEXT"]
    out: list[Row] = []
    for row in rows:
        for column in [*keys, *refs]:
            value = row.values.get(column)
            names = items(value, text) if isinstance(value, str) else None
            if names:
                out += _split(table, row, column, names, column in keys)
                break
        else:
            out.append(row)
    return out


__all__ = ["items", "split_lists"]
