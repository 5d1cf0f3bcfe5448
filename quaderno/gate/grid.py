"""The threshold grid search of CCSK §4.6 (spec G1, G2).

Every τ ∈ {0.1, …, 0.9} (9³ = 729 triples) is tried on validation data only; the objective
is end-to-end ACC (cover-EM of the answer the decision picks); ties go to the lower
retrieval rate, then to the triple nearest (L1) the default (0.6, 0.5, 0.5). The whole grid
is kept (:meth:`GridResult.save`). :func:`fig4` runs the paper's Fig. 4 protocol:
Fully-Fixed, Fully-Dynamic, and "fix one, tune two" for each τ.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from quaderno.errors import ConfigError
from quaderno.gate.rule import DEFAULT, Thresholds, decide

VALUES = tuple(round(v / 10, 1) for v in range(1, 10))
NAMES = ("tau_pred", "tau_conf", "tau_single")


class GridRow(BaseModel):
    tau_pred: float
    tau_conf: float
    tau_single: float
    acc: float
    retrieval_rate: float
    fallback_rate: float


class GridResult(BaseModel):
    best: Thresholds
    best_row: GridRow
    rows: list[GridRow]

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.model_dump(), indent=1), encoding="utf-8")


def grid_search(p: np.ndarray, trust: np.ndarray, single: np.ndarray, acc_self: np.ndarray,
                acc_ir: np.ndarray, *, fixed: dict[str, float] | None = None,
                default: tuple[float, float, float] = DEFAULT) -> GridResult:
    """Best thresholds on validation rows; ``fixed`` pins some τ (by name) to a value."""
    fixed = dict(fixed or {})
    unknown = set(fixed) - set(NAMES)
    if unknown:
        raise ConfigError(f"unknown thresholds {sorted(unknown)}; use {', '.join(NAMES)}")
    # the scores keep their dtype: the gates compare float32 scores with τ at inference, and
    # F_SN = 0.6 (float32) > 0.6 flips when upcast first; tuning must decide the same way
    arrays = [np.asarray(a) for a in (p, trust, single)] + [
        np.asarray(a, dtype=np.float64) for a in (acc_self, acc_ir)]
    if len({len(a) for a in arrays}) != 1 or not len(arrays[0]):
        raise ConfigError("grid search needs equally long, non-empty arrays")
    p, trust, single, acc_self, acc_ir = arrays
    axes = [(fixed[n],) if n in fixed else VALUES for n in NAMES]
    rows, best_key, best = [], None, None
    for triple in itertools.product(*axes):
        th = Thresholds.of(triple)
        y, fused = decide(p, trust, single, th)
        row = GridRow(tau_pred=triple[0], tau_conf=triple[1], tau_single=triple[2],
                      acc=float(np.where(y, acc_ir, acc_self).mean()),
                      retrieval_rate=float(y.mean()), fallback_rate=float(1 - fused.mean()))
        rows.append(row)
        key = (-row.acc, row.retrieval_rate,
               round(sum(abs(a - b) for a, b in zip(triple, default)), 6))
        if best_key is None or key < best_key:
            best_key, best = key, row
    assert best is not None
    return GridResult(best=Thresholds.of((best.tau_pred, best.tau_conf, best.tau_single)),
                      best_row=best, rows=rows)


def fig4(p: np.ndarray, trust: np.ndarray, single: np.ndarray, acc_self: np.ndarray,
         acc_ir: np.ndarray, *, default: tuple[float, float, float] = DEFAULT
         ) -> dict[str, GridResult]:
    """Fig. 4's settings on validation rows: Fully-Fixed (all at ``default``), Fully-Dynamic
    (all tuned) and, for each τ, that τ fixed at its default with the other two tuned."""
    args = (p, trust, single, acc_self, acc_ir)
    out = {"fully-fixed": grid_search(*args, fixed=dict(zip(NAMES, default)), default=default),
           "fully-dynamic": grid_search(*args, default=default)}
    for name, value in zip(NAMES, default):
        out[f"fix-{name}"] = grid_search(*args, fixed={name: value}, default=default)
    return out
