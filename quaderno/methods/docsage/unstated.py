"""A value its chunk does not state, emptied (an extraction repair).

Every value is read from one chunk (its provenance), and a value the chunk does not state is
the model's own: the 1.5B measuring model gave Set2 companies whose chunks give no count
100, 160 and 320 employees and a $200,000,000 revenue, and countries ("South Africa",
"Finland") no document names (``docsage-case-set2``); ``ORDER BY employees`` then chose an
invented 100. A cell that is no key, no reference and nothing a reference points at is
emptied (``reason="unstated"``) when its chunk does not state it:

* a number (INT, DOUBLE) that no number of the chunk gives (:mod:`.figures`: as written,
  in the column's unit, scaled, rounded or in words; a 0 needs a word for none beside the
  column's own; a count the chunk gives only as the other kind of thing is none);
* a text the model read from the row's own name and nothing else: "Dixvhukrand Energy" says
  nothing of its sector, and the model read "energy" from it where the chunk says
  "insurance". Columns that hold a form of the name (a ``short_name``, a ``brand``, an
  ``acronym``) and a value that is the whole name (a city-state's capital) may take it;
* a text written as a name (a word with a capital) none of whose words the chunk writes,
  accents and case aside, nor their first five letters ("telecom" for
  "telecommunications"), nor the start of one ("bank" for "Banking"), nor the whole value
  inside a word run (scripts without spaces), nor its initials ("DMC"). A label in small
  letters the chunk does not write ("male" for "he", "defunct" for "ceased operations") is
  a reading of it and stays.
  Known loss: a country the chunk names only by its people ("a Finnish company") or an
  abbreviation the value spells out ("US").

A single-valued reference must be named: each word of its name written (a given name by its
initial, "D. Rinbaernvaer"), its initials in capitals ("DMC"), a short form the aliases
would join to it (a run of capitalized words the name holds, one of them no kind word:
"Rastou" for "Rastou Bank", "Curie" for "Marie Curie"), or either part of "Name (ABBR)";
kind words alone ("Markets Commission") name nothing, and neither does a name the chunk
writes only after a negation ("a company of the Sopael Markets Commission, not of the
Drournlia Markets Commission": the benchmark's namesakes). The measuring model wrote the
question's commission into ``commission_name`` for a company whose chunk names only another
("a company of the Sopael Markets Commission", ``docsage-rosters-set2``). Keys, references
of several columns, multi-valued references (a row per member) and what a reference points
at are left: the aliases, :mod:`.rekey` and :mod:`.ended` judge those. Dates and booleans
are left. Applied on every read after :mod:`.misplaced`, so stored tuples need no new key,
and again after every vote of CLEAR's committee (:func:`unstated_rows`), which re-reads the
chunk; a cell whose value came from another chunk is checked against that chunk.

A text the chunk states, but as another attribute ("As for slogan, ... is recorded under
Power from Krildyr" in ``sector``), is emptied too (``reason="other-attribute"``,
:mod:`.labelled`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

from quaderno.methods.docsage.figures import Figures
from quaderno.methods.docsage.labelled import Labels, other_attribute
from quaderno.methods.docsage.normalize import (ACRONYM, BODY_WORDS, LEGAL_SUFFIXES,
                                                NAME_JOINERS, NAME_PARTICLES, fold_text,
                                                is_null, key_columns, name_run,
                                                normalize_entity)
from quaderno.methods.docsage.rows import Correction, Row, noted, value_chunk
from quaderno.methods.docsage.schema import Column, Schema, Table

_SKIP = frozenset({"of", "the", "and", "for"}) | LEGAL_SUFFIXES
_STEM = 5
# columns holding a form of the row's own name: the name states them
_NAME_FORMS = re.compile(r"name|brand|acronym|abbreviation|alias|initials|short|code", re.I)
_CAPITAL = re.compile(r"(?<![^\W\d_])[^\W\d_a-z]", re.UNICODE)
# a capital written as a given name's initial ("D. Rinbaernvaer", "J R Tolkien")
_INITIAL = re.compile(r"(?<![\w'’])([^\W\d_a-z])(?:\.|(?=[\s-]+[^\W\d_a-z]))")
# a run of capitalized words, small joining words inside ("Rastou Bank", "Bank of Zorn")
_CAP_WORD = r"[^\W\d_a-z][\w'’.&-]*"
# one small word at most between two names ("Rastou and the Ulm Group" is two names)
_JOINING = (NAME_JOINERS - {"for"}) | NAME_PARTICLES | {"&"}
_RUN = re.compile(name_run(_CAP_WORD, _JOINING, space=r"\s+", at_most=1))
# a name written after a negation: "not of the X", "not a member of X", "never part of X",
# "neither X nor Y", "isn't in X" (only small joining words between: "not known whether X"
# negates nothing). The name is a run of capitalized words on one line, no full stop inside
# ("... of the SMC. Drournlia ..." is two sentences) and no negation either (a run ends at
# the next "Not"); a name right after "a", "an" or "the" followed by a word in small letters
# describes that word, which is what is negated ("not a Drournlia Markets Commission
# founder"), so it stays, unless that word is membership ("not a ... Commission member")
# (:func:`_negated`)
_NEGATION = r"(?i:not|never|nor|neither|no[ \t]+longer|isn't|wasn't|aren't|weren't)(?![\w'])"
_NEG_WORD = rf"(?!{_NEGATION})[^\W\d_a-z][\w'’&-]*"
_NEG_RUN = name_run(_NEG_WORD, _JOINING, at_most=1)
_NEGATED = re.compile(rf"\b{_NEGATION}"
                      r"((?:[ \t]+(?:a|an|the|of|in|at|to|for|with|from|under|by|part|one|any|"
                      r"member|members|company|companies|longer))*)[ \t]+"
                      rf"((?>{_NEG_RUN}))")
_DESCRIBED = re.compile(r"[ \t]+(?!(?:but|and|or|nor|since|until|after|before|any|anymore|"
                        r"either|as|in|for|now|yet|though|although|which|who|that|at|despite|"
                        r"because|when|while|anymore|member|members|company|companies|firm|"
                        r"part)\b)[a-z]")


def _negated(text: str) -> str:
    """``text`` with every name it writes after a negation blanked out (the comment above)."""
    def blank(m: re.Match) -> str:
        joined = m.group(1).split()
        if joined in (["a"], ["an"], ["the"]) and _DESCRIBED.match(text, m.end(2)):
            return m.group(0)
        return m.group(0)[:m.start(2) - m.start(0)] + " " * len(m.group(2))
    return _NEGATED.sub(blank, text)


class _Said(Figures):
    """What one chunk states, read once for all of its cells: its figures, and its words."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._without: dict[tuple[str, ...], tuple[str, tuple[set[str], set[str], str]]] = {}

    @cached_property
    def folded(self) -> str:
        return fold_text(self.text)

    @cached_property
    def affirmed(self) -> _Said:
        """What the chunk states with every name it writes after a negation blanked out."""
        text = _negated(self.text)
        return self if text == self.text else _Said(text)

    @cached_property
    def initials(self) -> set[str]:
        """Letters the chunk writes as a given name's initial ("D. Rinbaernvaer"), not a
        possessive's "s" nor an article."""
        return {fold_text(m) for m in _INITIAL.findall(self.text)} - {"a", "i"}

    @cached_property
    def acronyms(self) -> set[str]:
        """Words the chunk writes in capitals ("DMC", "D.M.C.", "US"), legal suffixes aside."""
        return {a for t in ACRONYM.findall(self.text)
                if (a := fold_text(t).replace(" ", "")) not in LEGAL_SUFFIXES}

    @cached_property
    def runs(self) -> list[set[str]]:
        """The words of each run of capitalized words the chunk writes ("Rastou", "Gouqin
        Energy"), normalized as entity names are."""
        out = []
        for m in _RUN.finditer(self.text):
            words = set(normalize_entity(m.group(0)).split())
            if words:
                out.append(words)
        return out

    @cached_property
    def words(self) -> tuple[set[str], set[str], str]:
        return _word_sets(self.folded)

    @cached_property
    def labels(self) -> Labels:
        """What the chunk calls each value it writes (:mod:`.labelled`)."""
        return Labels(self.text)

    def without(self, names: tuple[str, ...]) -> tuple[str, tuple[set[str], set[str], str]]:
        """The folded text with ``names`` blanked out, and its word sets, read once."""
        if names not in self._without:
            folded = _without(self.folded, names)
            self._without[names] = (folded, _word_sets(folded))
        return self._without[names]


