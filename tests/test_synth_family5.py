"""Template family 5, the fresh family (:data:`FRESH_TEMPLATES`): written after the test family
4 had been read while analysing held-out failures, so that rules drawn from those failures are
judged on wording nobody has read. It rewords every bank entry and shared sentence family 4
does, shares no wording with families 0-4, keeps every gold answer, passes the template-leak
gate as family 4 does, and leaves every collection rendered without it as it was."""

from __future__ import annotations

import re
import string
import tempfile
from pathlib import Path

import pytest
from synth_checks import assert_stated_as_planted, measured_digests

from quaderno.eval.synth import FAMILIES, TEST_FAMILIES, make_collection, write_collection
from quaderno.eval.synth.collection import Collection, files
from quaderno.eval.synth.gates import extract_tables, oracle_score, regex_extractor, regex_score
from quaderno.eval.synth.score import numbers
from quaderno.eval.synth.templates import (ALL_TEMPLATES, CATEGORY, CORRECTION, COUNT, CURRENT,
                                           FILLER, FIXED, FRESH_FIXED, FRESH_TEMPLATES, JOIN,
                                           KNOWN_TEMPLATES, LINK, MONEY, NEGATED, NEGATED_MONEY,
                                           OLD_MONEY, OLD_VALUE, TEST_FIXED, TEST_TEMPLATES,
                                           YEAR, words)

BANKS = {"YEAR": YEAR, "COUNT": COUNT, "MONEY": MONEY, "CATEGORY": CATEGORY, "LINK": LINK,
         "JOIN": JOIN}
READ = ALL_TEMPLATES + TEST_TEMPLATES  # every family read before family 5 was written
# the benchmark's bins (benchmarks/docsage_runs.sh): SPLIT=heldout renders seed 1 with family
# 4, SPLIT=fresh seed 2 with family 5
BENCH = (("award", "set1", 8), ("regulator", "set2", 16), ("network", "set3", 101))
# the held-out collections the committed SPLIT=heldout runs were measured on, byte for byte
HELD_OUT = {
    "award-set1-s1-t4": (
        "0b7d0769f3d4075a0c9052576ec728cd5933c98a810653e116c1b55efa5b06d9",
        "39237b3cc015526606bf8e7737d9f67e48e834e7a6368c2d13f28e100e2ab976"),
    "regulator-set2-s1-t4": (
        "c6244510ecfb516acf3894084e8195d8713d199356824756332cbb0b08fc09c4",
        "1dd8d7bd12ab3b1dbef5dc3f16a35b9541279edd3732fda8a240e1c90943d902"),
    "network-set3-s1-t4": (
        "0cbc0ca4efe3d62f9b3ff7100bf17f0feec0327c5a890677a82a8b924c78d7c1",
        "ca0c5430485397911d1ebac3c1dbf22626a73684a65b9a0c0eb9cdd41fd5ea95"),
}


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def _pattern(template: str) -> re.Pattern:
    """``template`` with every placeholder as a wildcard, found anywhere in a text."""
    parts = re.split(r"\{[a-z_]+\}", template.strip())
    return re.compile(".+?".join(re.escape(p) for p in parts))


@pytest.fixture(scope="module")
def fresh() -> list[Collection]:
    """The fresh benchmark: seed 2 rendered with family 5 alone (SPLIT=fresh)."""
    return [make_collection(f, b, 2, entities=n, per_type=1, template_families=FRESH_TEMPLATES)
            for f, b, n in BENCH]


@pytest.fixture(scope="module")
def every_domain() -> list[Collection]:
    """Family 5 over all six domain families (holders, sponsors, trials … included)."""
    return [make_collection(f, "set2", 2, entities=24, per_type=1,
                            template_families=FRESH_TEMPLATES) for f in FAMILIES]


def test_family_5_is_known_and_apart_from_the_development_and_test_families():
    assert FRESH_TEMPLATES == (5,)
    assert set(KNOWN_TEMPLATES) == {0, 1, 2, 3, 4, 5}
    assert not set(FRESH_TEMPLATES) & set(ALL_TEMPLATES + TEST_TEMPLATES)
    assert FIXED[4] is TEST_FIXED and FIXED[5] is FRESH_FIXED and set(FIXED) == {4, 5}


@pytest.mark.parametrize("name", list(BANKS))
def test_family_5_rewords_every_bank_family_4_does(name):
    bank = BANKS[name]
    four = [t for f, t in bank if f == 4]
    five = [t for f, t in bank if f == 5]
    assert four and len(five) >= 2, name
    read = {t for f, t in bank if f in READ}
    allowed = set().union(*(_fields(t) for t in read))
    for t in five:
        assert t not in read
        assert _fields(t) <= allowed, (t, _fields(t) - allowed)
        assert "{ent}" in t and ("{v}" in t or "{link}" in t)  # the fact, whole


