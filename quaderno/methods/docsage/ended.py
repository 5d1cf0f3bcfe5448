"""A relationship the text says has ended is not a current reference.

"Kelvo Trust was a company of the Drournlia Markets Commission from 1990 until it left in
2005" and a roster's "Former members: Kelvo Trust (left 2005)" both name the commission and the
company, and the measuring model wrote the commission into the company's ``commissionname``
from either: a former member then counts among "the companies of the commission"
(``docsage-measures-24-set2``). A schema that keys membership by a plain reference has no
place for its end, so such a cell is emptied (a correction quoting the clause,
``reason="ended"``), by code, when the chunk says so of this entity and this reference:

* a clause naming both the row's entity and the referenced one says the relationship ended
  ("until it left in 2005", "left the commission in 2005", "former member", "no longer a
  member", "ceased to be part"), and no clause naming both says a present one ("is",
  "joined", "since", "regulates"). The end must be theirs: not of another group ("a former
  member of parliament", "withdrew from the Kessel Forum"), not of something else ("until
  it withdrew the bid", "left the firm in 1990": the verb's object names neither the group
  nor a word for one), not of another entity named just before it ("Trondheim as a former
  member"), nor, when no subject is written before the cue, of another entity of the table
  named after this one with a word standing for it before the cue ("Kelvo Trust bought
  Brin Holdings, which left the commission in 2005", "... until it left": Brin Holdings';
  "Kelvo Trust bought Brin Holdings in 2001 and left ...": either may have, both are
  ended), or named only before it while this one comes after; nor of someone of an entity
  ("whose founder left", "its chief executive left", "the chief of Brin Holdings, who
  left"). After an aside between commas, the cue's subject is the name before the aside
  ("Kelvo Trust, owner of Brin Holdings, left": Kelvo Trust's); or
* the referenced entity is named in no clause with the row's entity but earlier in the text,
  and the row's entity is an item of a list after "former members" ("Former members: Kelvo
  Trust (left 2005)"; "York" is no item of "Former members: New York").

A name inside a longer name read beside it is no mention of it ("York" in "New York"). The
referenced entity may be written as its acronym of three to six capitals ("left the DMC in
2005"; :func:`referring`).
What the text says of one of them alone ("the commission no longer publishes reports", "the
bank's founder left in 1990") ends nothing. A clause is a sentence or a part of one between
semicolons, a "but" or a "while" ("Oslo stayed in the league, while Trondheim left in 2005"
ends nothing of Oslo's). A table with a column that can hold the end (a ``left_year``,
``until``, ``status`` or ``former`` token in a column name) keeps its references: the model
can say it there. Once ended, a cell stays ended: CLEAR's committee does not vote it back,
alias merging does not fill it from another row, and completion does not search for it.

A link table's references are its key (``league_city(league_name, city_name)``, the
measuring model's Set3 schema: two columns, each a reference): they cannot be emptied, and
the row says nothing but the relationship. :func:`ended_links` takes such a row out when the
same rule holds for one reference and the other, and returns it apart with an ``ended``
correction on the reference (its value kept), so the run can show what it left out and why;
CLEAR then leaves out every row of the same link read from other chunks
(:func:`without_ended_links`). A table named after the group itself
(``drournliamarketscommission(name, employees)``, the measuring model's Set2 draft: a row
per member, no reference) is the same link with one end in its name: :func:`ended_members`
takes out the rows of a member the text says has left, where the group is written as the
table is named (the chunk's title included), and a list of former members only in a text
calling a list the group's members. A link of three entities, or a key with a part that
is not a reference (a product, a season), is left as read. Known limits: the rule reads
English only; a chunk holding two rosters ends a former member of the second in the first
as well; an end said with a pronoun in a sentence of its own ("It left in 2005.") is not
read, and one after a name inside a longer one read beside it is not told apart ("Kelvo
Trust bought Kelvo Trust Bank, which left ..."); a group written with another word first
("Former DMC member"), with "&", or keyed by an id is not found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quaderno.methods.docsage.clauses import clauses
from quaderno.methods.docsage.group_names import (PROPER_NAME, compact, group_named,
                                                  roster_of)
from quaderno.methods.docsage.normalize import (COMMON_ACRONYMS, NAME_JOINERS, NAME_PARTICLES,
                                                acronym_hits, body_name, entity_key, entity_name,
                                                initials, key_columns, key_name,
                                                name_acronym, normalize_entity)
from quaderno.methods.docsage.rows import Correction, Row, noted
from quaderno.methods.docsage.schema import Schema, Table

_ENDED = re.compile(
    r"\bformer(?:ly)?\s+(?:an?\s+)?(?:members?|parts?|affiliates?|participants?|"
    r"constituents?|signator(?:y|ies))\b"
    r"|\buntil\b[^.;]{0,120}?\b(?:left|withdrew|exited|resigned|was expelled)\b"
    r"|\bleft(?:\s+in)?\s+\d{4}\b|\bleft\s+the\s[^.;]{0,80}?\bin\s+\d{4}\b"
    r"|\bno longer\s+(?:an?\s+)?(?:members?|part|affiliated|affiliates?|participa\w*|belongs?|"
    r"in|with|of)\b"
    r"|\bceased to be\s+(?:an?\s+)?(?:members?|part|affiliated|affiliates?|participants?)\b"
    r"|\b(?:withdrew from|was expelled from)\b", re.I)
# a clause that says a present relationship too is left alone
_CURRENT = re.compile(r"\b(?:joined|rejoined|became|remains|belongs|since|has been|"
                      r"regulat\w*|oversees|supervis\w*|governs|"
                      r"(?:is|are)(?!\s+(?:no longer|not)\b))\b", re.I)
_FORMER_LIST = re.compile(r"\bformer members?\b", re.I)
# what an end cue is about: the group after a membership word ("former member of the X"),
# the object after a verb ("left the X", "withdrew the bid"), the name just before it
_MEMBER_CUE = re.compile(r"(?:member|part|affiliate|participant|constituent|signator)\w*$",
                         re.I)
_PREP_CUE = re.compile(r"\b(?:in|with|of|from)$", re.I)
# "former member(s)" as what a verb acts on ("hired a former member of the commission",
# "appointed two former members"): someone else, not the entity the clause names
_OBJECT_OF = re.compile(r"(?<![\w'-])(?:hired|hires?|hiring|employed|employs?|employing|"
                        r"appointed|appoints?|appointing|met|meets?|hosted|hosts?|hosting|"
                        r"welcomed|welcomes?|recruited|recruits?|invited|invites?|took|"
                        r"brought)\s+(?:(?:an?|the|two|three|several|some|many|its|their|"
                        r"his|her)\s+)?$")
_GROUP_AFTER = re.compile(r"\s+(?:of|in)\s+(?:the\s+)?([\w'-]+)", re.I)
_AFTER_PREP = re.compile(r"\s+(?:the\s+)?([\w'-]+)", re.I)
_OBJECT_AFTER = re.compile(r"\s+(?:(?:from|for)\s+)?(?:(?:the|an?|its|their|his|her)\s+)?"
                           r"([\w'-]+)", re.I)
# the subject a cue follows: "<subject> as / is / was / , (a) former member"
_SUBJECT_END = re.compile(r"(?:[ \t]+(?:as|is|was|are|were)|,)[ \t]+(?:an?[ \t]+)?$")
# a subject list read backwards: capitalized words and what joins names ("Bank of Kelvo",
# "Kelvo & Sons", "Kelvo Trust and Varn Holdings")
_SUBJECT_WORD = re.compile(r"(?:[A-Z\u00c0-\u00de][\w'\u2019-]*|"
                           + "|".join(sorted(NAME_JOINERS | NAME_PARTICLES | {"&", ","}))
                           + r")$")
_VERB = re.compile(r"\b(?:left|withdrew|exited|resigned|expelled)\b", re.I)
_WORD = re.compile(r"[\w'-]+")
_STOPWORDS = frozenset({"of", "the", "and", "for", "in", "on", "a", "an"})
# what may follow a cue and still be about the group: a word for it ("left the commission
# in 2005"), a pronoun ("expelled from it"), or no object at all ("left in 2005")
_GROUP_NOUNS = frozenset({"group", "body", "association", "organisation", "organization",
                          "club", "alliance", "network", "league", "commission", "board",
                          "union", "federation", "council", "society", "consortium",
                          "medal", "award", "prize", "committee", "members", "membership",
                          "cartel", "exchange", "coalition", "bloc", "guild", "syndicate",
                          "pact", "treaty", "forum", "it", "them", "in", "after", "before",
                          "during", "when", "once"})
# how a list names an item: after its colon, a comma, "and" or "include" ("Former members:
# Kelvo Trust (left 2005), ..."), never inside a longer name ("New York" is not "York")
_ITEM_BEFORE = r"(?:[:,;]|\b(?:and|include[sd]?|are|were|was))\s*"
_ITEM_AFTER = r"\s*(?=$|[(,;.]|\band\b)"
# column-name tokens for the end of a relationship ("left_year", "status", "member_until")
_END_TOKEN = re.compile(r"(?:^|_)(?:left|until|end|ended|exit|exited|former|status|active|"
                        r"current|to)(?:_|$)", re.I)


def naming(name: str) -> re.Pattern[str]:
    """Where a text writes ``name`` as a whole, case aside."""
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.I)


def referring(name: str, names: Sequence[str] = ()) -> re.Pattern[str]:
    """Where a text names a referenced entity: :func:`naming` ``name``, or writes its
    acronym of three to six capitals as a word ("DMC" for the Drournlia Markets Commission,
    the rule of :func:`.normalize.acronym_hits`; "dmc" and "DMCA" are not it). Not an
    acronym of :data:`.normalize.COMMON_ACRONYMS` ("CEO", "USD"), nor one another of
    ``names`` (the entities read beside it) shares: "DMC" is then neither's."""
    norm = normalize_entity(name)
    acronym = name_acronym(norm)
    if not 3 <= len(acronym) <= 6 or not acronym.isalpha() or acronym in COMMON_ACRONYMS \
            or acronym_hits(acronym, {normalize_entity(n) for n in names} - {norm}):
        return naming(name)
    return re.compile(rf"(?i:(?<!\w){re.escape(name)}(?!\w))|(?<![\w.]){acronym.upper()}"
                      r"(?!\w|\.\w)")