def _words(folded: str) -> list[str]:
    return [w for w in folded.split() if len(w) >= 3 and w not in _SKIP]


def _word_sets(folded: str) -> tuple[set[str], set[str], str]:
    """A folded text's words, the first five letters of its longer ones, and the text
    without spaces."""
    have = set(folded.split())
    return have, {w[:_STEM] for w in have if len(w) >= _STEM}, folded.replace(" ", "")


def _writes(folded_text: str, value: str,
            words: tuple[set[str], set[str], str] | None = None, every: bool = False,
            letters: frozenset[str] | set[str] = frozenset(),
            acronyms: frozenset[str] | set[str] = frozenset()) -> bool:
    """``folded_text`` (with its :func:`_word_sets` when read before) writes a word of
    ``value`` (with ``every``, each of them, or its initial alone: "D. Rinbaernvaer"), its
    first five letters, its start (four letters or more: "bank" for "banking"), the whole
    value, or its initials."""
    fv = fold_text(value)
    if not fv:
        return True
    have, stems, squeezed = words or _word_sets(folded_text)
    if len(fv) >= 3 and (fv in folded_text or fv.replace(" ", "") in squeezed):
        return True
    wanted = _words(fv)
    if not wanted:
        return True
    # a name the text writes by its initials ("DMC" for "Drournlia Markets Commission")
    initials = "".join(w[0] for w in fv.split() if w not in ("of", "the", "and"))
    if len(initials) >= 2 and initials in acronyms:
        return True

    def said(w: str) -> bool:
        return w in have or (len(w) >= _STEM and w[:_STEM] in stems) \
            or any(w[:k] in have for k in range(4, len(w)))
    if every:
        return all(said(w) or w[0] in letters for w in wanted)
    return any(said(w) for w in wanted)


