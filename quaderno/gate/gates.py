"""The gates: CCSK and the baselines of Table 2, all under :class:`~.protocol.Gate`.

=================  =============================================================  ==========
name               decides                                                        reads r?
=================  =============================================================  ==========
``always``         retrieve every question (Manual CoT IR)                        no
``never``          never retrieve (Manual CoT)                                    no
``skr-knn``        SKR's knn.py rule on the ``drop_same`` memory                  no
``flashrag-skr``   FlashRAG's SKRJudger rule on the ``all`` memory                no
``sn``             F_SN > τ (Eq. 2, novelty default on)                           no
``rqm``            F_RQM > τ (Eq. 4)                                              yes
``linear``         w·F_SN + (1 − w)·F_RQM > τ (the Fig. 3 linear-fusion ablation)  yes
``ccsk``           Eq. 5–7, paper-literal (pooled attention, normalised trust)    yes
``ccsk-rec``       Eq. 5–7 with token attention and ``trust="unnormalized"``      yes
=================  =============================================================  ==========
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import torch

from quaderno.errors import ConfigError
from quaderno.gate import signals as S
from quaderno.gate.decision import GateDecision
from quaderno.gate.fusion import AttentionFusion, FusionInputs, fusion_inputs
from quaderno.gate.rqm import ResponseQuality
from quaderno.gate.rule import Thresholds, branch_names, decide, single_score
from quaderno.gate.sn import SimilarQueries, flashrag_rule, skr_rule
from quaderno.index.embedders import Embedder


def _check_lengths(questions: Sequence[str], responses: Sequence[str]) -> None:
    if len(questions) != len(responses):
        raise ConfigError(f"{len(questions)} questions but {len(responses)} responses")


class QuestionCache:
    """Question vectors embedded ahead of time (:meth:`prepare`), while the closed-book answer
    is generated: after generation only the response's encoder pass and the gate's logic are
    left. Bounded (least recently prepared dropped first), thread-safe."""

    def __init__(self, embedder: Embedder, *, size: int = 256) -> None:
        self.embedder, self.size = embedder, size
        self._vecs: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def prepare(self, questions: Sequence[str]) -> None:
        todo = [q for q in questions if q not in self._vecs]
        if not todo:
            return
        vecs = S.embed_questions(self.embedder, todo, with_responses=True)
        with self._lock:
            for q, v in zip(todo, vecs):
                self._vecs[q] = v
                self._vecs.move_to_end(q)
            while len(self._vecs) > self.size:
                self._vecs.popitem(last=False)

    def take(self, questions: Sequence[str]) -> np.ndarray | None:
        """The prepared vectors of every question (and forget them), else None."""
        with self._lock:
            if not questions or any(q not in self._vecs for q in questions):
                return None
            return np.stack([self._vecs.pop(q) for q in questions])


class ConstantGate:
    """Always or never retrieve."""

    needs_response = False
    labels_llm: str | None = None  # no labels at all
    notes: tuple[str, ...] = ()

    def __init__(self, retrieve: bool) -> None:
        self.retrieve = bool(retrieve)
        self.name = "always" if self.retrieve else "never"

    def decide(self, questions: Sequence[str], responses: Sequence[str]) -> list[GateDecision]:
        _check_lengths(questions, responses)
        return [GateDecision(gate=self.name, retrieve=self.retrieve, branch="constant")
                for _ in questions]


class KNNRuleGate:
    """SKR's (``rule="skr"``) or FlashRAG's (``rule="flashrag"``) vote over similar questions."""

    needs_response = False
    notes: tuple[str, ...] = ()  # added to every decision (e.g. memory of another LLM)

    def __init__(self, sn: SimilarQueries, *, rule: str, labels_llm: str | None = None) -> None:
        if rule not in ("skr", "flashrag"):
            raise ConfigError(f"rule must be 'skr' or 'flashrag', got {rule!r}")
        self.sn, self.rule, self.labels_llm = sn, rule, labels_llm
        self.name = "skr-knn" if rule == "skr" else "flashrag-skr"

    def decide(self, questions: Sequence[str], responses: Sequence[str]) -> list[GateDecision]:
        _check_lengths(questions, responses)
        t0 = time.perf_counter()
        fn = skr_rule if self.rule == "skr" else flashrag_rule
        scores = self.sn.score(questions)  # leave-one-out: a question never votes for itself
        each = (time.perf_counter() - t0) / max(len(questions), 1)
        return [GateDecision(
            gate=self.name, retrieve=fn(s, k=self.sn.k, train_better=self.sn.train_better,
                                        train_worse=self.sn.train_worse,
                                        train_total=self.sn.train_total),
            f_sn=s.f_sn, max_sim=s.max_sim, labels_llm=self.labels_llm, seconds=each,
            neighbours=[self.sn.questions[i] for i in s.neighbours],
            notes=[f"neighbours: {s.better} ir_better, {s.worse} ir_worse", *self.sn.notes(s),
                   *self.notes]) for s in scores]


class ScoreGate:
    """One score against one threshold: ``sn`` (F_SN), ``rqm`` (F_RQM) or ``linear``
    (w·F_SN + (1 − w)·F_RQM)."""

    notes: tuple[str, ...] = ()

    def __init__(self, kind: str, embedder: Embedder, sn: SimilarQueries,
                 rqm: ResponseQuality | None, *, tau: float, weight: float = 0.5,
                 labels_llm: str | None = None) -> None:
        if kind not in ("sn", "rqm", "linear"):
            raise ConfigError(f"score gate kind must be sn, rqm or linear, got {kind!r}")
        if kind != "sn" and rqm is None:
            raise ConfigError(f"gate {kind!r} needs an RQM model")
        if not 0 <= tau <= 1 or not 0 <= weight <= 1:
            raise ConfigError(f"tau and weight must lie in [0, 1], got {tau}, {weight}")
        self.name, self.embedder, self.sn, self.rqm = kind, embedder, sn, rqm
        self.tau, self.weight, self.labels_llm = tau, weight, labels_llm
        self.needs_response = kind != "sn"
        self._cache = QuestionCache(embedder)

    def prepare(self, questions: Sequence[str]) -> None:
        """Embed the questions now (while the closed-book answer is generated)."""
        if self.needs_response:
            self._cache.prepare(questions)

    def decide(self, questions: Sequence[str], responses: Sequence[str]) -> list[GateDecision]:
        _check_lengths(questions, responses)
        t0 = time.perf_counter()
        sig = S.compute(self.embedder, questions, responses, sn=self.sn,
                        rqm=self.rqm if self.needs_response else None,
                        q_vecs=self._cache.take(questions) if self.needs_response else None)
        f_sn, f_rqm = sig.f_sn, sig.f_rqm
        p = (f_sn if self.name == "sn" else f_rqm if self.name == "rqm"
             else self.weight * f_sn + (1 - self.weight) * f_rqm)
        each = (time.perf_counter() - t0) / max(len(questions), 1)
        out = []
        for i, s in enumerate(sig.sn):
            out.append(GateDecision(
                gate=self.name, retrieve=bool(p[i] > self.tau), branch="single",
                f_sn=float(f_sn[i]), f_rqm=None if np.isnan(f_rqm[i]) else float(f_rqm[i]),
                p=float(p[i]), thresholds={"tau": self.tau} | (
                    {"weight": self.weight} if self.name == "linear" else {}),
                novelty_fired=s.novelty_fired, max_sim=s.max_sim, labels_llm=self.labels_llm,
                neighbours=[self.sn.questions[j] for j in s.neighbours], seconds=each,
                notes=[*self.sn.notes(s), *self.notes]))
        return out


class CCSKGate:
    """SN + RQM + the attention fusion + Eq. 7."""

    needs_response = True
    notes: tuple[str, ...] = ()

    def __init__(self, embedder: Embedder, sn: SimilarQueries, rqm: ResponseQuality,
                 fusion: AttentionFusion, thresholds: Thresholds, *, name: str = "ccsk",
                 token_len: int = 32, labels_llm: str | None = None) -> None:
        if fusion.dim != embedder.dim:
            raise ConfigError(f"the fusion was built for {fusion.dim}-d embeddings but the "
                              f"embedder {embedder.spec} gives {embedder.dim}")
        self.name, self.embedder, self.sn, self.rqm, self.fusion = name, embedder, sn, rqm, fusion
        self.thresholds, self.token_len, self.labels_llm = thresholds, token_len, labels_llm
        self.fusion.eval()
        self._cache = QuestionCache(embedder)

    def prepare(self, questions: Sequence[str]) -> None:
        """Embed the questions now (while the closed-book answer is generated)."""
        self._cache.prepare(questions)

    def inputs(self, questions: Sequence[str], responses: Sequence[str], sig: S.Signals
               ) -> FusionInputs:
        f = np.stack([sig.f_sn, sig.f_rqm], axis=1).astype(np.float32)
        return fusion_inputs(self.embedder, sig.q_vecs, sig.r_vecs, f, questions, responses,
                             attention=self.fusion.attention, token_len=self.token_len)

    def decide(self, questions: Sequence[str], responses: Sequence[str]) -> list[GateDecision]:
        _check_lengths(questions, responses)
        t0 = time.perf_counter()
        sig = S.compute(self.embedder, questions, responses, sn=self.sn, rqm=self.rqm,
                        q_vecs=self._cache.take(questions))
        with torch.no_grad():
            out = self.fusion(self.inputs(questions, responses, sig))
        p, trust = out.p.numpy(), out.trust.numpy()
        g_w = out.g_w.numpy()
        single, use_rqm = single_score(sig.f_sn, sig.f_rqm, g_w)
        y, fused = decide(p, trust, single, self.thresholds)
        branches = branch_names(fused, use_rqm)
        each = (time.perf_counter() - t0) / max(len(questions), 1)
        th = self.thresholds.model_dump()
        return [GateDecision(
            gate=self.name, retrieve=bool(y[i]), branch=branches[i],  # type: ignore[arg-type]
            f_sn=float(sig.f_sn[i]), f_rqm=float(sig.f_rqm[i]),
            g_a=[float(v) for v in out.g_a[i]], g_w=[float(v) for v in g_w[i]],
            g=[float(v) for v in out.g[i]], p=float(p[i]), trust=float(trust[i]),
            thresholds=th, novelty_fired=s.novelty_fired, max_sim=s.max_sim,
            neighbours=[self.sn.questions[j] for j in s.neighbours],
            labels_llm=self.labels_llm, seconds=each, notes=[*self.sn.notes(s), *self.notes])
            for i, s in enumerate(sig.sn)]
