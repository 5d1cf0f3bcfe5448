"""Whether one clause says that an entity's relationship to another has ended.

:mod:`.ended` applies this to a chunk's rows (its docstring gives the whole rule and its
limits); here is the reading of one clause: the cues of an end (:data:`_ENDED`: "until it left
in 2005", "former member", "no longer part of", "withdrew from"), what each cue is about (the
group after it, a verb's object, the name before it) and whose end it is (the clause's
subject, an entity named just before it, someone of an entity, another entity of the table
that a word stands for: :func:`ends`), and where a text names an entity (:func:`naming`,
:func:`referring`). English only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quaderno.methods.docsage.normalize import (COMMON_ACRONYMS, NAME_JOINERS, NAME_PARTICLES,
                                                acronym_hits, initials, name_acronym,
                                                normalize_entity)

_ENDED = re.compile(
    r"\bformer(?:ly)?\s+(?:an?\s+)?(?:members?|parts?|affiliates?|participants?|"
    r"constituents?|signator(?:y|ies))\b"
    r"|\buntil\b[^.;]{0,120}?\b(?:left|withdrew|exited|resigned|departed|was expelled)\b"
    r"|\b(?:left|departed)(?:\s+in)?\s+\d{4}\b"
    r"|\b(?:left|departed)\s+the\s[^.;]{0,80}?\bin\s+\d{4}\b"
    r"|\b(?:gave|giving|gives)\s+up\s+(?:its\s+|their\s+|her\s+|his\s+)?membership\b"
    r"|\bno longer\s+(?:an?\s+)?(?:members?|part|affiliated|affiliates?|participa\w*|belongs?|"
    r"in|with|of)\b"
    r"|\bceased to be\s+(?:an?\s+)?(?:members?|part|affiliated|affiliates?|participants?)\b"
    r"|\b(?:withdrew from|was expelled from)\b", re.I)
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
_VERB = re.compile(r"\b(?:left|withdrew|exited|resigned|departed|expelled)\b", re.I)
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


def without(text: str, names: Sequence[str]) -> str:
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


def peers_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
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


def ends(clause: str, own: re.Pattern[str], ref: str,
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
