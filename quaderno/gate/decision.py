"""What a gate decided for one question, and the signals it decided from.

:class:`GateDecision` is stored in ``Answer.gate`` and in the gate's trace span, so a reader
sees which branch of Eq. 7 fired, with which scores and thresholds. It imports nothing heavy:
``quaderno.methods.answer`` depends on it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Branch = Literal["fused", "fallback-sn", "fallback-rqm", "single", "constant"]


class GateDecision(BaseModel):
    """One decision: ``retrieve`` is Eq. 7's y. Signals a gate does not use stay ``None``."""

    model_config = ConfigDict(extra="forbid")

    gate: str
    retrieve: bool
    branch: Branch = "single"
    f_sn: float | None = None
    f_rqm: float | None = None
    g_a: list[float] | None = None  # confidence weights σ(W_aP P): [SN, RQM]
    g_w: list[float] | None = None  # distribution weights softmax(W_wP P)
    g: list[float] | None = None  # (g_a ⊙ g_w) / Σ
    p: float | None = None  # the score compared with the threshold (g^T F for CCSK)
    trust: float | None = None  # the value compared with τ_conf
    thresholds: dict[str, float] = Field(default_factory=dict)
    novelty_fired: bool = False  # SN: nearest memory question less similar than θ_new
    max_sim: float | None = None
    neighbours: list[str] = Field(default_factory=list)  # SN's top-K memory questions
    labels_llm: str | None = None  # the LLM the gate's labels were made with
    seconds: float = 0.0  # time the decision took (not the closed-book generation)
    notes: list[str] = Field(default_factory=list)
