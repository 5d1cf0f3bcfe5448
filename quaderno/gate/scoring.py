"""Scoring gates on answered questions: precomputed answer files and live runs alike.

For each question a gate's decision picks the retrieval answer (y = 1) or the closed-book
one (y = 0); the picked answers are scored with quaderno's EM, F1 and ACC (= cover-EM,
spec §2), next to the retrieval rate, the net gain over never and always retrieving, LLM
calls per question, and how the decisions agree with the labels (y = [ir_better]): AUROC of
the gate's score and balanced accuracy of its decisions. :func:`branch_table` says, per
branch of Eq. 7, where questions were sent and whether that helped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from quaderno.errors import ConfigError
from quaderno.eval import metrics as M
from quaderno.gate.decision import GateDecision
from quaderno.gate.labels import LabelRecord, label_to_y, normalize_question


class GateScore(BaseModel):
    gate: str
    n: int
    em: float
    f1: float
    acc: float
    retrieval_rate: float
    gain_over_never: float  # ACC − ACC(never)
    gain_over_always: float  # ACC − ACC(always)
    llm_calls: float  # per question
    auroc: float | None = None  # of the gate's score p against y = [ir_better]
    balanced_accuracy: float | None = None  # of the decisions against y
    fallback_rate: float | None = None  # CCSK: share of questions Eq. 7 sent to a fallback
    novelty_rate: float | None = None
    mean_gate_ms: float = 0.0
    branches: dict[str, int] = Field(default_factory=dict)


def _answers(record: LabelRecord) -> tuple[str, str]:
    if record.answer_no_retrieval is None or record.answer_retrieval is None:
        raise ConfigError(f"question {record.question!r} needs both answers to be scored "
                          "(answer_no_retrieval and answer_retrieval)")
    return record.answer_no_retrieval, record.answer_retrieval


def answers_acc(records: Sequence[LabelRecord]) -> tuple[np.ndarray, np.ndarray]:
    """ACC (cover-EM) of each record's closed-book and retrieval answers."""
    pairs = [_answers(r) for r in records]
    return (np.array([M.cover_em(a0, r.golden_answers) for (a0, _), r in zip(pairs, records)]),
            np.array([M.cover_em(a1, r.golden_answers) for (_, a1), r in zip(pairs, records)]))


def llm_calls(record: LabelRecord, retrieve: bool, needs_response: bool) -> int:
    """LLM calls :class:`~quaderno.gate.wrapper.GatedMethod` makes for one question: the
    closed-book call when the gate reads the response or says no, plus the method's calls
    when it says yes (a gate that reads only the question decides first)."""
    closed = record.llm_calls_no_retrieval if record.llm_calls_no_retrieval is not None else 1
    rag = record.llm_calls_retrieval if record.llm_calls_retrieval is not None else 1
    return (closed if (needs_response or not retrieve) else 0) + (rag if retrieve else 0)


def score_decisions(records: Sequence[LabelRecord], decisions: Sequence[GateDecision], *,
                    needs_response: bool = True) -> GateScore:
    """Score one gate's decisions on ``records`` (same order)."""
    if len(records) != len(decisions):
        raise ConfigError(f"{len(records)} records but {len(decisions)} decisions")
    if not records:
        raise ConfigError("nothing to score: no records")
    acc_never, acc_always = answers_acc(records)
    picked = [_answers(r)[1 if d.retrieve else 0] for r, d in zip(records, decisions)]
    em = np.mean([M.em(a, r.golden_answers) for a, r in zip(picked, records)])
    f1 = np.mean([M.f1(a, r.golden_answers) for a, r in zip(picked, records)])
    acc = float(np.mean([M.cover_em(a, r.golden_answers) for a, r in zip(picked, records)]))
    y = np.array([label_to_y(r.labelled()) for r in records])
    pred = np.array([d.retrieve for d in decisions])
    scores = [d.p if d.p is not None else (d.f_sn if d.f_sn is not None else float(d.retrieve))
              for d in decisions]
    branches: dict[str, int] = {}
    for d in decisions:
        branches[d.branch] = branches.get(d.branch, 0) + 1
    fused = [d for d in decisions if d.branch in ("fused", "fallback-sn", "fallback-rqm")]
    return GateScore(
        gate=decisions[0].gate, n=len(records), em=float(em), f1=float(f1), acc=acc,
        retrieval_rate=float(pred.mean()), gain_over_never=acc - float(np.mean(acc_never)),
        gain_over_always=acc - float(np.mean(acc_always)),
        llm_calls=float(np.mean([llm_calls(r, d.retrieve, needs_response)
                                 for r, d in zip(records, decisions)])),
        auroc=_auroc(y, np.asarray(scores, dtype=float)),
        balanced_accuracy=_balanced(y, pred),
        fallback_rate=(sum(d.branch != "fused" for d in fused) / len(fused)) if fused else None,
        novelty_rate=float(np.mean([d.novelty_fired for d in decisions])),
        mean_gate_ms=float(np.mean([d.seconds for d in decisions]) * 1000), branches=branches)


