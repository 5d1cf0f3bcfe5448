"""The threshold grid search (G1, T10) and Fig. 4's protocol (G2)."""

from __future__ import annotations

import json

import numpy as np

from quaderno.gate.grid import VALUES, fig4, grid_search
from quaderno.gate.rule import Thresholds, decide


def planted(seed: int = 0, n: int = 400):
    """Synthetic rows whose best decisions are exactly Eq. 7 with (0.3, 0.7, 0.8)."""
    rng = np.random.default_rng(seed)
    p, trust, single = rng.random(n), rng.random(n), rng.random(n)
    y, _ = decide(p, trust, single, Thresholds(tau_pred=0.3, tau_conf=0.7, tau_single=0.8))
    acc_self, acc_ir = (~y).astype(float), y.astype(float)  # retrieval right iff y
    return p, trust, single, acc_self, acc_ir


def test_t10_recovers_a_planted_optimum_deterministically(tmp_path):
    args = planted()
    result = grid_search(*args)
    assert result.best.triple() == (0.3, 0.7, 0.8)
    assert result.best_row.acc == 1.0
    assert len(result.rows) == 729 and len(VALUES) == 9
    assert grid_search(*args) == result
    path = tmp_path / "grid.json"
    result.save(path)
    assert len(json.loads(path.read_text())["rows"]) == 729


def test_ties_go_to_lower_retrieval_then_to_the_default():
    n = 10
    p, trust, single = np.full(n, 0.55), np.full(n, 0.9), np.full(n, 0.55)
    same = np.ones(n)  # both answers right: every triple ties on ACC
    best = grid_search(p, trust, single, same, same).best
    # lowest retrieval rate (0: τ_pred ≥ 0.6) and then nearest (0.6, 0.5, 0.5)
    assert best.triple() == (0.6, 0.5, 0.5)


def test_fig4_protocol_fully_dynamic_is_best():
    settings = fig4(*planted(1))
    assert set(settings) == {"fully-fixed", "fully-dynamic", "fix-tau_pred", "fix-tau_conf",
                             "fix-tau_single"}
    assert settings["fully-fixed"].best.triple() == (0.6, 0.5, 0.5)
    assert len(settings["fully-fixed"].rows) == 1 and len(settings["fix-tau_conf"].rows) == 81
    top = settings["fully-dynamic"].best_row.acc
    assert all(top >= s.best_row.acc for s in settings.values())
    assert settings["fix-tau_pred"].best.tau_pred == 0.6
