"""RQM, the response quality model of CCSK §3.3 (Eq. 3–4): LightGBM on the closed-book
response, F_RQM = 1 − predicted quality.

Features (Eq. 3), in this fixed order: L = number of response tokens, E = unique tokens / L
(0 when L = 0), φ(r) (the response embedding, d values), C = cos(φ(r), φ(q)) — 3 + d values
(771 with the paper's 768-d BERT). Tokens are lowercase ``[a-z0-9]+`` words (REC R1).
The target Y is :func:`quaderno.gate.labels.rqm_target`. LightGBM as §4.3: 31 leaves,
learning rate 0.03, early stopping after 30 rounds on a 15% validation split (REC R3),
``cross_entropy`` objective so predictions lie in [0, 1]; seeded and deterministic. The
model is saved in LightGBM's text format, never pickled.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from quaderno.errors import ConfigError, IndexFormatError
from quaderno.index.embedders import Embedder, _normalize

log = logging.getLogger(__name__)

_WORD = re.compile(r"[a-z0-9]+")

PARAMS: dict[str, Any] = {
    "objective": "cross_entropy", "num_leaves": 31, "learning_rate": 0.03,
    "early_stopping_round": 30, "verbosity": -1, "deterministic": True,
    "force_row_wise": True, "num_threads": 1,
}


def length_richness(response: str) -> tuple[float, float]:
    """L and E of Eq. 3."""
    tokens = _WORD.findall(response.lower())
    n = len(tokens)
    return float(n), (len(set(tokens)) / n if n else 0.0)


def features(questions: Sequence[str], responses: Sequence[str], embedder: Embedder, *,
             response_vecs: np.ndarray | None = None, question_vecs: np.ndarray | None = None
             ) -> np.ndarray:
    """The Eq. 3 matrix, one row per (question, response): [L, E, φ(r), C]."""
    if len(questions) != len(responses):
        raise ConfigError(f"{len(questions)} questions but {len(responses)} responses")
    r = response_vecs if response_vecs is not None else embedder.embed_documents(list(responses))
    q = question_vecs if question_vecs is not None else embedder.embed_queries(list(questions))
    le = np.array([length_richness(t) for t in responses], dtype=np.float32).reshape(-1, 2)
    cos = np.einsum("ij,ij->i", _normalize(r), _normalize(q)).astype(np.float32).reshape(-1, 1)
    return np.hstack([le, np.asarray(r, dtype=np.float32), cos])


class ResponseQuality:
    """The fitted LightGBM regressor; :meth:`f_rqm` is 1 − predicted quality."""

    def __init__(self, *, seed: int = 0, n_estimators: int = 2000, valid_fraction: float = 0.15,
                 min_child_samples: int = 20) -> None:
        if not 0 < valid_fraction < 1:
            raise ConfigError(f"valid_fraction must be in (0, 1), got {valid_fraction}")
        if n_estimators < 1:
            raise ConfigError(f"n_estimators must be at least 1, got {n_estimators}")
        self.seed, self.n_estimators, self.valid_fraction = seed, n_estimators, valid_fraction
        self.min_child_samples = min_child_samples
        self.booster: Any = None

    def params(self) -> dict[str, Any]:
        return {**PARAMS, "seed": self.seed, "min_data_in_leaf": self.min_child_samples}

    def fit(self, x: np.ndarray, y: Sequence[float]) -> ResponseQuality:
        import lightgbm as lgb

        target = np.asarray(y, dtype=np.float64)
        if len(target) != len(x):
            raise ConfigError(f"{len(x)} feature rows but {len(target)} targets")
        if len(target) < 4:
            raise ConfigError(f"RQM needs at least 4 labelled responses, got {len(target)}")
        if target.min() < 0 or target.max() > 1:
            raise ConfigError("RQM targets must lie in [0, 1] (see labels.rqm_target)")
        order = np.random.default_rng(self.seed).permutation(len(target))
        n_valid = max(1, int(round(self.valid_fraction * len(target))))
        valid, train = order[:n_valid], order[n_valid:]
        dtrain = lgb.Dataset(x[train], label=target[train])
        dvalid = lgb.Dataset(x[valid], label=target[valid], reference=dtrain)
        self.booster = lgb.train(self.params(), dtrain, num_boost_round=self.n_estimators,
                                 valid_sets=[dvalid])
        log.info("RQM: %d trees (best iteration %s) on %d rows", self.booster.num_trees(),
                 self.booster.best_iteration, len(train))
        return self

    def quality(self, x: np.ndarray) -> np.ndarray:
        if self.booster is None:
            raise ConfigError("RQM is not fitted: train it (quaderno gate train) or load one")
        best = self.booster.best_iteration or None
        return np.clip(self.booster.predict(x, num_iteration=best), 0.0, 1.0)

    def f_rqm(self, x: np.ndarray) -> np.ndarray:
        """F_RQM = 1 − Y_RQM (Eq. 4), asserted to lie in [0, 1] (R4)."""
        f = 1.0 - self.quality(x)
        if not np.all((f >= 0) & (f <= 1)):
            raise ConfigError(f"F_RQM left [0, 1]: {f.min()}..{f.max()}")
        return f

    # -- persistence (text, never pickle) -----------------------------------------------
    def save(self, path: Path) -> None:
        if self.booster is None:
            raise ConfigError("nothing to save: RQM is not fitted")
        self.booster.save_model(str(path), num_iteration=self.booster.best_iteration or None)

    @classmethod
    def load(cls, path: Path) -> ResponseQuality:
        import lightgbm as lgb

        if not Path(path).is_file():
            raise IndexFormatError(f"{path}: RQM model file missing; the gate is damaged")
        model = cls()
        model.booster = lgb.Booster(model_file=str(path))
        return model
