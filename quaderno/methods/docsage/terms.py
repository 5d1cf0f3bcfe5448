"""What the question measures, filters by and asks for (read by code for ASK's
missing-relationship signal: :mod:`.missing`).

"What is the highest annual revenue among the companies of X?" cannot be answered from a
schema without a column for revenue, however well its tables join; the measuring model drew
exactly that schema (companies and commissions, no revenue) and listed no required attribute,
so nothing flagged it until the SQL gate refused the query. The question says what it
measures: the words after an aggregate or comparison ("highest annual revenue", "average
population", "the number of publications", "sample variance of the research grant",
"correlation between the birth year and the number of publications"); a phrase after a
participle ("the highest rated hotel") or a pronoun ("what more do we know") is none.
Whether the schema holds such a phrase is :func:`head_in` of its head word (its last
content word: ``revenue``, ``birth`` of "birth year").

Also here: the content words of a text (used to offer the tuple store's known tables that
share one with the question).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel

from quaderno.methods.docsage.normalize import name_run
from quaderno.methods.docsage.rekey import singular
from quaderno.methods.docsage.schema import Column, Schema

# words of questions and schemas that say nothing about which entities or attributes they mean
GENERIC = frozenset(
    "the and for was has had did how who are its his her our you all any can not but per "
    "one two "
    "what which where when whose does many much most least more less than among across "
    "between their there with from that this these those have each every other same "
    "were been about into only also they them then "
    "highest lowest largest smallest higher lower greater above below after before over "
    "under average mean median total number count amount value name year date type entity "
    "attribute unit record data list give show find difference compare correlation "
    "variance distribution".split())

# words after which the question names what it measures: an aggregate names it for sure
# ("the highest revenue", "the average population"); a size or comparison adjective may
# name an entity instead ("the largest shareholder", "the lower house"), so what follows it
# is read as a measure, never added to a schema as one
_AGGREGATES = frozenset(
    "highest lowest most least fewest average mean median total sum maximum minimum "
    "variance deviation correlation difference".split())
_TRIGGERS = _AGGREGATES | frozenset(
    "largest smallest biggest greatest latest earliest higher lower larger smaller bigger "
    "greater more fewer less".split())
# triggers whose measure may be two phrases joined by "and" (a correlation between A and B)
_PAIRED = frozenset({"correlation", "difference"})
# words between a trigger and its measure ("the sample variance of the research grant")
_LEAD = frozenset("the a an of between sample standard number amount count value level"
                  .split())
# words that end a measured phrase ("the average population of the cities")
_JOINS = frozenset("of in on at to by for and or as is be than per within during since until "
                   "while whose among across do does did we you they it he she are was were "
                   "been being has have had can could would should will shall may might must"
                   .split())
# "the most common genre" measures no attribute
_NOT_MEASURES = frozenset("common frequent popular famous recent likely often".split())
_MAX_WORDS = 3


def content_words(text: str) -> set[str]:
    """Content words of ``text`` (identifiers split at underscores), singular."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))
    return {singular(w) for w in words
            if len(w) >= 3 and w not in GENERIC and singular(w) not in GENERIC}


def overlap(a: set[str], b: set[str]) -> bool:
    """A word in both (``ceo``, ``gdp``), or one of five letters or more inside another
    (``revenue`` in ``revenueamount`` and ``totalrevenue``)."""
    return bool(a & b) or any(min(len(x), len(y)) >= 5 and (x in y or y in x)
                              for x in a for y in b)


class Measure(BaseModel):
    """A phrase the question measures: its words as written, its head word, and whether an
    aggregate named it (:data:`_AGGREGATES`)."""

    words: list[str]
    head: str
    aggregate: bool = True

    @property
    def phrase(self) -> str:
        return " ".join(self.words)


