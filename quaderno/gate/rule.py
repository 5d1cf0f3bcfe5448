"""The decision rule of CCSK, Eq. (7), as the text reads it (spec D1):

    if trust > τ_conf:  y = [gᵀF > τ_pred]              branch "fused"
    else:               y = [F_{argmax g_w} > τ_single]  branch "fallback-sn" / "fallback-rqm"

Every comparison is a strict ``>``; the boundary trust = τ_conf goes to the fallback (the
text: "If max(g) < τ_conf"). trust is max(g) (paper) or max(g_a ⊙ g_w) (``trust=
"unnormalized"``, see :mod:`.fusion`). A tie of g_w picks SN.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

DEFAULT = (0.6, 0.5, 0.5)  # the spec's suggested start (D2)
PAPER_BEST = (0.4, 0.3, 0.3)  # §4.6


class Thresholds(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tau_pred: float = Field(DEFAULT[0], ge=0, le=1)
    tau_conf: float = Field(DEFAULT[1], ge=0, le=1)
    tau_single: float = Field(DEFAULT[2], ge=0, le=1)

    @classmethod
    def of(cls, triple: tuple[float, float, float]) -> Thresholds:
        return cls(tau_pred=triple[0], tau_conf=triple[1], tau_single=triple[2])

    def triple(self) -> tuple[float, float, float]:
        return (self.tau_pred, self.tau_conf, self.tau_single)


def single_score(f_sn: np.ndarray, f_rqm: np.ndarray, g_w: np.ndarray) -> tuple[np.ndarray,
                                                                                 np.ndarray]:
    """"max(g_w) → F": the raw score of the module with the larger g_w (ties: SN), and
    whether that module is RQM."""
    use_rqm = np.asarray(g_w)[:, 1] > np.asarray(g_w)[:, 0]
    return np.where(use_rqm, f_rqm, f_sn), use_rqm


def decide(p: np.ndarray, trust: np.ndarray, single: np.ndarray, th: Thresholds
           ) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 7 over arrays: (y, fused) — y the decisions, fused whether the first branch fired."""
    fused = np.asarray(trust) > th.tau_conf
    y = np.where(fused, np.asarray(p) > th.tau_pred, np.asarray(single) > th.tau_single)
    return y, fused


def branch_names(fused: np.ndarray, use_rqm: np.ndarray) -> list[str]:
    return ["fused" if f else ("fallback-rqm" if r else "fallback-sn")
            for f, r in zip(fused, use_rqm)]
