"""Paired comparison of two runs over the same questions.

Two methods run on the same questions differ per question; at a few hundred questions the
noise of a difference of means is large (checklist A20: n = 256 at p ≈ 0.35 gives ±5.8
points), and pairing removes the questions' own difficulty from it. For the questions
both runs scored (matched by id) :func:`paired_difference` gives the mean of ``a − b``, a
percentile bootstrap confidence interval of that mean (resampling questions, fixed seed),
how many questions each run did better on, and, for 0/1 metrics, McNemar's exact p on the
discordant questions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel

from quaderno.errors import ConfigError

RESAMPLES = 2000
SEED = 0
CONFIDENCE = 0.95
_BATCH = 250  # resamples drawn at once (bounds memory at large n)


class PairedDifference(BaseModel):
    """Run ``a`` against run ``b`` on one metric, over the questions both scored."""

    metric: str
    a: str
    b: str
    n: int
    mean_a: float
    mean_b: float
    diff: float  # mean of a − b per question
    ci_low: float
    ci_high: float
    better: int  # questions where a scored higher
    worse: int  # questions where b scored higher
    tied: int
    mcnemar_p: float | None = None  # 0/1 metrics only
    confidence: float = CONFIDENCE
    resamples: int = RESAMPLES
    seed: int = SEED


def _check(resamples: int, confidence: float) -> None:
    if resamples < 1:
        raise ConfigError(f"resamples must be at least 1, got {resamples}")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be between 0 and 1 (e.g. 0.95), got {confidence}")


def bootstrap_ci(diffs: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED,
                 confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``diffs``: questions drawn with
    replacement ``resamples`` times from a generator seeded with ``seed``."""
    _check(resamples, confidence)
    values = np.asarray(diffs, dtype=float)
    if values.size == 0:
        raise ConfigError("no paired values to bootstrap: the runs share no scored question")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, _BATCH):
        count = min(_BATCH, resamples - start)
        idx = rng.integers(0, values.size, size=(count, values.size))
        means[start:start + count] = values[idx].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def mcnemar_exact(better: int, worse: int) -> float:
    """Two-sided exact McNemar p: the binomial test of ``better`` successes in
    ``better + worse`` discordant questions at p = ½ (1 when there are none)."""
    if better < 0 or worse < 0:
        raise ConfigError(f"counts must not be negative, got {better} and {worse}")
    n = better + worse
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(better, worse) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def paired_difference(a: Mapping[str, float], b: Mapping[str, float], *, metric: str = "",
                      label_a: str = "a", label_b: str = "b", resamples: int = RESAMPLES,
                      seed: int = SEED, confidence: float = CONFIDENCE,
                      ) -> PairedDifference | None:
    """``a`` against ``b``, each a question id → score; None when no question is in both."""
    _check(resamples, confidence)
    ids = [q for q in a if q in b]
    if not ids:
        return None
    xa = np.array([a[q] for q in ids], dtype=float)
    xb = np.array([b[q] for q in ids], dtype=float)
    diffs = xa - xb
    low, high = bootstrap_ci(diffs, resamples=resamples, seed=seed, confidence=confidence)
    tied_mask = np.isclose(diffs, 0.0, rtol=0.0, atol=1e-12)
    better = int(np.sum((diffs > 0) & ~tied_mask))
    worse = int(np.sum((diffs < 0) & ~tied_mask))
    binary = bool(np.isin(xa, (0.0, 1.0)).all() and np.isin(xb, (0.0, 1.0)).all())
    return PairedDifference(
        metric=metric, a=label_a, b=label_b, n=len(ids), mean_a=float(xa.mean()),
        mean_b=float(xb.mean()), diff=float(diffs.mean()), ci_low=low, ci_high=high,
        better=better, worse=worse, tied=int(tied_mask.sum()),
        mcnemar_p=mcnemar_exact(better, worse) if binary else None,
        confidence=confidence, resamples=resamples, seed=seed)
