"""The renderer's paraphrase bank and number formats.

Every realization is a ``(template family, template)`` pair. Template families 0–3 split
the bank for the template-leak gate: a regex extractor built from the *train* families
(:data:`TRAIN_TEMPLATES`) is scored on documents rendered from the *held-out* ones
(:data:`HELDOUT_TEMPLATES`). Placeholders: ``{ent}`` the entity as written (name, alias or
"the institution"), ``{v}`` the value as written, ``{noun}``, ``{event}``, ``{event_noun}``,
``{label}``, ``{phrase}`` (an attribute's own phrase with its ``{v}`` filled), ``{role}``,
``{link}``, ``{topic}``, ``{join}``.

Two more families stand apart from that split. Family 4 (:data:`TEST_TEMPLATES`) was written
after DocSage's rules and renders the held-out benchmark; it has since been read while
analysing that benchmark's failures, so it is no longer unseen. Family 5
(:data:`FRESH_TEMPLATES`) was written after that, by a different hand, without reading the
method's rules: rules drawn from family-4 failures are judged on its wording, which nobody
may read while writing rules. Each of the two rewords, besides its bank entries, the sentences
families 0-3 share (:data:`TEST_FIXED`, :data:`FRESH_FIXED`, keyed by family in
:data:`FIXED`).
"""

from __future__ import annotations

import random

from quaderno.eval.synth.families import Attr

TRAIN_TEMPLATES: tuple[int, ...] = (0, 1)
HELDOUT_TEMPLATES: tuple[int, ...] = (2, 3)
ALL_TEMPLATES: tuple[int, ...] = (0, 1, 2, 3)
#: written after DocSage's rules were, and never read while developing them: the held-out
#: benchmark renders with this family alone, which also rewords what families 0-3 share (a
#: member's introduction, rosters, former members, namesakes, corrections, denials, old
#: figures; :data:`TEST_FIXED`), since rules were written against those sentences too
TEST_TEMPLATES: tuple[int, ...] = (4,)
#: written after family 4 had been read for failure analysis, and never read while writing
#: rules: the fresh benchmark renders with this family alone, which rewords the shared
#: sentences too (:data:`FRESH_FIXED`), and also the filler and a namesake's first sentence
FRESH_TEMPLATES: tuple[int, ...] = (5,)
KNOWN_TEMPLATES: tuple[int, ...] = ALL_TEMPLATES + TEST_TEMPLATES + FRESH_TEMPLATES

Bank = tuple[tuple[int, str], ...]