def question_tokens(question: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'-]*|\d[\d.,]*|[^\sA-Za-z\d]", question)


def _past_lead(tokens: Sequence[str], i: int) -> int:
    """Where the words from ``tokens[i]`` on stop being :data:`_LEAD` words ("the sample
    variance of the ...")."""
    while i < len(tokens) and tokens[i].lower() in _LEAD:
        i += 1
    return i


def _phrase(tokens: Sequence[str], i: int) -> tuple[list[str], int]:
    """The lower-case words from ``tokens[i]`` on, up to ``_MAX_WORDS``, stopping at a
    capitalized word, a number, punctuation or a word that joins phrases; and where it
    stopped."""
    words: list[str] = []
    while i < len(tokens) and len(words) < _MAX_WORDS:
        tok = tokens[i]
        if not tok.isalpha() or not tok.islower() or tok in _TRIGGERS or tok in _JOINS or \
                (tok in GENERIC and tok not in ("year", "date")):
            break
        words.append(tok)
        i += 1
    return words, i


def measures(question: str) -> list[Measure]:
    """The phrases ``question`` measures (module docstring), in order, without repeats."""
    tokens = question_tokens(question)
    found: dict[str, Measure] = {}
    for i, tok in enumerate(tokens):
        if tok.lower() not in _TRIGGERS:
            continue
        j, paired = i + 1, tok.lower() in _PAIRED
        while True:
            words, j = _phrase(tokens, _past_lead(tokens, j))
            heads = [w for w in words if w not in GENERIC]
            # "the highest rated hotel": a participle describes the entity
            if heads and words[0] not in _NOT_MEASURES and not (
                    words[0].endswith("ed") and len(words[0]) > 4):
                found.setdefault(" ".join(words), Measure(
                    words=words, head=heads[-1], aggregate=tok.lower() in _AGGREGATES))
            if not (paired and j < len(tokens) and tokens[j] == "and"):
                break
            j += 1
    return list(found.values())


def stem(word: str) -> str:
    """``word`` singular and without an -ing or -ed ending ("founding" and "founded" are
    "found"), when four letters stay."""
    word = singular(word.lower())
    for end in ("ing", "ed"):
        if word.endswith(end) and len(word) - len(end) >= 4:
            return word[:-len(end)]
    return word


def head_in(head: str, text: str, names: str = "") -> bool:
    """``head`` is in ``text`` (names, descriptions): a shared content word; a head too
    short or too generic to be one ("iq", "years") only as a whole word. Or ``head`` and a
    content word of ``names`` (table and column names) share a stem, one of them with an
    ending stripped (``founding`` in ``founded``; not ``funding`` in a description's
    "funded")."""
    words = content_words(head)
    if words and overlap(words, content_words(text)):
        return True
    if not words:
        written = re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))
        return singular(head.lower()) in {singular(w) for w in written}
    mine = stem(head)
    return any(stem(w) == mine and (mine != singular(head.lower())
                                     or stem(w) != singular(w))
               for w in content_words(names))


def column_text(col: Column) -> str:
    """What a column says about what it holds: its name, description and unit."""
    return f"{col.name} {col.description} {col.unit}"


# "with" after these joins two things, it filters nothing ("compared with the budget")
_NOT_FILTERING = frozenset("compared compare comparison along together associated dealing "
                           "deal deals correlated correlate correlates correlation paired "
                           "combined shared agree agrees coincide coincides".split())


def filtered_words(question: str) -> set[str]:
    """The attributes ``question`` filters its entities on: the lower-case words after
    "whose", "where" or "with" up to a joining word ("whose nationality is", "with a
    founding year before"); not after a "with" that joins ("compared with", "with respect
    to")."""
    tokens = question_tokens(question)
    out: set[str] = set()
    for i, tok in enumerate(tokens):
        if tok.lower() == "with" and (
                (i and tokens[i - 1].lower() in _NOT_FILTERING)
                or [t.lower() for t in tokens[i + 1:i + 3]] == ["respect", "to"]):
            continue
        if tok.lower() in ("whose", "where", "with"):
            out |= content_words(" ".join(_phrase(tokens, _past_lead(tokens, i + 1))[0]))
    return out


_COPULAS = frozenset("is are was were".split())
# words after a filtered attribute that compare it to a number ("whose budget is above 5")
_COMPARING = frozenset("above below over under before after exceeding exceeds than more less "
                       "greater fewer least between".split())


def column_type(measure: Measure, compared: bool = True) -> str:
    """The column type for ``measure``: a date, a year, a number; a filter matched to a
    word (``compared`` False: "whose climate is arid") is text."""
    if "date" in measure.words:
        return "DATE"
    if "year" in measure.words:
        return "INT"
    return "DOUBLE" if compared else "TEXT"


def filtered_by(question: str) -> list[tuple[Measure, str]]:
    """The attributes ``question`` filters its entities on after "whose" ("the laureates
    whose nationality is Kraxryndia"), each with the type of column that holds it: a number
    when a comparison or a figure follows ("whose budget is above 5"), else text. The
    words after "where" or "with" may name an entity instead ("the city where the company
    is based"), so they are not read as attributes to add."""
    tokens = question_tokens(question)
    found: dict[str, tuple[Measure, str]] = {}
    for i, tok in enumerate(tokens):
        # a question opening with "Whose" asks for an entity, it filters none
        if tok.lower() != "whose" or i == 0:
            continue
        words, j = _phrase(tokens, _past_lead(tokens, i + 1))
        # a verb ends the attribute ("whose headquarters moved after 1990", "whose revenue
        # exceeds"), a noun does not ("whose top speed is above 200")
        for n, w in enumerate(words[1:], start=1):
            after = words[n + 1] if n + 1 < len(words) else (
                tokens[j].lower() if j < len(tokens) else "")
            if w in _COMPARING or (w.endswith("ed") and after not in _COPULAS):
                words, j = words[:n], j - (len(words) - n)
                break
        heads = [w for w in words if w not in GENERIC]
        if not heads:
            continue
        m = Measure(words=words, head=heads[-1], aggregate=False)
        found.setdefault(m.phrase, (m, column_type(m, _compared(tokens, j))))
    return list(found.values())