def _without(text: str, names: Sequence[str]) -> str:
    """``text`` with every mention of ``names`` blanked (the same length)."""
    for n in names:
        text = naming(n).sub(lambda m: " " * len(m[0]), text)
    return text


# an aside after a name, between commas: "Kelvo Trust, once a partner of Brin Holdings, was",
# "Kelvo Trust, Brin Holdings' owner, left"
_ASIDE = re.compile(r"\s*,(?=\s+(?:[a-z]|[^\W\d_][^,;]*?['\u2019]s?\s+[a-z]))[^,;]*,")
# a verb's subject that is someone of an entity, not the entity: "whose founder left", "its
# chief executive later left", "Brin Holdings' founder left" (up to three lowercase words,
# none a conjunction or pronoun starting a clause of its own: "kept its seat until it left"
# is the entity's end; and not where :data:`_JOINED` ties it to the member's own name)
_SOMEONE_OF = re.compile(
    r"(?:\b(?:its|their|whose|his|her)|\w['\u2019]s?)"
    r"(?:[ \t]+(?!(?:and|or|but|then|so|yet|both|all|each|it|they|he|she|until|when|"
    r"while|because|which|who|that)\b)[a-z][\w-]*){1,3}[ \t]+$")
# what joins a possessive's owner to the entity named just before it, so both left: "Kelvo
# Trust and its subsidiary", "... and all its", "... as well as its", "... along with its"
_JOINED = re.compile(r"[ \t]*,?[ \t]*(?:and|or|&|plus|alongside|(?:along|together)[ \t]+with|"
                     r"with|as[ \t]+well[ \t]+as)(?:[ \t]+(?:all|both|each|most|some|one)"
                     r"(?:[ \t]+of)?)?[ \t]+", re.I)