YEAR: Bank = (
    (0, "{ent} {event} in {v}."), (0, "{ent} {event} in the year {v}."),
    (1, "The {event_noun} of {ent} dates to {v}."),
    (1, "{ent} gives {v} as its {event_noun} year."),
    (2, "It was in {v} that {ent} {event}."), (2, "{v} marks the {event_noun} of {ent}."),
    (3, "Records give {v} for the {event_noun} of {ent}."),
    (3, "{ent} has a {event_noun} year of {v}, the archive shows."),
    (4, "The {event_noun} of {ent} took place in {v}."),
    (4, "The year {v} saw the {event_noun} of {ent}."),
    (5, "{v} is when {ent} {event}."), (5, "{ent} {event} back in {v}."),
)
COUNT: Bank = (
    (0, "{ent} has {v} {noun}."), (0, "{ent} counts {v} {noun}."),
    (1, "The number of {noun} at {ent} is {v}."), (1, "{ent} reports {v} {noun}."),
    (2, "With {v} {noun}, {ent} sits among its peers."),
    (2, "Some {v} {noun} are associated with {ent}."),
    (3, "A total of {v} {noun} was recorded for {ent}."),
    (3, "Tallies of {noun} put {ent} at {v}."),
    (4, "The count for {ent} stands at {v} {noun}."),
    (4, "In total, {v} {noun} belong to {ent}."),
    # family 5 opens count and money sentences with {ent} or a word the renderer lowers
    # after a "current" lead (render._LOWER_LEADS)
    (5, "{ent} numbers {v} {noun} in all."),
    (5, "A count of {v} {noun} is logged for {ent}."),
    (5, "At last count, {ent} had {v} {noun}."),
)
MONEY: Bank = (
    (0, "{ent} has {noun_a} of {v}."), (0, "{ent} reported {noun_a} of {v}."),
    (1, "The {noun} of {ent} amounts to {v}."), (1, "{ent} states its {noun} as {v}."),
    (2, "At {v}, the {noun} of {ent} draws attention."), (2, "{v} is the {noun} stated for {ent}."),
    (3, "Figures put the {noun} of {ent} at {v}."), (3, "{ent} disclosed {v} as {noun}."),
    (4, "A figure of {v} is given as the {noun} of {ent}."),
    (4, "The latest statement gives {noun_a} of {v} for {ent}."),
    (5, "{ent} carries {noun_a} of {v}."),
    (5, "A sum of {v} makes up the {noun} of {ent}."),
)
CATEGORY: Bank = (
    (0, "{ent} {phrase}."), (1, "According to the profile, {ent} {phrase}."),
    (2, "Observers note that {ent} {phrase}."),
    (3, "As for {label}, {ent} is recorded under {v}."),
    (3, "{label_cap}: {v}, in the case of {ent}."),
    (4, "On file, the {label} of {ent} is {v}."),
    (4, "Regarding {ent}, the {label} given is {v}."),
    (5, "{label_cap} registered for {ent}: {v}."), (5, "Files on {ent} give {v} as the {label}."),
    (5, "The {label} entered for {ent} reads {v}."),
)
LINK: Bank = (
    (0, "The {role} of {ent} is {link}."), (0, "{ent} lists {link} as its {role}."),
    (1, "{link} serves as {role} for {ent}."), (1, "{ent} names {link} as {role}."),
    (2, "{ent}, whose {role} is {link}, keeps a low profile."),
    (2, "{link} acts as the {role} behind {ent}."),
    (3, "Records connect {ent} to {link} as its {role}."), (3, "{ent} reports to {link} ({role})."),
    (4, "On record as the {role} of {ent}: {link}."), (4, "For {ent}, the {role} is {link}."),
    (5, "Linked {role} for {ent}: {link}."), (5, "{link} is the {role} tied to {ent}."),
)
JOIN: Bank = (
    (0, "{ent} {join} the {topic} in {v}."), (0, "{ent} has been part of the {topic} since {v}."),
    (1, "The {topic} admitted {ent} in {v}."), (1, "{ent} became a member of the {topic} in {v}."),
    (2, "Since {v}, {ent} belongs to the {topic}."), (2, "In {v} {ent} entered the {topic}."),
    (3, "Membership of {ent} in the {topic} began in {v}."),
    (3, "{ent} was welcomed into the {topic} in {v}."),
    (4, "{ent} gained membership of the {topic} in {v}."),
    (4, "The {topic} has counted {ent} among its members since {v}."),
    (5, "{ent} has belonged to the {topic} from {v} onward."),
    (5, "Entry into the {topic} came in {v} for {ent}."),
)
CORRECTION = (
    "An earlier report gave the {event_noun} year of {ent} as {wrong}; the correct year is {v}.",
    "Correction: {ent} {event} in {v}, not in {wrong} as previously stated.",
    "Contrary to the often repeated {wrong}, {ent} {event} in {v}.",
)
OLD_VALUE = ("In {year}, {ent} had {v} {noun}.", "Back in {year} the figure for {ent} was {v} "
             "{noun}.", "A {year} survey counted {v} {noun} at {ent}.")
OLD_MONEY = ("In {year}, the {noun} of {ent} was {v}.", "Back in {year}, {ent} reported {v} as "
             "{noun}.", "A {year} filing put the {noun} of {ent} at {v}.")
NEGATED = ("Claims that {ent} has {v} {noun} are unfounded.",
           "Contrary to rumours, {ent} does not have {v} {noun}.",
           "A figure of {v} {noun} circulating for {ent} is wrong.")