def test_family_5_rewords_every_shared_sentence_family_4_does():
    assert set(TEST_FIXED) <= set(FRESH_FIXED)
    # beyond family 4: the filler and a namesake's first sentence are reworded too
    assert set(FRESH_FIXED) - set(TEST_FIXED) == {"filler", "namesake_head"}
    assert len(FRESH_FIXED["filler"]) == len(FILLER)
    read = set(FILLER) | {t for v in TEST_FIXED.values() for t in v}
    facts = {"intro", "ent", "v", "wrong", "year", "joined", "left", "names", "items", "holder",
             "topic", "rival", "now", "n"}
    for kind, options in FRESH_FIXED.items():
        assert options and not set(options) & read, kind
        wanted = set().union(*(_fields(t) for t in TEST_FIXED.get(kind, ()))) & facts
        for t in options:  # what each sentence tells is still written out
            assert wanted <= _fields(t), (kind, t, wanted - _fields(t))


def test_every_family_5_sentence_is_rendered(fresh, every_domain):
    """Each bank entry and shared sentence of family 5 occurs in some rendered collection
    (so none has a placeholder the renderer does not fill)."""
    text = "\n".join(s for c in fresh + every_domain for d in c.documents
                     for s in [d.title, d.text])
    templates = [t for b in BANKS.values() for f, t in b if f == 5]
    templates += [t for v in FRESH_FIXED.values() for t in v]
    assert len(templates) >= 50
    missing = [t for t in templates if not _pattern(t).search(text)]
    assert not missing


def _literals(template: str):
    """The template's literal stretches of three words or more."""
    for part in re.split(r"\{[a-z_]+\}", template):
        part = part.strip(" .,:;()'—-")
        if len(part.split()) >= 3:
            yield part


def test_a_family_5_collection_uses_family_5_wording_alone(fresh):
    """No wording of families 0-4 (bank entries, shared sentences, filler, "current" leads)
    is written, none of the sentences family 4 was told apart by, and every fact's template
    family is 5."""
    assert [c.name for c in fresh] == ["award-set1-s2-t5", "regulator-set2-s2-t5",
                                       "network-set3-s2-t5"]
    for c in fresh:
        assert {f.template_family for d in c.documents for f in d.facts} <= {-1, 5}
        assert any(f.template_family == 5 for d in c.documents for f in d.facts)
        assert all(set(q.knobs["template_families"]) <= {5} for q in c.questions)
    read = [t for b in BANKS.values() for f, t in b if f in READ]
    read += [*CORRECTION, *OLD_VALUE, *OLD_MONEY, *NEGATED, *NEGATED_MONEY, *CURRENT, *FILLER]
    read += [t for v in TEST_FIXED.values() for t in v]
    literals = {p for t in read for p in _literals(t)}
    assert len(literals) > 40
    texts = "\n".join(s for c in fresh for d in c.documents for s in [d.title, d.text])
    assert not [p for p in sorted(literals) if p in texts]
    # what families 0-3 write one way (render.py) and family 4 another
    for read_only in ("until it left", "Former members:", "of the same name", "Members of the",
                      "is listed as", "not of the", "(Published", "members, part", "As of ",
                      "Latest figures", "Updated in", "Past members:", "counts the following",
                      "(Issued", "membership list", "At the latest count", "Most recently",
                      "(departed", "(left", "the files of the"):
        assert read_only not in texts, read_only
    assert "Members who have since withdrawn:" in texts and "roll, sheet" in texts


def _cells_read(c: Collection, extractor) -> tuple[int, int]:
    """(attribute cells the extractor reads right, attribute cells with a value)."""
    fam, got = c.world.family, extract_tables(c, extractor)
    right = total = 0
    for table, attrs in ((fam.members, fam.attrs), (fam.link_table, fam.link_attrs)):
        for gold, read in zip(c.rows[table], got[table], strict=True):
            for i in range(1, len(attrs) + 1):
                total += gold[i] is not None
                right += gold[i] is not None and read[i] == gold[i]
    return right, total


def test_the_template_leak_gate_holds_for_family_5_as_for_family_4(fresh):
    """A regex compiled from every template read so far (families 0-4, every domain family)
    reads no attribute cell of a family-5 document, and the questions' SQL over what it reads
    scores low (the gate family 4 passes against families 0-3); compiled from family 5 itself
    it reads most cells, so the sentences do state the facts."""
    read = regex_extractor(tuple(FAMILIES), READ)
    own = regex_extractor(tuple(FAMILIES), FRESH_TEMPLATES)
    train_only = regex_extractor(tuple(f for f in FAMILIES if f not in TEST_FAMILIES), (0, 1))
    for extractor in (read, train_only):
        assert sum(regex_score(c, extractor) for c in fresh) / len(fresh) <= 0.2
    for c in fresh:
        assert _cells_read(c, read)[0] == 0, c.name
        right, total = _cells_read(c, own)
        assert right >= 0.6 * total, (c.name, right, total)
    assert sum(regex_score(c, own) for c in fresh) / len(fresh) >= 0.35
    # the control: family 4's documents are read by the bank that holds family 4
    held = [make_collection(f, b, 1, entities=n, per_type=1, template_families=TEST_TEMPLATES)
            for f, b, n in BENCH]
    for c in held:
        right, total = _cells_read(c, read)
        assert right >= 0.6 * total, (c.name, right, total)