def filter_values(question: str) -> list[tuple[Measure, str]]:
    """The value each text filter of ``question`` asks for, after "whose X is" ("whose
    sector is energy" -> (sector, "energy"), "whose nationality is Kraxryndia"); a filter by
    a number or a comparison has none here."""
    out = []
    for m, kind in filtered_by(question):
        if kind != "TEXT":
            continue
        found = re.search(rf"\bwhose\s+{re.escape(m.phrase)}\s+(?:is|are|was|were)\s+"
                          rf"({_NAME_RUN}|{_WORD_RUN})", question, re.I)
        if found:
            out.append((m, found[1].strip()))
    return out


# a filter's value: a name (capitalized words, "of" or "the" between) or up to three words
# in small letters before a joining word or a verb ("whose sector is energy and ...")
_NAME_RUN = "(?-i:" + name_run(r"[A-Z][\w'-]*", {"of", "the", "and"}, space=r"\s+",
                              at_most=1) + ")"
_STOP = r"(?:and|or|in|of|with|whose|who|that|has|have|had|is|are|was|were|does|did)\b"
_WORD_RUN = rf"(?-i:(?!{_STOP})[a-z][\w'-]*(?:\s+(?!{_STOP})[a-z][\w'-]*){{0,2}})"


# words between a copula and the value they say nothing of ("is at least 300", "is about $5")
_FILLERS = frozenset("at about around roughly approximately nearly almost some equal to usd "
                     "eur gbp $ € £".split())


def _numeric(word: str) -> bool:
    return word[:1].isdigit() or word in _COMPARING or word.startswith(("exceed", "surpass"))


def _compared(tokens: Sequence[str], j: int) -> bool:
    """The filter's value, from ``tokens[j]`` on, is a number or a comparison: a number or
    comparison among the few words before a copula ("surpassed 5 million", "in 2010 was"),
    else the first word after the copula but fillers ("is above 5", "is at least 300", "is
    $5 million"); not a number later in the question ("whose climate is arid have over 5
    museums")."""
    rest = [t.lower() for t in tokens[j:j + 8]]
    for k, t in enumerate(rest[:4]):
        if t in _COPULAS:
            return _numeric(next((v for v in rest[k + 1:] if v not in _FILLERS), ""))
        if _numeric(t):
            return True
        if k == 0 and t.endswith("ed"):   # "moved after 1990" dates the move, not the value
            return False
    return False


# "the percentage of laureates": a statistic, no attribute of an entity (as the phrase's
# head: "the share price" is one); "the first recipient of": a rank, with a role
_STATISTICS = frozenset("percentage percent proportion fraction share ratio rate majority "
                        "minority sum set kind sort group list".split())
_RANKS = frozenset("first last second third top bottom".split())
_ROLES = frozenset("recipient recipients winner winners laureate laureates holder holders "
                   "member members champion champions president chair founder owner "
                   "entrant entrants".split())


def asked_for(question: str) -> list[tuple[Measure, str]]:
    """The attribute ``question`` asks for of an entity ("What is the home institution of
    the laureate with ..."; "Who is the chief executive of ..."), with the type of column
    that holds it: a year or date by its words, else text. A measure ("What is the average
    population of ...") is :func:`measures`' and a name of a thing ("What is the Stedrurial
    Medal") none."""
    tokens = question_tokens(question)
    if len(tokens) < 4 or tokens[0].lower() not in ("what", "who") or \
            tokens[1].lower() not in _COPULAS or tokens[2].lower() != "the":
        return []
    words, j = _phrase(tokens, 3)
    heads = [w for w in words if w not in GENERIC]
    if not heads or j >= len(tokens) or tokens[j].lower() != "of" or \
            heads[-1] in _STATISTICS or (words[0] in _RANKS and heads[-1] in _ROLES):
        return []
    m = Measure(words=words, head=heads[-1], aggregate=False)
    return [(m, column_type(m, compared=False))]


def measured_columns(schema: Schema, question: str) -> list[tuple[str, str]]:
    """(table, column) for each column holding what ``question`` measures: a column whose
    name, description or unit shares the measure's head word, else the numeric columns
    (not keys) of a table named after it (``revenue.amount`` for "the highest revenue")."""
    out: list[tuple[str, str]] = []
    for m in measures(question):
        found = [(t.name, c.name) for t in schema.tables for c in t.columns
                 if head_in(m.head, column_text(c))]
        if not found:
            found = [(t.name, c.name) for t in schema.tables if head_in(m.head, t.name)
                     for c in t.columns if c.type in ("INT", "DOUBLE")
                     and c.name not in t.primary_key]
        out += [f for f in found if f not in out]
    return out


__all__ = ["GENERIC", "Measure", "asked_for", "column_text", "column_type", "content_words",
           "filter_values", "filtered_by", "filtered_words", "head_in", "measured_columns",
           "measures", "overlap", "question_tokens", "stem"]