# ... or a person named by what they are of an entity: "hired the chief of Brin Holdings,
# who left" (the name at most 80 characters: a long clause is matched in linear time)
_PERSON_OF = re.compile(r"\b[a-z][\w-]*[ \t]+of[ \t]+(?:the[ \t]+)?[^\W\d_a-z][^,;]{0,80}?,"
                        r"[ \t]*(?:who|whom)(?:[ \t]+[a-z][\w-]*)?[ \t]+$")


# what opens an apposition after a name: "," or "(AL)," and up to three words but "of"
# (", a", ", then a", ", an emeritus")
_APPOSITION = re.compile(r"(?:[ \t]*\([^()]{1,40}\))?,[ \t]*(?:(?!of\b)[a-z][\w-]*[ \t]+){0,3}$")


def _subject(clause: str, end: int) -> str | None:
    """The names a cue at ``end`` follows as its subject ("Kelvo Trust and Varn Holdings
    were former members"): the run of capitalized words and joiners before "as", "is",
    "was" or a comma; None when the cue follows none."""
    sep = _SUBJECT_END.search(clause, 0, end)
    if sep is None:
        return None
    before = sep.start()
    # "Kelvo Trust, owner of Brin Holdings, left": the subject is before the aside
    opening = clause.rfind(",", 0, before)
    if opening >= 0 and (aside := _ASIDE.match(clause, opening)) and aside.end() == before + 1:
        before = opening
    words = re.findall(r"[^\s,]+|,", clause[:before])
    run: list[str] = []
    while words and _SUBJECT_WORD.match(words[-1]):
        run.insert(0, words.pop())
    lead = []
    while run and not run[0][:1].isupper():       # "of the Drournlia ...": the name
        lead.append(run.pop(0))
    if before != sep.start() and lead[:1] == [","] and "," in words:
        # "X, a bank, and Y, a fund, left": a list whose items have asides (the words
        # between the last comma and this one are an aside after a name)
        k = len(words) - 1 - words[::-1].index(",")
        if k > 0 and words[k - 1][:1].isupper() and k + 1 < len(words) and \
                not words[k + 1][:1].isupper():
            return None
    return " ".join(run) or None


