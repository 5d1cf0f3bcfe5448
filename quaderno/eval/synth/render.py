"""Documents of a world: profiles, news items, annual-report paragraphs and roster pages.

Each member's facts are spread over 1–3 documents (its ``spread``); a dated older value
gets a news item of its own (so an entity has 1–4 documents). Every sentence records the
facts it states (:class:`Fact`), which is what the gates and the CLEAR calibration data
(:mod:`.calibration`) read. Hardness: aliases and "the institution" in place of the name,
distractor entities (former members, members of a rival topic, same-name entities there),
dated conflicts and explicit corrections, missing values (a NULL is never stated), roster
pages with names only, and filler sentences.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from quaderno.eval.synth.families import Attr, Family
from quaderno.eval.synth.templates import (ALL_TEMPLATES, CORRECTION, CURRENT, FILLER, FIXED,
                                           JOIN, LINK, NEGATED, NEGATED_MONEY, OLD_MONEY,
                                           OLD_VALUE, ROLE_WORDS, an, bank, choose, value_text)
from quaderno.eval.synth.world import NOW, Entity, World

ROSTER_SIZE = 8
COMPOUND_FAMILY = 2
PRONOUNS = {"female": "she", "male": "he"}
_LOWER_LEADS = {"The", "Some", "With", "A", "According", "Observers", "Records", "Figures",
                "Tallies", "At", "It", "She", "He", "As", "Since", "In", "Membership", "Contrary"}


@dataclass(frozen=True)
class Fact:
    """One cell a sentence mentions: ``current`` is False for a value that is not the gold
    one, and ``note`` says why: ``outdated`` (a dated older value, which the text asserts
    for its date), ``corrected`` (a wrong value the text corrects) or ``denied`` (a value
    the text denies)."""

    table: str
    entity: str
    column: str
    value: Any
    current: bool = True
    template_family: int = -1
    note: str = ""

    @property
    def asserted(self) -> bool:
        """The text asserts this value (now, or as of a stated date)."""
        return self.current or self.note == "outdated"


@dataclass
class Document:
    id: str
    title: str
    kind: str  # profile | news | report | roster | link | distractor
    subject: str  # the entity it is about ("" for roster pages)
    sentences: list[tuple[str, list[Fact]]] = field(default_factory=list)
    alias_only: bool = False  # the subject is named only by an alias

    @property
    def text(self) -> str:
        return " ".join(s for s, _ in self.sentences)

    @property
    def facts(self) -> list[Fact]:
        return [f for _, fs in self.sentences for f in fs]


def _participle(event: str) -> str:
    """"was founded" → "Founded", "started" → "Started"; "" when it has no such form."""
    if event.startswith("was "):
        return event.removeprefix("was ").capitalize()
    return event.capitalize() if event.endswith("ed") and " " not in event else ""


def _fill(template: str, **kw: Any) -> str:
    out = template.format(**kw).replace("..", ".")  # an alias such as "Kous." ends a sentence
    return out[0].upper() + out[1:]


class Renderer:
    """Renders one world with the template families allowed (default: all)."""

    def __init__(self, world: World, rng: random.Random,
                 template_families: tuple[int, ...] = ALL_TEMPLATES, filler: int = 1) -> None:
        self.w, self.rng, self.tf, self.n_filler = world, rng, template_families, filler
        self.fam: Family = world.family
        # the test and fresh families reword the sentences families 0-3 share (FIXED)
        self.fixed = [FIXED[t] for t in sorted(set(template_families)) if t in FIXED]

    def _fixed(self, kind: str, usual: tuple[str, ...] | str) -> str:
        """The wording of a sentence families 0-3 share: one of ``usual``, or, when a family
        that rewords it renders, that family's (:data:`.templates.FIXED`: the test family's
        :data:`.templates.TEST_FIXED`, the fresh family's :data:`.templates.FRESH_FIXED`)."""
        options = tuple(t for fixed in self.fixed for t in fixed.get(kind, ()))
        if options:
            return self.rng.choice(options)
        return usual if isinstance(usual, str) else self.rng.choice(usual)

    # -- sentences ---------------------------------------------------------------------
    def _ref(self, e: Entity, first: bool, alias_only: bool) -> str:
        """How a sentence names ``e``: its name, an alias, "the institution" or a pronoun
        (which :meth:`_fit` turns back into a name where the template cannot take one)."""
        if first and not alias_only:
            return e.name
        options = list(e.aliases) if alias_only and e.aliases else [e.name] + e.aliases
        if not first and e.role != "link" and not self.fam.members_are_people:
            options.append(f"the {self.fam.member}")
        if not first:
            person = self.fam.members_are_people if e.role != "link" else \
                self.fam.link_is_person
            gender = e.values.get("gender")
            if not person:
                options.append("it")
            elif gender in PRONOUNS:
                options.append(PRONOUNS[gender])
        return self.rng.choice(options)

    def _fit(self, template: str, ref: str, e: Entity) -> str:
        """A pronoun only opens a sentence ("It has …"); elsewhere the name stands."""
        if ref in ("it", "she", "he") and not template.startswith("{ent} "):
            return self.rng.choice(e.aliases or [e.name])  # aliases: alias-only documents too
        return ref

    def attr_sentence(self, e: Entity, a: Attr, table: str, ref: str,
                      value: Any = None, current: bool = True) -> tuple[str, list[Fact]]:
        v = e.values[a.column] if value is None else value
        tf, tpl = choose(self.rng, bank(a), self.tf)
        vt = value_text(a, v, self.rng)
        phrase = self.rng.choice(a.phrases).format(v=vt) if a.phrases else ""
        text = _fill(tpl, ent=self._fit(tpl, ref, e), v=vt, noun=a.noun, noun_a=an(a.noun),
                     event=a.event,
                     event_noun=a.event_noun,
                     label=a.label, label_cap=a.label.capitalize(), phrase=phrase)
        return text, [Fact(table, e.name, a.column, v, current, tf)]

    def link_sentence(self, e: Entity, ref: str, link_ref: str) -> tuple[str, list[Fact]]:
        tf, tpl = choose(self.rng, LINK, self.tf)
        text = _fill(tpl, ent=self._fit(tpl, ref, e), link=link_ref,
                     role=ROLE_WORDS[self.fam.link_role])
        return text, [Fact(self.fam.members, e.name, self.fam.link_role, e.link, True, tf)]

    def join_sentence(self, e: Entity, ref: str) -> tuple[str, list[Fact]]:
        tf, tpl = choose(self.rng, JOIN, self.tf)
        text = _fill(tpl, ent=self._fit(tpl, ref, e), join=self.fam.join_verb,
                     topic=self.w.topic, v=e.joined)
        return text, [Fact("membership", e.name, "joined", e.joined, True, tf)]

    def filler(self, ref: str, e: Entity) -> tuple[str, list[Fact]]:
        tpl = self._fixed("filler", FILLER)
        return _fill(tpl, ent=self._fit(tpl, ref, e)), []

    # -- documents ---------------------------------------------------------------------
    def member_docs(self, e: Entity) -> list[Document]:
        fam, rng = self.fam, self.rng
        kinds = ["profile", "news", "report"][:e.spread]
        docs = [Document("", f"{e.name}" if k == "profile" else f"{e.name} — {k}", k, e.name)
                for k in kinds]
        for d in docs[1:]:
            d.alias_only = bool(e.aliases) and rng.random() < 0.4
            if d.alias_only:
                d.title = f"{rng.choice(e.aliases)} — {d.kind}"
        intro = f"{e.name} ({e.aliases[0]})" if e.aliases else e.name
        head = self._fixed("intro", "{intro} is {member_a} of the {topic}.")
        docs[0].sentences.append((head.format(intro=intro, member_a=an(fam.member),
                                              topic=self.w.topic),
                                  [Fact("membership", e.name, "member", True)]))
        items: list[tuple[str, Any]] = [("attr", a) for a in fam.attrs
                                        if e.values.get(a.column) is not None]
        items += [("link", None), ("join", None)]
        rng.shuffle(items)
        for i, (what, a) in enumerate(items):
            d = docs[i % len(docs)]
            ref = self._ref(e, first=not d.sentences, alias_only=d.alias_only)
            if what == "link":
                link = self.w.link(e.link or "")
                d.sentences.append(self.link_sentence(e, ref, self._ref(link, True, False)))
            elif what == "join":
                d.sentences.append(self.join_sentence(e, ref))
            elif a.column in e.corrections:
                d.sentences.append(self._correction(e, a, ref))
            else:
                s, fs = self.attr_sentence(e, a, fam.members, ref)
                if a.column in e.old_values:
                    lead = s.split(" ", 1)[0]
                    if lead in _LOWER_LEADS:
                        s = s[0].lower() + s[1:]
                    s = _fill(self._fixed("current", CURRENT), now=NOW) + s
                d.sentences.append((s, fs))
        for col, denied in e.negated.items():
            a, d = fam.attr(col), rng.choice(docs)
            tpl = self._fixed("negated_money", NEGATED_MONEY) if a.kind == "money" else \
                self._fixed("negated", NEGATED)
            s = _fill(tpl, ent=self._fit(tpl, self._ref(e, not d.sentences, d.alias_only), e),
                      noun=a.noun, v=value_text(a, denied, rng))
            d.sentences.append((s, [Fact(fam.members, e.name, col, denied, False,
                                         note="denied")]))
        for d in docs:
            self._compound(d, e)
            for _ in range(self.n_filler if self.n_filler > 1 else int(rng.random() < 0.7)):
                d.sentences.insert(rng.randint(1, len(d.sentences)),
                                   self.filler(self._ref(e, False, d.alias_only), e))
        for col, (old, year) in e.old_values.items():
            a = fam.attr(col)
            old_tpl = self._fixed("old_money", OLD_MONEY) if a.kind == "money" else \
                self._fixed("old_value", OLD_VALUE)
            s = _fill(old_tpl, year=year,
                      ent=self._ref(e, True, False), v=value_text(a, old, rng), noun=a.noun)
            docs.append(Document("", f"{e.name} — news {year}", "news", e.name,
                                 [(self._fixed("dated", "(Published {year}.) ")
                                   .format(year=year) + s,
                                   [Fact(fam.members, e.name, col, old, False,
                                         note="outdated")])]))
        return docs

    def _compound(self, d: Document, e: Entity) -> None:
        """Fold a year sentence into the next sentence about ``e`` ("Founded in 1874,
        Vorland College has 2,300 staff members."): two facts in one sentence, template
        family 2 (held out from the regex gate's train side)."""
        if COMPOUND_FAMILY not in self.tf:
            return
        refs = [e.name, *e.aliases, f"the {self.fam.member}"]
        years = [i for i, (_, fs) in enumerate(d.sentences) if len(fs) == 1
                 and fs[0].table == self.fam.members and fs[0].column in self._year_cols]
        hosts = [i for i, (t, fs) in enumerate(d.sentences) if len(fs) == 1 and i not in years
                 and any(t.lower().startswith(r.lower() + " ") for r in refs)]
        if not years or not hosts or self.rng.random() >= 0.6:
            return
        y, h = years[0], self.rng.choice(hosts)
        (_, [yf]), (host, hfacts) = d.sentences[y], d.sentences[h]
        lead = _participle(self.fam.attr(yf.column).event)
        if not lead:
            return
        host = host[0].lower() + host[1:] if host.startswith("The ") else host
        fact = Fact(yf.table, yf.entity, yf.column, yf.value, yf.current, COMPOUND_FAMILY,
                    yf.note)
        d.sentences[h] = (f"{lead} in {yf.value}, {host}", [fact, *hfacts])
        del d.sentences[y]

    @property
    def _year_cols(self) -> set[str]:
        return {a.column for a in self.fam.attrs if a.kind == "year"}

    def _correction(self, e: Entity, a: Attr, ref: str) -> tuple[str, list[Fact]]:
        tpl = self._fixed("correction", CORRECTION)
        text = _fill(tpl, ent=self._fit(tpl, ref, e), v=e.values[a.column],
                     wrong=e.corrections[a.column], event=a.event, event_noun=a.event_noun)
        return text, [Fact(self.fam.members, e.name, a.column, e.values[a.column]),
                      Fact(self.fam.members, e.name, a.column, e.corrections[a.column], False,
                           note="corrected")]

    def link_doc(self, e: Entity) -> Document:
        fam = self.fam
        d = Document("", e.name, "link", e.name)
        holders = [m for m in self.w.members if m.link == e.name]
        role = ROLE_WORDS[fam.link_role]
        if holders and fam.link_is_person:
            tpl = self._fixed("holder", "{ent} is the {role} of {holder}.")
            d.sentences.append((tpl.format(ent=e.name, role=role, holder=holders[0].name),
                                [Fact(fam.members, holders[0].name, fam.link_role, e.name)]))
        else:
            tpl = self._fixed("listed", "{ent} is listed as {role_a} in the records of the "
                                        "{topic}.")
            d.sentences.append((tpl.format(ent=e.name, role_a=an(role), topic=self.w.topic),
                                []))
        for a in fam.link_attrs:
            d.sentences.append(self.attr_sentence(e, a, fam.link_table, self._ref(e, False,
                                                                                  False)))
        return d

    def distractor_doc(self, e: Entity) -> Document:
        fam, w = self.fam, self.w
        d = Document("", e.name, "distractor", e.name)
        said = {"ent": e.name, "member_a": an(fam.member), "topic": w.topic,
                "rival": w.rival_topic, "joined": e.joined, "left": e.left}
        if e.role == "former":
            head = self._fixed("former", "{ent} was {member_a} of the {topic} from "
                                         "{joined} until it left in {left}.").format(**said)
        elif e.role == "namesake":
            head = self._fixed("namesake_head", "{ent} is {member_a} of the {rival}.").format(
                **said)
            if self.rng.random() < 0.5:
                head += self._fixed("namesake", " It is not the {member} of the same name in "
                                                "the {topic}.").format(member=fam.member,
                                                                       topic=w.topic)
        else:
            head = self._fixed("rival", "{ent} is {member_a} of the {rival}, not of the "
                                        "{topic}.").format(**said)
        d.sentences.append((head, []))
        for a in fam.attrs:  # distractors' values are facts of nobody's gold table
            if self.rng.random() < 0.7:
                s, _ = self.attr_sentence(e, a, "", self._ref(e, False, False))
                d.sentences.append((s, []))
        return d

    def roster_docs(self) -> list[Document]:
        names = [m for m in self.w.members]
        self.rng.shuffle(names)
        out = []
        for i in range(0, len(names), ROSTER_SIZE):
            part = names[i:i + ROSTER_SIZE]
            listed = [self.rng.choice([m.name] + m.aliases) for m in part]
            title = self._fixed("roster_title", "{topic} — members, part {n}")
            d = Document("", title.format(topic=self.w.topic, n=i // ROSTER_SIZE + 1),
                         "roster", "")
            tpl = self._fixed("roster", "Members of the {topic} ({alias}) include {names}.")
            d.sentences.append((tpl.format(topic=self.w.topic, alias=self.w.topic_alias,
                                           names=", ".join(listed)),
                                [Fact("membership", m.name, "member", True) for m in part]))
            out.append(d)
        formers = [e for e in self.w.distractors if e.role == "former"]
        if formers and out:
            item = self._fixed("former_item", "{ent} (left {left})")
            items = ", ".join(item.format(ent=e.name, left=e.left) for e in formers)
            out[-1].sentences.append((
                self._fixed("formers", "Former members: {items}.").format(items=items), []))
        return out

    def render(self, prefix: str) -> list[Document]:
        docs: list[Document] = []
        for e in self.w.members:
            docs += self.member_docs(e)
        docs += [self.link_doc(e) for e in self.w.links]
        docs += [self.distractor_doc(e) for e in self.w.distractors]
        docs += self.roster_docs()
        self.rng.shuffle(docs)
        for i, d in enumerate(docs):
            d.id = f"{prefix}-d{i:05d}"
        return docs