def text_stated(text: str, value: Any) -> bool:
    """True when ``text`` writes a word of ``value`` (module docstring), or ``value`` has
    no word to look for."""
    return not isinstance(value, str) or _writes(fold_text(text), value,
                                                    acronyms=_Said(text).acronyms)


def _without(folded: str, names: Sequence[str]) -> str:
    """``folded`` text with every whole-word writing of ``names`` blanked out."""
    for name in names:
        if (fn := fold_text(name)):
            folded = re.sub(rf"(?<!\w){re.escape(fn)}(?!\w)", " ", folded)
    return folded


def _text_kept(col: Column, value: str, said: _Said, names: tuple[str, ...],
               reference: bool = False) -> bool:
    """Whether a TEXT cell stays (module docstring); a ``reference`` names one entity, which
    the chunk must name (:func:`_reference_named`: "Sopael Markets Commission" does not name
    the Drournlia one)."""
    if reference:
        return _reference_named(value, said.affirmed)
    if not _writes(said.folded, value, said.words, acronyms=said.acronyms):
        # stated nowhere: a reading in small letters stays, an invented name does not
        return not _CAPITAL.search(value)
    folded = fold_text(value)
    if _NAME_FORMS.search(col.name) or any(folded == fold_text(n) for n in names) or \
            not _writes(fold_text(" ".join(names)), value):
        return True          # (a name that writes no word of it cannot be where it was read)
    blanked, words = said.without(names)
    return _writes(blanked, value, words)


def _reference_named(value: str, said: _Said) -> bool:
    """The chunk names the entity ``value`` refers to: every word of it (or a given name's
    initial, or its initials: "DMC"), or a short form alias_map would join to it (a run of
    capitalized words all of which the value holds, one of them no kind word: "Rastou" for
    "Rastou Bank", "Curie" for "Marie Curie"), or, for "Name (ABBR)", either part."""
    parts = [value, *(p.strip() for p in re.split(r"[()]", value) if p.strip())] \
        if "(" in value else [value]
    for part in parts:
        if _writes(said.folded, part, said.words, every=True, letters=said.initials,
                   acronyms=said.acronyms):
            return True
        have = set(normalize_entity(part).split())
        if any(run <= have and run - BODY_WORDS - _SKIP for run in said.runs):
            return True
    return False