# what joins the names of one list: "Kelvo Trust, Ulm Savings and Brin Holdings left ..."
_LIST_JOIN = re.compile(r"(?:[\s,&]|\band\b|\bor\b|\bas well as\b|\bboth\b)*", re.I)
# what stands for the entity named just before a cue: "Brin Holdings, which left", "...
# Brin Holdings until it left"; without one ("bought Brin Holdings in 2001 and left", "and
# its partner Brin Holdings left") the clause's subject may be the one that left
_POINTER = re.compile(r"\b(?:which|who|whom|whose|that|it|they|its|their)\b", re.I)


def _peers(names: Sequence[str]) -> re.Pattern[str] | None:
    """Where a text names one of ``names`` (longest first, so that "Kelvo Trust Bank" is
    not read as "Kelvo Trust"); None for none. Compiled once per chunk's rows."""
    if not names:
        return None
    ordered = sorted(set(names), key=len, reverse=True)
    return re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, ordered))})(?!\w)", re.I)


def _of_another(clause: str, at: int, own: re.Pattern[str], peers: re.Pattern[str],
                skip: frozenset[str] = frozenset(),
                within: Sequence[re.Pattern[str]] = ()) -> bool:
    """The end at ``at`` (a cue with no subject written before it) is another entity's of
    the table: one named only before it while this one is named only after it ("Brin
    Holdings left ... and sold Kelvo Trust"), or one named after this one with a word
    standing for it between it and the cue (:data:`_POINTER`: "Kelvo Trust bought Brin
    Holdings, which left ..."), not in one list with this one ("Kelvo Trust and Brin
    Holdings, which both left ..."). One named in an aside after this entity ("Kelvo Trust,
    once a partner of Brin Holdings, was ... until it left") is not the clause's subject.
    ``skip``: the names (folded) of the entity and its reference among the peers;
    ``within``: where the clause names them, inside which a peer's name is theirs ("Oslo"
    in "Oslo League")."""
    inside = [m.span() for p in within for m in p.finditer(clause, 0, at)]

    def theirs_inside(m: re.Match[str]) -> bool:
        return any(a <= m.start() and m.end() <= b and (a, b) != m.span() for a, b in inside)
    named = sorted([(m.start(), m.end(), True) for m in own.finditer(clause, 0, at)
                    if not theirs_inside(m)] +
                   [(m.start(), m.end(), False) for m in peers.finditer(clause, 0, at)
                    if m[0].casefold() not in skip and not theirs_inside(m)])
    kept: list[tuple[int, int, bool]] = []
    aside_end = -1
    for start, end, is_own in named:
        if start < aside_end:
            continue                      # in an aside after a name: not the subject
        kept.append((start, end, is_own))
        if (aside := _ASIDE.match(clause, end)) and aside.end() <= at:
            aside_end = aside.end()
    mine = [end for _, end, is_own in kept if is_own]
    theirs = [(start, end) for start, end, is_own in kept if not is_own]
    if not theirs or (mine and theirs[-1][0] < mine[-1]):
        return False                      # none named, or this entity last
    if not mine:
        return True
    if not _POINTER.search(clause, theirs[-1][1], at):
        return False                      # "... and left": maybe the clause's subject
    return not _LIST_JOIN.fullmatch(peers.sub("", clause[mine[-1]:theirs[-1][0]]))