NEGATED_MONEY = ("Reports of {v} as the {noun} of {ent} were denied.",
                 "It is not true that the {noun} of {ent} reached {v}.")
CURRENT = ("As of {now}, ", "Latest figures ({now}): ", "Updated in {now}: ")
#: the test family's wording of what families 0-3 write one way (:data:`TEST_TEMPLATES`)
TEST_FIXED: dict[str, tuple[str, ...]] = {
    "intro": ("The {topic} lists {intro} as {member_a}.",),
    "former": ("{ent} had been {member_a} of the {topic} since {joined}; that membership "
               "ended in {left}.",
               "{ent} gave up membership of the {topic} in {left}, after joining in {joined}."),
    "namesake": (" Despite the shared name, there is no tie to the {topic}.",),
    "rival": ("{ent} is {member_a} of the {rival} and has never belonged to the {topic}.",),
    "roster": ("The {topic} ({alias}) counts the following among its members: {names}.",),
    "formers": ("Past members: {items}.",),
    "former_item": ("{ent} (departed {left})",),
    "correction": ("{ent} {event} in {v}; the year {wrong} found elsewhere is a misprint.",
                   "The often cited {wrong} is wrong: {ent} {event} in {v}."),
    "negated": ("No source supports the claim that {ent} has {v} {noun}.",
                "The figure of {v} {noun} once attributed to {ent} was withdrawn."),
    "negated_money": ("The supposed {noun} of {v} for {ent} was never confirmed.",),
    "old_value": ("{ent} had {v} {noun} in {year}.",),
    "old_money": ("For {year}, the {noun} on record for {ent} was {v}.",),
    "dated": ("(Issued {year}.) ",),
    "roster_title": ("{topic}: membership list {n}",),
    "current": ("At the latest count ({now}), ", "Most recently ({now}), "),
    "holder": ("{holder} has {ent} as its {role}.",),
    "listed": ("{ent} appears as {role_a} in the files of the {topic}.",),
}
#: the fresh family's wording of the same sentences (:data:`FRESH_TEMPLATES`), plus two kinds
#: family 4 left as families 0-3 write them: ``filler`` (:data:`FILLER`) and
#: ``namesake_head`` (a same-name entity's first sentence)
FRESH_FIXED: dict[str, tuple[str, ...]] = {
    "intro": ("Within the {topic}, {intro} holds the standing of {member_a}.",
              "{intro} is presently recognised by the {topic} as {member_a}."),
    "former": ("{ent} held membership in the {topic} only from {joined} to {left}.",
               "Having joined the {topic} in {joined}, {ent} withdrew from it in {left}."),
    "namesake": (" The {topic} has a like-named {member}; the two are unrelated.",
                 " No link exists to the like-named {member} in the {topic}."),
    "namesake_head": ("{ent} is {member_a} within the {rival}.",),
    "rival": ("{ent} is enrolled with the {rival} as {member_a} and has no connection to the "
              "{topic}.",
              "{ent}, {member_a} of the {rival}, stands outside the {topic}."),
    "roster": ("Current membership of the {topic} ({alias}), in no particular order: {names}.",
               "On the {topic} ({alias}) roll at present: {names}."),
    "formers": ("Members who have since withdrawn: {items}.",),
    "former_item": ("{ent} (withdrew in {left})",),
    "correction": ("Listings giving {wrong} as the {event_noun} year of {ent} are mistaken; "
                   "the actual year was {v}.",
                   "{v}, not {wrong}, is the {event_noun} year of {ent}; older listings have it "
                   "wrong."),
    "negated": ("Reports crediting {ent} with {v} {noun} are incorrect.",
                "{ent} was wrongly credited with {v} {noun}."),
    "negated_money": ("Word that the {noun} of {ent} hit {v} proved false.",
                      "A reported {v} {noun} for {ent} turned out to be wrong."),
    "old_value": ("{ent} was reported with {v} {noun} in {year}.",
                  "When surveyed in {year}, {ent} showed {v} {noun}."),
    "old_money": ("{v} was the {noun} of {ent} in {year}.",
                  "Accounts for {year} show {v} as the {noun} of {ent}."),
    "dated": ("[Archive, {year}] ", "From the {year} files: "),
    "roster_title": ("{topic} roll, sheet {n}",),
    "current": ("Per the {now} figures, ", "Going by {now} data, "),
    "holder": ("{ent} serves {holder} in the role of {role}.",),
    "listed": ("{ent} is on file with the {topic} in the capacity of {role_a}.",),
    "filler": ("{ent} took part in a regional heritage weekend last spring.",
               "Plans to refurbish a reading room at {ent} are still being drafted.",
               "A documentary crew spent a week with {ent} in the autumn.",
               "{ent} answered a survey on energy use earlier this year.",
               "Visitors can ask for a guided tour of {ent} by letter.",
               "The website of {ent} was redesigned after a long pause.",
               "Letters to {ent} are usually answered within a few weeks.",
               "A mural celebrating {ent} was unveiled in a nearby square."),
}
#: the shared sentences' wording by family; a family not here writes them as families 0-3 do
FIXED: dict[int, dict[str, tuple[str, ...]]] = {4: TEST_FIXED, 5: FRESH_FIXED}
FILLER = (
    "{ent} hosts an annual open day that draws visitors from the region.",
    "Local newspapers regularly cover events at {ent}.",
    "A new visitor centre near {ent} is under discussion.",
    "{ent} publishes a quarterly newsletter.",
    "The board of {ent} met twice this year.",
    "Several partnerships of {ent} were renewed without change.",
    "{ent} maintains an archive that is open to researchers.",
    "Volunteers support many of the activities of {ent}.",
)
ROLE_WORDS = {"president": "president", "affiliation": "home institution", "city": "home city",
              "ceo": "chief executive", "sponsor": "sponsor", "country": "country"}