def _free_columns(schema: Schema, table: Table) -> list[Column]:
    """The columns whose values are checked: no key, no part of a reference of several
    columns, no multi-valued reference (a row per member: emptied, the row would say
    nothing), nothing a reference points at; TEXT or a number."""
    multi = set(table.multi_valued(key_columns(table)))
    fixed = set(key_columns(table)) | {c for fk in table.foreign_keys
                                       if len(fk.cols) > 1 or fk.cols[0] in multi
                                       for c in fk.cols}
    fixed |= {c for t in schema.tables for fk in t.foreign_keys if fk.ref_table == table.name
              for c in fk.ref_cols}
    return [c for c in table.columns
            if c.name not in fixed and c.type in ("TEXT", "INT", "DOUBLE")]


def _emptied(schema: Schema, table: Table, row: Row,
             said_of: Callable[[str], _Said | None],
             columns: Sequence[str] | None = None) -> Row:
    """``row`` with each free cell its chunk does not state emptied; ``said_of`` gives what
    a chunk states, None for a chunk not given (its cells are left)."""
    values, notes = dict(row.values), []
    names = tuple(str(values[k]).strip() for k in key_columns(table)
                  if isinstance(values.get(k), str) and len(values[k].strip()) >= 4)
    references = {fk.cols[0] for fk in table.foreign_keys if len(fk.cols) == 1}
    for col in _free_columns(schema, table):
        if columns is not None and col.name not in columns:
            continue
        value = values.get(col.name)
        if is_null(value):
            continue
        said = said_of(value_chunk(row.provenance.chunk_id, row.provenance.corrections,
                                   col.name))
        if said is None:
            continue
        kept = (not isinstance(value, str) or _text_kept(col, value, said, names,
                                                         col.name in references)) \
            if col.type == "TEXT" else said.states_number(value, col)
        if not kept:
            values[col.name] = None
            notes.append(Correction(column=col.name, old=value, new=None, reason="unstated",
                                    by="as-stated"))
        elif col.type == "TEXT" and isinstance(value, str) and \
                (label := other_attribute(table, col, said.labels.of(value))) is not None:
            # stated, as something the column is not (labelled.py)
            values[col.name] = None
            notes.append(Correction(column=col.name, old=value, new=None,
                                    reason="other-attribute", by="as-stated",
                                    evidence_quote=label.quote))
    return noted(row, notes, values) if notes else row


def unstated(schema: Schema, rows: Mapping[str, Sequence[Row]], chunk_id: str,
             text: str) -> dict[str, list[Row]]:
    """One chunk's ``rows`` (table name -> rows) with every value ``text`` does not state
    emptied (module docstring)."""
    said = _Said(text)

    def said_of(chunk: str) -> _Said | None:
        return said if chunk == chunk_id else None
    out: dict[str, list[Row]] = {}
    for name, table_rows in rows.items():
        table = schema.table(name)
        out[name] = [_emptied(schema, table, r, said_of) if table is not None else r
                     for r in table_rows]
    return out


def unstated_rows(schema: Schema, rows: Sequence[Row], texts: Mapping[str, str],
                  only: Mapping[int, Sequence[str]] | None = None) -> list[Row]:
    """:func:`unstated` over rows of many chunks (``texts``: chunk id -> text), each cell
    against the chunk its value came from: CLEAR applies it after its committee."""
    said: dict[str, _Said] = {}

    def said_of(chunk: str) -> _Said | None:
        if chunk not in texts:
            return None
        if chunk not in said:
            said[chunk] = _Said(texts[chunk])
        return said[chunk]
    out = []
    for i, r in enumerate(rows):
        table = schema.table(r.table)
        if table is None or (only is not None and i not in only):
            out.append(r)
            continue
        out.append(_emptied(schema, table, r, said_of, None if only is None else only[i]))
    return out


def states(schema: Schema, row: Row, column: str, value: Any,
           texts: Mapping[str, str]) -> bool:
    """Whether this repair would keep ``value`` as ``row``'s ``column`` (the chunk its value
    is read from states it, or the column is none this repair judges); False for no value."""
    if is_null(value):
        return False
    probe = row.model_copy(update={"values": {**row.values, column: value}})
    (kept,) = unstated_rows(schema, [probe], texts, only={0: [column]})
    return not is_null(kept.values.get(column))


def was_unstated(row: Row, column: str) -> bool:
    """Whether this repair emptied ``row``'s ``column``."""
    return any(c.column == column and c.reason == "unstated" for c in row.provenance.corrections)


__all__ = ["states", "text_stated", "unstated", "unstated_rows", "was_unstated"]