def _ends(clause: str, own: re.Pattern[str], ref: str,
          peers: re.Pattern[str] | None = None,
          member: re.Pattern[str] | None = None, skip: frozenset[str] = frozenset(),
          within: Sequence[re.Pattern[str]] = ()) -> bool:
    """Whether ``clause``, naming the entity (``own``) and ``ref``, says an end of theirs: a
    cue of :data:`_ENDED` that is not about another group ("a former member of parliament",
    "left the firm in 1990", "withdrew from the tender": what follows is neither a word of
    ``ref``, its initials, a group noun nor a pronoun for it) nor about another entity
    named just before it ("Trondheim as a former member"; "The Kelvo Trust", "Bank of
    Kelvo" and "Kelvo Trust and Varn Holdings" are Kelvo Trust's), nor a former member
    a verb acts on ("hired a former member of the commission": someone else), nor what
    someone of an entity did (:data:`_SOMEONE_OF`, :data:`_PERSON_OF`); with no
    subject written before the cue, nor of another of ``peers`` named last before it
    (:func:`_of_another`; ``member``, where the peers are the reference's: its mention)."""
    named = _WORD.findall(ref)
    words = {w.lower() for w in named} - _STOPWORDS | _GROUP_NOUNS | \
        {initials([w for w in named if w[:1].isupper()]).lower()}
    for m in _ENDED.finditer(clause):
        verb = _VERB.search(m[0])
        if _PREP_CUE.search(m[0]):
            after = _AFTER_PREP.match(clause, m.end())
        elif _MEMBER_CUE.search(m[0]) or verb is None:
            after = _GROUP_AFTER.match(clause, m.end())
        else:                              # "left the firm in 1990": the verb's object
            after = _OBJECT_AFTER.match(clause, m.start() + verb.end())
        if after and after[1].lower() not in words and not after[1].isdigit():
            continue                       # of another group, or of something else
        if m[0][:1].lower() == "f" and _OBJECT_OF.search(clause, 0, m.start()):
            continue                       # a former member someone hired or met
        at = m.start() + verb.start() if verb is not None else m.start()
        person = _PERSON_OF.search(clause, 0, at) if verb is not None else None
        if person is not None:
            # "Anna Li, a professor of Ulm College, who left": an apposition of this entity
            lead = _APPOSITION.search(clause, 0, person.start())
            if lead is not None and any(o.end() == lead.start() for o in
                                        (member or own).finditer(clause, 0, lead.start())):
                person = None
        someone = _SOMEONE_OF.search(clause, 0, at) if verb is not None else None
        # the member's own name (a link read from its group's side: the reference's)
        if someone is not None and any(_JOINED.fullmatch(clause, o.end(), someone.start())
                                       for o in (member or own).finditer(clause, 0,
                                                                         someone.start())):
            someone = None                 # "Kelvo Trust and its subsidiary left": both
        if verb is not None and (someone is not None or person is not None):
            continue                       # "whose founder left": someone of an entity
        subject = _subject(clause, m.start())
        if subject is not None and not own.search(subject) and \
                not naming(subject).search(ref):
            continue                       # said of another entity
        if subject is None and peers is not None and \
                _of_another(clause, at, member or own, peers, skip, within):
            continue                       # "..., which left": the entity named last
        return True
    return False


