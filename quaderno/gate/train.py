"""Training a gate bundle from a label file (spec A7: cross-fitting).

- SN memory: the ``train`` labels (plus, optionally, other labels such as SKR's, recorded
  per source with the LLM that made them), deduplicated against every ``val`` and ``test``
  question and against ``exclude_questions`` (other evaluation sets; SN6). θ_new is
  calibrated on the memory (SN3).
- RQM: fitted on the ``train`` closed-book responses and their targets (computed from the
  response and the golden answers when a label file has none).
- Fusion: fitted on 5-fold out-of-fold F_SN and F_RQM of the ``train`` rows (each fold's SN
  memory and RQM never saw the fold), y = [ir_better] (L3). Two fusions: ``ccsk``
  (paper-literal) and ``ccsk-rec`` (token attention, unnormalised trust).
- Thresholds: Eq. 7's three by the 729-triple grid on ``val`` (ACC), Fig. 4's protocol too;
  the single-score baselines' τ (and the linear fusion's w) on ``val`` the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from quaderno.errors import ConfigError
from quaderno.gate import grid as G
from quaderno.gate.fusion import AttentionFusion, fusion_inputs, train_fusion
from quaderno.gate.labels import (LabelFile, LabelRecord, label_to_y, normalize_question,
                                  target_for)
from quaderno.gate.rqm import ResponseQuality, features
from quaderno.gate.rule import DEFAULT, single_score
from quaderno.gate.scoring import answers_acc
from quaderno.gate.sn import SimilarQueries
from quaderno.gate.store import FusionConfig, GateBundle, Manifest, SNConfig
from quaderno.index.embedders import Embedder

log = logging.getLogger(__name__)

VARIANTS = {"ccsk": ("pooled", "normalized"), "ccsk-rec": ("token", "unnormalized")}


def _need_answers(records: Sequence[LabelRecord], split: str) -> None:
    bad = [r.question for r in records if r.answer_no_retrieval is None
           or r.answer_retrieval is None]
    if bad:
        raise ConfigError(f"{len(bad)} {split} records lack an answer (first: {bad[0]!r}); "
                          "label them with `quaderno gate label`")


def tune_single(score: np.ndarray, acc_self: np.ndarray, acc_ir: np.ndarray,
                default: float = 0.5) -> tuple[float, float]:
    """τ ∈ {0.1..0.9} maximising ACC of [score > τ] — :func:`grid.grid_search` with every row
    on the fused branch (trust 1 > τ_conf) and p = ``score``; ties: lower retrieval rate,
    nearer ``default``. Returns (τ, ACC)."""
    score = np.asarray(score)  # its own dtype: compared with τ as the gate compares it
    result = G.grid_search(score, np.ones_like(score), np.zeros_like(score), acc_self, acc_ir,
                           fixed={"tau_conf": G.VALUES[0], "tau_single": 0.5},
                           default=(default, G.VALUES[0], 0.5))
    return result.best.tau_pred, result.best_row.acc


def rqm_targets(records: Sequence[LabelRecord], embedder: Embedder,
                weights: Sequence[float] = (0.3, 0.7)) -> np.ndarray:
    """Each record's RQM target: the stored one, else computed from its response and golden
    answers with the labels' own function (:func:`~quaderno.gate.labels.target_for`)."""
    out = []
    for r in records:
        if r.rqm_target is None:
            if not r.golden_answers:
                raise ConfigError(f"question {r.question!r} has no rqm_target and no golden "
                                  "answers to compute it from: label it with `quaderno gate "
                                  "label` or add its golden_answers")
            out.append(target_for(r.response, r.golden_answers, embedder, weights))
        else:
            out.append(r.rqm_target)
    return np.asarray(out, dtype=np.float64)