def _oracle(c: Collection) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        return oracle_score(write_collection(c, Path(tmp)))


def _states(sentence: str, kind: str, value) -> bool:
    if kind == "count":
        return int(value) in {round(n) for n in numbers(sentence)} or words(int(value)) in sentence
    if kind == "money":
        return any(abs(n - value * 1e6) < 1 for n in numbers(sentence))
    return str(value) in sentence


def test_family_5_keeps_every_gold_answer(fresh, every_domain):
    """The oracle scores 1, and every sentence with a fact names its entity and writes the
    value it records (the current one, a dated older one, a corrected or a denied one)."""
    assert all(_oracle(c) == 1.0 for c in fresh)
    for c in fresh + every_domain:
        fam, w = c.world.family, c.world
        kinds = {a.column: a.kind for a in fam.attrs + fam.link_attrs}
        for d in c.documents:
            for s, facts in d.sentences:
                for f in facts:
                    if f.table == "membership":
                        continue  # "member" (intro, roster) and "joined" are checked below
                    if f.column == fam.link_role:
                        link = w.link(f.value)
                        assert any(n in s for n in [link.name, *link.aliases]), s
                    else:
                        assert _states(s, kinds[f.column], f.value), (s, f)
                    ent = w.member(f.entity) if f.table == fam.members else w.link(f.entity)
                    refs = [ent.name, *ent.aliases, f"the {fam.member}"]
                    assert any(r.lower() in s.lower() for r in refs) or \
                        re.search(r"(^|, )(it|he|she) ", s, re.IGNORECASE), (s, f)
        for e in w.members:
            joined = [s for d in c.documents for s, fs in d.sentences
                      if any(f.column == "joined" and f.entity == e.name for f in fs)]
            assert joined and all(str(e.joined) in s and w.topic in s for s in joined)


def test_conflicts_corrections_denials_and_distractors_in_family_5_text():
    """As ``test_aliases_conflicts_corrections_distractors_in_text`` checks for the default
    families, with family 5's wording."""
    c = make_collection("consortium", "set2", 3, entities=24, per_type=1,
                        template_families=FRESH_TEMPLATES)
    w, text = c.world, "\n".join(d.text for d in c.documents)
    assert_stated_as_planted(c)
    for e in (e for e in w.members if e.old_values):
        for col, (_old, year) in e.old_values.items():
            facts = [f for d in c.documents for f in d.facts if f.entity == e.name
                     and f.column == col]
            assert {f.note for f in facts if not f.current} == {"outdated"}
            dated = [d for d in c.documents if d.title == f"{e.name} — news {year}"]
            assert dated and (f"[Archive, {year}] " in dated[0].text
                              or f"From the {year} files: " in dated[0].text)
            current = [s for d in c.documents for s, fs in d.sentences
                       if any(f.column == col and f.entity == e.name and f.current
                              for f in fs)]
            assert current and all(s.startswith(("Per the 2024 figures, ",
                                                 "Going by 2024 data, ")) for s in current)
    corrected = [e for e in w.members if e.corrections]
    assert corrected
    for e in corrected:
        col, wrong = next(iter(e.corrections.items()))
        sentence = next(s for d in c.documents for s, fs in d.sentences
                        if any(f.note == "corrected" and f.entity == e.name for f in fs))
        assert str(wrong) in sentence and str(e.values[col]) in sentence
        assert "mistaken" in sentence or "wrong" in sentence
    heads = {d.subject: d.text for d in c.documents if d.kind == "distractor"}
    for e in w.distractors:
        if e.role == "former":
            assert str(e.joined) in heads[e.name] and str(e.left) in heads[e.name]
        else:
            assert w.rival_topic in heads[e.name]
    assert f"{w.topic} roll, sheet 1" in {d.title for d in c.documents}
    assert "Members who have since withdrawn:" in text


@pytest.mark.parametrize("fam,bin_name,n", BENCH)
def test_family_5_leaves_the_held_out_collections_as_they_were(fam, bin_name, n):
    """The held-out (family 4) collections render byte for byte as the committed runs read
    them, and family 5 renders the same world and questions in other words."""
    held = make_collection(fam, bin_name, 1, entities=n, per_type=1,
                           template_families=TEST_TEMPLATES)
    got = files(held)
    assert measured_digests(got) == HELD_OUT[held.name]
    assert got["questions.jsonl"].count('"money_power": 2') == (fam == "award")
    same = make_collection(fam, bin_name, 1, entities=n, per_type=1,
                           template_families=FRESH_TEMPLATES)
    assert same.name == held.name.replace("-t4", "-t5")
    assert same.rows == held.rows
    assert {f.template_family for d in same.documents for f in d.facts} == {-1, 5}
    assert [(q.sql, q.gold) for q in same.questions] == [(q.sql, q.gold) for q in held.questions]
    assert files(same)["documents.jsonl"] != got["documents.jsonl"]