def _ended(parts: Sequence[str], entity: str, ref: str, names: Sequence[str] = (),
           peers: re.Pattern[str] | None = None, peers_of_ref: bool = False) -> str | None:
    """The clause saying the relationship of ``entity`` to ``ref`` ended, or None.
    ``names``: the entities read beside them; one that holds the name of either ("New
    York" for "York") is not a mention of it. ``peers``: the other members, of whom a
    clause may say the end (:func:`_peers`, :func:`_of_another`): ``entity``'s, or with
    ``peers_of_ref`` (a link read from its group's side) ``ref``'s."""
    own, other = naming(entity), referring(ref, names)
    member = other if peers_of_ref else own
    skip = frozenset({entity.casefold(), ref.casefold()})
    longer = [n for n in names if len(n) > min(len(entity), len(ref))
              and n.lower() not in (entity.lower(), ref.lower())
              and (own.search(n) or other.search(n))]
    if longer:
        parts = [_without(c, longer) for c in parts]
    # a name inside the other's is no mention of it ("Oslo" in "the Oslo League")
    both = [c for c in parts
            if own.search(_without(c, [ref]) if own.search(ref) else c)
            and other.search(_without(c, [entity]) if other.search(entity) else c)]
    if both:
        if all(_ends(c, own, ref, peers, member, skip, (own, other))
               and not _CURRENT.search(c) for c in both):
            return both[0]
        return None
    # "Former members: Kelvo Trust (left 2005), ...", in a text that names ``ref`` before
    item = re.compile(_ITEM_BEFORE + re.escape(entity) + _ITEM_AFTER, re.I)
    for i, c in enumerate(parts):
        listed = _FORMER_LIST.search(c)
        if listed and item.search(c, listed.end()) and any(other.search(p) for p in parts[:i]):
            return c
    return None


def ends_relationships(table: Table) -> bool:
    """False for a table with a column that can hold a relationship's end."""
    return bool(table.foreign_keys) and not any(_END_TOKEN.search(c)
                                                for c in table.column_names)


def ended_references(table: Table, rows: Sequence[Row], text: str) -> list[Row]:
    """``rows`` of ``table`` read from ``text``, each reference the text says has ended
    emptied with a correction quoting the clause (module docstring)."""
    if not ends_relationships(table):
        return list(rows)
    parts = clauses(text)
    keys = key_columns(table)
    names = sorted({n for r in rows for n in (key_name(table, r.values),
                                              *(entity_name(r.values.get(fk.cols[0]))
                                                for fk in table.foreign_keys)) if n})
    peers = _peers([n for r in rows if (n := key_name(table, r.values))])
    out = []
    for row in rows:
        own = key_name(table, row.values)
        changes = []
        for fk in table.foreign_keys:
            col = fk.cols[0]
            ref = entity_name(row.values.get(col))
            if own is None or ref is None or len(fk.cols) != 1 or col in keys:
                continue
            quote = _ended(parts, own, ref, names, peers)
            if quote is not None:
                changes.append(_end(col, row.values[col], quote))
        if changes:
            row = noted(row, changes, values={**row.values,
                                               **{c.column: None for c in changes}})
        out.append(row)
    return out


def ended_links(table: Table, rows: Sequence[Row], text: str) -> tuple[list[Row], list[Row]]:
    """(kept, ended): ``rows`` of ``table`` read from ``text``, with apart those whose key
    holds a reference the text says has ended (module docstring); each ended row carries
    an ``ended`` correction quoting the clause, its values unchanged."""
    if not ends_relationships(table):
        return list(rows), []
    keys = key_columns(table)
    linked = [fk.cols[0] for fk in table.foreign_keys if len(fk.cols) == 1
              and fk.cols[0] in keys]
    if len(keys) != 2 or sorted(linked) != sorted(keys):
        return list(rows), []         # not a link of two entities
    parts = clauses(text)
    names = sorted({n for r in rows for k in keys if (n := entity_name(r.values.get(k)))})
    pairs = [(col, next(k for k in keys if k != col)) for col in linked]  # (reference, rest)
    sides = {k: [n for r in rows if (n := entity_name(r.values.get(k)))] for k in keys}
    peers = {k: _peers(v) for k, v in sides.items()}
    # the members' side: the one with more names ("city_name" beside one "league_name"),
    # else the one with fewer names of bodies ("North League"), chosen once, so that both
    # readings of a row take their peers from it
    members = max(keys, key=lambda k: (len(set(sides[k])),
                                       -sum(bool(body_name(n)) for n in set(sides[k]))))
    kept, ended = [], []
    for row in rows:
        correction = None
        for col, rest in pairs:
            ref, own = entity_name(row.values.get(col)), entity_name(row.values.get(rest))
            by_ref = col == members
            quote = _ended(parts, own, ref, names, peers[col if by_ref else rest],
                           by_ref) if own and ref else None
            if quote is not None:
                correction = _end(col, row.values[col], quote)
                break
        if correction is None:
            kept.append(row)
        else:
            ended.append(noted(row, [correction]))
    return kept, ended


