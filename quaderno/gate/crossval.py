"""Cross-validating every gate over all labelled questions (spec §6: "5-fold CV").

With a few dozen labels per split a fixed train / val / test split leaves every part tiny.
Here each fold in turn is the test part; the other questions are split into train and val
(``val_fraction``), a whole bundle is trained on them (SN memory, RQM, both fusions, the
threshold grids), and every gate decides the held-out fold. The decisions of all folds are
then scored together, so every labelled question is scored once, by gates that never saw it.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import Any

from quaderno.errors import ConfigError
from quaderno.gate.decision import GateDecision
from quaderno.gate.labels import LabelFile, LabelRecord
from quaderno.gate.train import train_bundle
from quaderno.index.embedders import Embedder

log = logging.getLogger(__name__)


def cross_validate(labels: LabelFile, embedder: Embedder, *, folds: int = 5, seed: int = 0,
                   val_fraction: float = 0.25, extra_memory: Sequence[LabelRecord] = (),
                   extra_llm: str = "", **train: Any
                   ) -> tuple[list[LabelRecord], dict[str, tuple[list[GateDecision], bool]]]:
    """(records in the order scored, gate name → (out-of-fold decisions, needs_response))."""
    if folds < 2:
        raise ConfigError(f"folds must be at least 2, got {folds}")
    if not 0 < val_fraction < 1:
        raise ConfigError(f"val_fraction must be in (0, 1), got {val_fraction}")
    records = [r for r in labels.records
               if r.answer_no_retrieval is not None and r.answer_retrieval is not None]
    if len(records) < folds * 4:
        raise ConfigError(f"{len(records)} answered labels are too few for {folds} folds")
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    parts = [order[i::folds] for i in range(folds)]
    scored: list[LabelRecord] = []
    decided: dict[str, tuple[list[GateDecision], bool]] = {}
    for k, held in enumerate(parts):
        rest = [i for i in order if i not in set(held)]
        n_val = max(2, int(round(val_fraction * len(rest))))
        split = {**{i: "val" for i in rest[:n_val]}, **{i: "train" for i in rest[n_val:]},
                 **{i: "test" for i in held}}
        fold = LabelFile(provenance=labels.provenance, records=[
            records[i].model_copy(update={"split": split[i]}) for i in order])
        bundle = train_bundle(fold, embedder, extra_memory=extra_memory, extra_llm=extra_llm,
                              seed=seed, **train)
        test = [records[i] for i in held]
        for name in bundle.names:
            gate = bundle.gate(name)
            decisions = gate.decide([r.question for r in test], [r.response for r in test])
            decided.setdefault(name, ([], gate.needs_response))[0].extend(decisions)
        scored.extend(test)
        log.info("fold %d/%d: %d held out, %d train, %d val", k + 1, folds, len(held),
                 len(rest) - n_val, n_val)
    return scored, decided