def an(phrase: str) -> str:
    """``phrase`` with its indefinite article ("an annual budget", "a cost")."""
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


def bank(a: Attr) -> Bank:
    return {"year": YEAR, "count": COUNT, "money": MONEY}.get(a.kind, CATEGORY)


def choose(rng: random.Random, options: Bank, families: tuple[int, ...]) -> tuple[int, str]:
    allowed = [t for t in options if t[0] in families]
    return rng.choice(allowed or list(options))


# -- numbers as written ------------------------------------------------------------------
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
         "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def words(n: int) -> str:
    """English words for 0 ≤ n < 1,000,000 ("two thousand three hundred")."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return _ONES[n // 100] + " hundred" + (" " + words(n % 100) if n % 100 else "")
    return words(n // 1000) + " thousand" + (" " + words(n % 1000) if n % 1000 else "")


def count_text(v: int, rng: random.Random) -> str:
    forms = [f"{v:,}", str(v)]
    if v >= 1000 and v % 100 == 0:
        forms += [f"{v / 1000:g}k", f"{v / 1000:g} thousand"]
    if v >= 1_000_000 and v % 100_000 == 0:
        forms.append(f"{v / 1_000_000:g} million")
    if v < 100_000 and (v < 100 or v % 100 == 0):
        forms.append(words(v))
    return rng.choice(forms)


def money_text(v: float, rng: random.Random) -> str:
    """``v`` millions of dollars, exactly, in one of several notations."""
    forms = [f"${v:g} million", f"USD {v:g}M", f"{v:g} million dollars",
             f"${round(v * 1_000_000):,}"]
    if v >= 1000:
        forms.append(f"${v / 1000:g} billion")
    return rng.choice(forms)


def value_text(a: Attr, v: object, rng: random.Random) -> str:
    if a.kind == "count":
        return count_text(int(v), rng)  # type: ignore[call-overload]
    if a.kind == "money":
        return money_text(float(v), rng)  # type: ignore[arg-type]
    return str(v)