_JOINER = "|".join(sorted(NAME_JOINERS))


def ended_members(table: Table, rows: Sequence[Row], text: str) -> tuple[list[Row], list[Row]]:
    """(kept, ended): ``rows`` of ``table``, a table of a group's members (named after the
    group :func:`group_named` finds in ``text``), with apart those whose entity the text
    says has left the group, by the rule a reference's end follows (module docstring:
    "Former members: Vykaexfun Holdings (left 1992)"; "Kelvo Trust was a member of the
    Drournlia Markets Commission until it left in 2005"); each ended row carries an
    ``ended`` correction on its key, its values unchanged. A table with a column that can
    hold the end keeps its rows, and the group's own row is never set apart."""
    if any(_END_TOKEN.search(c) for c in table.column_names):
        return list(rows), []
    group = group_named(table, text)
    if group is None:
        return list(rows), []
    parts = clauses(text)
    # a list of former members ends membership of this group only in a text that calls
    # a list the group's members ("Members of the Drournlia Markets Commission include",
    # "Stedrurial Medal — members, part 1"), not one that lists the group among others'
    if not roster_of(group).search(text):
        parts = [c for c in parts if not _FORMER_LIST.search(c)]
    # a name written around the group's, with no "of" or "the" between
    # ("Drournlia Markets Commission Tower"), is no mention of it
    mention = naming(group)
    longer = {n for m in PROPER_NAME.finditer(text)
              for n in re.split(rf"^The\s+|\s+(?:(?:{_JOINER})\s+)+", m[0])
              if len(n) > len(group) and mention.search(n)}
    members = {n for r in rows if (n := key_name(table, r.values))}
    names = sorted({*members, group, *longer})
    peers = _peers(sorted(members))
    key = key_columns(table)[0]
    kept, ended = [], []
    for row in rows:
        own = key_name(table, row.values)
        quote = _ended(parts, own, group, names, peers) if own and \
            compact(own) != compact(group) else None
        if quote is None:
            kept.append(row)
        else:
            ended.append(noted(row, [_end(key, row.values.get(key), quote)]))
    return kept, ended


def without_ended_links(schema: Schema, rows: Sequence[Row],
                        ended: Sequence[Row]) -> tuple[list[Row], list[Row]]:
    """(kept, dropped): ``rows`` without the link rows another chunk says have ended, and
    without the rows of a member another chunk says has left (the same key as one of
    ``ended``, entity names compared normalized), each dropped row given
    that chunk's ``ended`` correction. Whichever chunk says a relationship ended, it stays
    ended, as an emptied reference does."""
    said: dict[tuple[str, tuple[str, ...]], Correction] = {}
    for r in ended:
        table = schema.table(r.table)
        if table is not None:
            said.setdefault((r.table, entity_key(table, r.values)),
                            ended_by(r).model_copy(update={"evidence_chunk":
                                                           r.provenance.chunk_id}))
    kept, dropped = [], []
    for r in rows:
        table = schema.table(r.table)
        hit = said.get((r.table, entity_key(table, r.values))) if table and said else None
        if hit is None:
            kept.append(r)
        else:
            dropped.append(noted(r, [hit]))
    return kept, dropped


def _end(column: str, old: object, quote: str) -> Correction:
    """The correction recording that the text ends ``column``'s relationship."""
    return Correction(column=column, old=old, new=None, reason="ended", by="as-stated",
                      evidence_quote=quote[:300])


def ended_by(row: Row) -> Correction:
    """The ``ended`` correction of an ended link row (the last, if several)."""
    return next(c for c in reversed(row.provenance.corrections) if c.reason == "ended")


def ended_columns(row: Row) -> set[str]:
    """The columns of ``row`` emptied because the text said the relationship ended."""
    return {c.column for c in row.provenance.corrections if c.reason == "ended"}


__all__ = ["ended_by", "ended_columns", "ended_links", "ended_members", "ended_references",
           "ends_relationships", "naming", "referring", "without_ended_links"]
