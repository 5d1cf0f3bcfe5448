"""Labelled extraction data D_1 for CLEAR's conformal threshold, from train families only.

DocSage calibrates the threshold that flags wrong extracted values on labelled data (spec
§3, A4: synthetic gold from *train* domain families, never the test topics). Each
:class:`CalibrationExample` is one chunk (a document: they are shorter than a KB chunk), one
table, and the gold cells of the entities the chunk states: the current value (``cells``)
and the value as the text asserts it (``stated``, which differs for a dated older value).
A value the text corrects or denies ("Claims that X has 5,000 staff are unfounded") is in
neither: it is not stated, so extracting it is an error. Chunks that state nothing about a
table's gold entities (distractor profiles, roster pages) come with empty cells.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from quaderno.errors import ConfigError
from quaderno.eval.synth.collection import make_collection
from quaderno.eval.synth.families import TEST_FAMILIES, TRAIN_FAMILIES, family
from quaderno.eval.synth.templates import ALL_TEMPLATES, FRESH_TEMPLATES, TEST_TEMPLATES

FAMILY_SPLIT: dict[str, tuple[str, ...]] = {"train": TRAIN_FAMILIES, "test": TEST_FAMILIES}


@dataclass(frozen=True)
class CalibrationExample:
    chunk_id: str
    text: str
    family: str
    table: str
    columns: tuple[str, ...]  # the table's attribute columns
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)  # entity → column → gold
    stated: dict[str, dict[str, Any]] = field(default_factory=dict)  # as the text states it


def calibration_examples(families: Sequence[str] = TRAIN_FAMILIES, *,
                         seeds: Sequence[int] = (0,), bins: Sequence[str] = ("set1", "set2"),
                         template_families: tuple[int, ...] = ALL_TEMPLATES,
                         ) -> Iterator[CalibrationExample]:
    """D_1: (chunk text, table, gold cells) from collections of ``families`` (train only;
    a test family raises :class:`ConfigError`)."""
    leaked = [f for f in families if f in TEST_FAMILIES]
    if leaked:
        raise ConfigError(f"calibration data must come from train families "
                          f"({', '.join(TRAIN_FAMILIES)}), not {', '.join(leaked)}")
    if any(t in TEST_TEMPLATES + FRESH_TEMPLATES for t in template_families):
        raise ConfigError(f"calibration data must not be rendered with the held-out test "
                          f"template families {TEST_TEMPLATES + FRESH_TEMPLATES}; use some of "
                          f"{ALL_TEMPLATES}")
    for fam_key in families:
        fam = family(fam_key)
        tables = {fam.members: tuple(a.column for a in fam.attrs) + (fam.link_role,),
                  fam.link_table: tuple(a.column for a in fam.link_attrs)}
        for seed in seeds:
            for bin_name in bins:
                col = make_collection(fam_key, bin_name, seed, per_type=1,
                                      template_families=template_families)
                w = col.world
                for doc in col.documents:
                    for table, columns in tables.items():
                        cells: dict[str, dict[str, Any]] = {}
                        stated: dict[str, dict[str, Any]] = {}
                        for f in doc.facts:
                            if f.table != table or not f.asserted:
                                continue  # a corrected or denied value is not stated
                            ent = w.member(f.entity) if table == fam.members else \
                                w.link(f.entity)
                            gold = ent.link if f.column == fam.link_role else \
                                ent.values.get(f.column)
                            cells.setdefault(f.entity, {})[f.column] = gold
                            if f.current or f.column not in stated.get(f.entity, {}):
                                stated.setdefault(f.entity, {})[f.column] = f.value
                        if cells or doc.kind in ("distractor", "roster"):
                            yield CalibrationExample(doc.id, doc.text, fam_key, table, columns,
                                                     cells, stated)