def _auroc(y: np.ndarray, s: np.ndarray) -> float | None:
    if len(set(y.tolist())) < 2 or np.any(np.isnan(s)):
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, s))


def _balanced(y: np.ndarray, pred: np.ndarray) -> float | None:
    if len(set(y.tolist())) < 2:
        return None
    from sklearn.metrics import balanced_accuracy_score

    return float(balanced_accuracy_score(y, pred))


def branch_table(records: Sequence[LabelRecord], decisions: Sequence[GateDecision]
                 ) -> list[dict[str, Any]]:
    """Per branch and decision: how many questions, and their labels — retrieved:
    ir_better = helped, ir_worse = hurt, same = no change; not retrieved: ir_better =
    missed, ir_worse = avoided harm, same = no change."""
    rows: dict[tuple[str, bool], dict[str, Any]] = {}
    for r, d in zip(records, decisions):
        row = rows.setdefault((d.branch, d.retrieve), {
            "branch": d.branch, "retrieve": d.retrieve, "n": 0, "ir_better": 0, "ir_worse": 0,
            "same": 0, "acc_change": 0})
        row["n"] += 1
        row[r.labelled()] += 1
        a0, a1 = _answers(r)
        delta = M.cover_em(a1, r.golden_answers) - M.cover_em(a0, r.golden_answers)
        row["acc_change"] += int(delta) if d.retrieve else 0
    return sorted(rows.values(), key=lambda x: (x["branch"], not x["retrieve"]))


def question_rows(records: Sequence[LabelRecord], decisions: Sequence[GateDecision]
                  ) -> list[dict[str, Any]]:
    """One row per question: what the gate saw, decided, and whether it helped."""
    out = []
    for r, d in zip(records, decisions):
        a0, a1 = _answers(r)
        out.append({"question": r.question, "gold": r.golden_answers[0] if r.golden_answers
                    else "", "label": r.labelled(), "branch": d.branch, "retrieve": d.retrieve,
                    "f_sn": _round(d.f_sn), "f_rqm": _round(d.f_rqm), "p": _round(d.p),
                    "novelty": d.novelty_fired, "closed_book": a0, "retrieval": a1,
                    "acc_picked": M.cover_em(a1 if d.retrieve else a0, r.golden_answers)})
    return out


def _round(v: float | None) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else round(v, 3)


def score_run(results: Sequence[Any], records: Sequence[LabelRecord] = ()) -> dict[str, Any]:
    """A live run's summary (``quaderno eval --gate``'s results.jsonl records): EM, F1, ACC
    of the answers given, retrieval rate, LLM calls per question, branches, gate time. With
    label ``records`` holding both answers of the run's questions (matched by normalized
    question), also what offline scoring gives — :func:`score_decisions` on the run's own
    decisions (gains over never and always, AUROC, balanced accuracy) and
    :func:`branch_table` — so a live run and offline scoring are read the same way."""
    if not results:
        raise ConfigError("the run has no results")
    gated = [r for r in results if r.gate is not None]
    branches: dict[str, int] = {}
    for r in gated:
        branches[r.gate.branch] = branches.get(r.gate.branch, 0) + 1
    out: dict[str, Any] = {
        "n": len(results), "gated": len(gated),
        "em": float(np.mean([M.em(r.prediction, r.answers) for r in results])),
        "f1": float(np.mean([M.f1(r.prediction, r.answers) for r in results])),
        "acc": float(np.mean([M.cover_em(r.prediction, r.answers) for r in results])),
        "retrieval_rate": float(np.mean([bool(r.retrieval_rounds) for r in results])),
        "llm_calls": float(np.mean([r.llm_calls for r in results])),
        "gate_ms": float(np.mean([r.gate.seconds for r in gated]) * 1000) if gated else None,
        "branches": branches}
    if records:
        by_key = {normalize_question(r.question): r for r in records
                  if r.answer_no_retrieval is not None and r.answer_retrieval is not None}
        pairs = [(by_key[k], r.gate) for r in gated
                 if (k := normalize_question(r.question)) in by_key]
        if not pairs:
            raise ConfigError("none of the run's gated questions has both answers in the "
                              "label records: label them (quaderno gate label) first")
        matched, decisions = [p[0] for p in pairs], [p[1] for p in pairs]
        out["matched"] = len(pairs)
        out["score"] = score_decisions(matched, decisions,
                                       needs_response=True).model_dump()
        out["score"]["llm_calls"] = out["llm_calls"]  # the run's own count
        out["branch_table"] = branch_table(matched, decisions)
    return out