def train_bundle(labels: LabelFile, embedder: Embedder, *,
                 extra_memory: Sequence[LabelRecord] = (), extra_llm: str = "",
                 exclude_questions: Sequence[str] = (),
                 seed: int = 0, folds: int = 5, k: int = 5, novelty: bool = True,
                 novelty_percentile: float = 5.0, min_child_samples: int = 20,
                 token_len: int = 32, epochs: int = 30, pos_weight: float | None = None,
                 rqm_rounds: int = 2000) -> GateBundle:
    """Train every gate of a bundle (see the module docstring)."""
    torch.manual_seed(seed)
    train, val = labels.split("train"), labels.split("val")
    test = labels.split("test")
    if len(train) < folds * 2:
        raise ConfigError(f"{len(train)} train labels are too few for {folds}-fold "
                          "cross-fitting; label more (quaderno gate label --split train)")
    if not val:
        raise ConfigError("no val labels: the thresholds are tuned on val (quaderno gate "
                          "label --split val)")
    _need_answers(train, "train")
    _need_answers(val, "val")
    held_out = {normalize_question(r.question) for r in [*val, *test]}
    # evaluation questions from elsewhere (gate train --exclude): never in the memory
    excluded = {normalize_question(q) for q in exclude_questions}
    train = [r for r in train if normalize_question(r.question) not in held_out]
    excluded_train = sum(normalize_question(r.question) in excluded for r in train)
    train = [r for r in train if normalize_question(r.question) not in excluded]
    seen = {normalize_question(r.question) for r in train}
    extra = []
    for r in extra_memory:
        key = normalize_question(r.question)
        if key not in held_out and key not in seen and key not in excluded:
            seen.add(key)
            extra.append(r)
    excluded_extra = len({key for r in extra_memory
                          if (key := normalize_question(r.question)) in excluded})
    if excluded:
        log.info("--exclude: %d train and %d extra memory questions removed", excluded_train,
                 excluded_extra)
    log.info("train %d, val %d, extra memory %d (of %d after dedupe)", len(train), len(val),
             len(extra), len(extra_memory))
    y_train = np.array([label_to_y(r.labelled()) for r in train])

    # embeddings, once
    q_train = embedder.embed_queries([r.question for r in train])
    r_train = embedder.embed_documents([r.response for r in train])
    q_extra = embedder.embed_queries([r.question for r in extra]) if extra else np.zeros(
        (0, embedder.dim), dtype=np.float32)
    x_train = features([r.question for r in train], [r.response for r in train], embedder,
                       response_vecs=r_train, question_vecs=q_train)
    provenance = labels.provenance
    t_train = rqm_targets(train, embedder,
                          provenance.rqm_weights if provenance is not None else (0.3, 0.7))

    def sn_on(idx: np.ndarray, mode: str = "drop_same") -> SimilarQueries:
        records = [*(train[i] for i in idx), *extra]
        vectors = np.vstack([q_train[idx], q_extra])
        return SimilarQueries(embedder, k=k, memory=mode, novelty=novelty,  # type: ignore[arg-type]
                              novelty_percentile=novelty_percentile).fit(records, vectors)

    def rqm_on(idx: np.ndarray) -> ResponseQuality:
        return ResponseQuality(seed=seed, min_child_samples=min_child_samples,
                               n_estimators=rqm_rounds).fit(
            x_train[idx], t_train[idx])

    # out-of-fold F_SN and F_RQM for the fusion's training rows
    from sklearn.model_selection import KFold

    oof = np.zeros((len(train), 2), dtype=np.float32)
    for fold, (fit_idx, out_idx) in enumerate(
            KFold(folds, shuffle=True, random_state=seed).split(train)):
        sn = sn_on(fit_idx)
        oof[out_idx, 0] = [s.f_sn for s in sn.score_vectors(
            q_train[out_idx], questions=[train[i].question for i in out_idx])]
        oof[out_idx, 1] = rqm_on(fit_idx).f_rqm(x_train[out_idx])
        log.info("fold %d: %d rows", fold + 1, len(out_idx))

    all_idx = np.arange(len(train))
    sn_final, sn_all = sn_on(all_idx), sn_on(all_idx, "all")
    rqm_final = rqm_on(all_idx)

    # validation signals from the final SN and RQM
    q_val = embedder.embed_queries([r.question for r in val])
    r_val = embedder.embed_documents([r.response for r in val])
    f_val = np.stack([[s.f_sn for s in sn_final.score_vectors(
        q_val, questions=[r.question for r in val])],
                      rqm_final.f_rqm(features([r.question for r in val],
                                               [r.response for r in val], embedder,
                                               response_vecs=r_val, question_vecs=q_val))],
                     axis=1).astype(np.float32)
    acc_self, acc_ir = answers_acc(val)

    fusions: dict[str, AttentionFusion] = {}
    configs: dict[str, FusionConfig] = {}
    extras: dict[str, Any] = {}
    summary: dict[str, Any] = {}
    for name, (attention, trust) in VARIANTS.items():
        model = AttentionFusion(embedder.dim, attention=attention, trust=trust)  # type: ignore[arg-type]
        x_fit = fusion_inputs(embedder, q_train, r_train, oof, [r.question for r in train],
                              [r.response for r in train], attention=attention,
                              token_len=token_len)
        history = train_fusion(model, x_fit, y_train, seed=seed, epochs=epochs,
                               pos_weight=pos_weight)
        x_val = fusion_inputs(embedder, q_val, r_val, f_val, [r.question for r in val],
                              [r.response for r in val], attention=attention,
                              token_len=token_len)
        with torch.no_grad():
            out = model(x_val)
        single, _ = single_score(f_val[:, 0], f_val[:, 1], out.g_w.numpy())
        args = (out.p.numpy(), out.trust.numpy(), single, acc_self, acc_ir)
        result = G.grid_search(*args)
        extras[f"grid-{name}.json"] = result.model_dump()
        extras[f"fig4-{name}.json"] = {k: {"best": v.best.model_dump(),
                                           "val": v.best_row.model_dump()}
                                       for k, v in G.fig4(*args).items()}
        fusions[name] = model
        configs[name] = FusionConfig(dim=embedder.dim, attention=attention, trust=trust,
                                     token_len=token_len, thresholds=result.best)
        summary[name] = {"epochs": len(history), "history": history,
                         "val": result.best_row.model_dump()}

    # the single-score baselines, tuned on val the same way
    tau_sn, acc_sn = tune_single(f_val[:, 0], acc_self, acc_ir)
    tau_rqm, acc_rqm = tune_single(f_val[:, 1], acc_self, acc_ir)
    best_lin: tuple[Any, ...] | None = None
    for w in [round(v / 10, 1) for v in range(11)]:
        tau, acc = tune_single(w * f_val[:, 0] + (1 - w) * f_val[:, 1], acc_self, acc_ir)
        key = (-acc, abs(w - 0.5), w, tau)
        best_lin = key if best_lin is None or key < best_lin else best_lin
    assert best_lin is not None
    score_gates = {"sn": {"tau": tau_sn}, "rqm": {"tau": tau_rqm},
                   "linear": {"tau": best_lin[3], "weight": best_lin[2]}}
    summary |= {"sn": {"val_acc": acc_sn}, "rqm": {"val_acc": acc_rqm,
                                                    "trees": rqm_final.booster.num_trees()},
                "linear": {"val_acc": -best_lin[0]}}

    labels_llm = provenance.llm if provenance is not None else None
    sources = {r.source or "labels": labels_llm or "unknown" for r in train}
    if extra:
        sources |= {r.source or "extra": extra_llm or "unknown" for r in extra}
    counts = {j: sum(r.labelled() == j for r in train) for j in ("ir_better", "ir_worse", "same")}
    manifest = Manifest(
        embedder=embedder.spec, embedder_fingerprint=getattr(embedder, "fingerprint", ""),
        labels=provenance, labels_llm=labels_llm,
        memory_sources=sources,
        sn=SNConfig(k=k, novelty=novelty, novelty_percentile=novelty_percentile,
                    theta_new={"drop_same": sn_final.theta_new, "all": sn_all.theta_new}),
        fusions=configs, score_gates=score_gates,
        training={"seed": seed, "folds": folds, "train": len(train), "val": len(val),
                  "extra_memory": len(extra),
                  "excluded": {"questions": len(excluded), "train": excluded_train,
                               "extra_memory": excluded_extra}, "train_labels": counts,
                  "memory_drop_same": len(sn_final.questions), "memory_all": len(sn_all.questions),
                  "default_thresholds": list(DEFAULT), **summary})
    memory = [*train, *extra]
    return GateBundle(manifest, embedder, memory, np.vstack([q_train, q_extra]), rqm_final,
                      fusions, extras)

