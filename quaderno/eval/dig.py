"""Document information gain (PAGER, Appendix A.3, after InfoGain-RAG).

DIG(O | q) = p(y | q, O) − p(y | q): how much a knowledge representation O (a page, notes,
retrieved documents) raises the model's probability of the gold answer y. The probability
of y is calibrated (Eq. 13–14): each token's probability is averaged over a sliding window
of ``window`` tokens (Eq. 13), and the first ``head`` tokens are weighted by
``head_weight · alpha``, the rest by ``1 − alpha`` (Eq. 14):

    p(y | x) = Π_{i ≤ head} p_s(t_i)^(ω_i · α) · Π_{j > head} p_s(t_j)^(1 − α)

The papers publish no values for W, k, ω and α; quaderno's defaults (:class:`DIGParams`)
are stated in every run's configuration. The probabilities come from teacher forcing: the
answering model scores the gold answer as its reply (:meth:`LM.score`), so DIG needs a
backend that implements :class:`~quaderno.llm.base.ContinuationScorer`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace

DIG_ALIASES = ("first", "likely", "max_gain")
WITH_CONTEXT = ("Answer the question using the knowledge below.\n\nKnowledge:\n{context}\n\n"
                "Question: {question}\nAnswer:")
WITHOUT_CONTEXT = "Answer the question.\n\nQuestion: {question}\nAnswer:"


class DIGParams(BaseModel):
    """Calibration of Eq. 13–14 (validated: a bad value is named)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    window: int = Field(default=3, ge=1, description="W: sliding-window size (odd)")
    head: int = Field(default=3, ge=0, description="k: leading tokens weighted apart")
    head_weight: float = Field(default=2.0, gt=0, description="ω_i of each leading token")
    alpha: float = Field(default=0.5, ge=0, le=1, description="α: emphasis on the head")
    max_answers: int = Field(default=3, ge=1, description="gold answers considered")
    alias: Literal["first", "likely", "max_gain"] = Field(
        default="first", description="which gold alias y is: the first; the one the model "
                                     "finds likeliest with the context, p(y | q, O); or "
                                     "max_gain, the largest gain (optimistic: it picks y by "
                                     "the quantity it reports; runs saved before this option "
                                     "existed used it)")

    @field_validator("window")
    @classmethod
    def _odd(cls, value: int) -> int:
        if value % 2 == 0:
            raise ValueError(f"window must be odd (a window centred on each token), got {value}")
        return value


def smooth(probs: Sequence[float], window: int) -> list[float]:
    """Eq. 13: each probability averaged over the window centred on it; at the ends the
    window holds only the tokens that exist."""
    half = window // 2
    out = []
    for i in range(len(probs)):
        part = probs[max(0, i - half): i + half + 1]
        out.append(sum(part) / len(part))
    return out


def calibrated_log_probability(logprobs: Sequence[float], params: DIGParams) -> float:
    """log p(y | x) of Eq. 14 from the answer's token log-probabilities."""
    if not logprobs:
        raise ValueError("an answer has at least one token")
    smoothed = smooth([math.exp(lp) for lp in logprobs], params.window)
    total = 0.0
    for i, p in enumerate(smoothed):
        exponent = params.head_weight * params.alpha if i < params.head else 1 - params.alpha
        total += exponent * math.log(max(p, 1e-300))
    return total


async def information_gain(lm: LM, question: str, context: str, answers: Sequence[str],
                           params: DIGParams | None = None, *,
                           trace: Trace | None = None) -> dict[str, float] | None:
    """DIG of ``context`` for ``question`` for one gold alias, chosen by ``params.alias``
    among the first ``max_answers`` gold answers without looking at the gain (unless
    ``max_gain`` is asked for by name), with the two probabilities it came from and the
    alias's index. None when there is no context (a method that retrieved nothing gains
    nothing measurable) or no gold answer."""
    params = params or DIGParams()
    golds = [a.strip() for a in answers if a.strip()][:params.max_answers]
    if not context.strip() or not golds:
        return None
    if params.alias == "first":
        golds = golds[:1]
    best: dict[str, float] | None = None
    for index, gold in enumerate(golds):
        with_ctx = await lm.score(WITH_CONTEXT.format(context=context, question=question),
                                  gold, trace=trace, step="dig.with_context")
        p_with = math.exp(calibrated_log_probability([t.logprob for t in with_ctx], params))
        if best is not None and params.alias == "likely" and p_with <= best["dig_p_with"]:
            continue  # not the likeliest alias: its p(y | q) is never needed
        without = await lm.score(WITHOUT_CONTEXT.format(question=question), gold,
                                 trace=trace, step="dig.without_context")
        p_without = math.exp(calibrated_log_probability([t.logprob for t in without], params))
        gain = {"dig": p_with - p_without, "dig_p_with": p_with, "dig_p_without": p_without,
                "dig_alias": float(index)}
        if best is None or params.alias == "likely" or gain["dig"] > best["dig"]:
            best = gain
    return best
