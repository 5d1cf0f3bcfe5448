"""What a generated collection's documents must state of its world, whatever the template
family writes it with: shared by the default-family and the family-5 tests, which each add
the checks of their own wording."""

from __future__ import annotations

import hashlib

from quaderno.eval.synth.collection import Collection


def measured_digests(got: dict[str, str]) -> tuple[str, str]:
    """The digests of a rendered collection's documents and questions as the committed runs
    read them: synth-1.3 records the unit of a variance of money (``Gold.money_power``) in
    that one question's gold, and without it every byte is as measured."""
    as_measured = got["questions.jsonl"].replace('"money": true, "money_power": 2,',
                                                 '"money": false,')
    return tuple(hashlib.sha256(text.encode()).hexdigest()  # type: ignore[return-value]
                 for text in (got["documents.jsonl"], as_measured))


def assert_stated_as_planted(c: Collection) -> None:
    """Alias-only documents name the entity by an alias only; a member's outdated value is
    stated as not current and its value as current; a denied value is never current; a
    missing (NULL) value is never stated."""
    w = c.world
    alias_docs = [d for d in c.documents if d.alias_only]
    assert alias_docs
    for d in alias_docs:
        e = w.member(d.subject)
        assert e.name not in d.text and any(a in d.text for a in e.aliases)
    conflicted = [e for e in w.members if e.old_values]
    assert conflicted
    for e in conflicted:
        for col, (old, _year) in e.old_values.items():
            facts = [f for d in c.documents for f in d.facts if f.entity == e.name
                     and f.column == col]
            assert {f.value for f in facts if not f.current} == {old}
            assert {f.value for f in facts if f.current} == {e.values[col]}
    assert any(e.negated for e in w.members)
    for e in (e for e in w.members if e.negated):
        col, denied = next(iter(e.negated.items()))
        facts = [f for d in c.documents for f in d.facts if f.entity == e.name
                 and f.column == col and f.value == denied]
        assert facts and not any(f.current for f in facts)
    for e in w.members:
        for col, v in e.values.items():
            if v is None:
                assert not any(f.entity == e.name and f.column == col
                               for d in c.documents for f in d.facts)
