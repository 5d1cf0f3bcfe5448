"""A benchmark we can trust without live Wikipedia (DocSage, issue 11 item 7).

Seeded fictional MEBench-like collections: worlds of six domain families (:mod:`.families`,
:mod:`.world`), a gold DuckDB (:mod:`.gold`), questions written SQL-first in MEBench's three
categories and eight types (:mod:`.qtemplates`, :mod:`.questions`), documents with hardness
knobs (:mod:`.render`), deterministic scoring (:mod:`.score`), anti-triviality gates
(:mod:`.gates`) and CLEAR's labelled extraction data from train families
(:mod:`.calibration`). See ``docs/docsage-benchmark.md``.
"""

from quaderno.eval.synth.calibration import FAMILY_SPLIT, CalibrationExample, calibration_examples
from quaderno.eval.synth.collection import (BINS, GENERATOR_VERSION, Collection, load_questions,
                                            make_collection, write_collection)
from quaderno.eval.synth.families import FAMILIES, TEST_FAMILIES, TRAIN_FAMILIES
from quaderno.eval.synth.questions import Question
from quaderno.eval.synth.score import Gold, score
from quaderno.eval.synth.templates import HELDOUT_TEMPLATES, TRAIN_TEMPLATES

__all__ = ["BINS", "FAMILIES", "FAMILY_SPLIT", "GENERATOR_VERSION", "HELDOUT_TEMPLATES",
           "TEST_FAMILIES", "TRAIN_FAMILIES", "TRAIN_TEMPLATES", "CalibrationExample",
           "Collection", "Gold", "Question", "calibration_examples", "load_questions",
           "make_collection", "score", "write_collection"]
