"""SN (Eq. 1–2), its novelty default, leave-one-out, and SKR's / FlashRAG's rules (T2, T3, T6)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from quaderno.errors import ConfigError
from quaderno.gate.labels import LabelRecord
from quaderno.gate.sn import SimilarQueries, flashrag_rule, skr_rule


class TableEmbedder:
    """Known vectors for known texts (angles on a circle, so cosines are known)."""

    spec = "table"
    dim = 2

    def __init__(self, angles: dict[str, float]) -> None:
        self.angles = angles

    def embed_queries(self, texts):
        return np.array([[np.cos(self.angles[t]), np.sin(self.angles[t])] for t in texts],
                        dtype=np.float32)

    embed_documents = embed_queries


def rec(q: str, judgement: str) -> LabelRecord:
    return LabelRecord(question=q, golden_answers=["x"], judgement=judgement)


# memory m0..m6 at angles 0.0, 0.1, ..., 0.6; labels alternate better/worse, m6 same
MEMORY = [rec(f"m{i}", j) for i, j in enumerate(
    ["ir_better", "ir_worse", "ir_better", "ir_better", "ir_worse", "ir_better", "same"])]
ANGLES = {f"m{i}": i / 10 for i in range(7)} | {"q": 0.0, "far": 3.0, "mid": 0.45}


def test_t2_eq1_eq2_known_neighbours_order_and_loo():
    sn = SimilarQueries(TableEmbedder(ANGLES), k=5, novelty=False).fit(MEMORY)
    assert sn.questions == [f"m{i}" for i in range(6)]  # drop_same leaves m6 out
    s = sn.score(["q"])[0]
    assert s.neighbours == [0, 1, 2, 3, 4]  # sorted by cosine, most similar first
    assert s.f_sn == pytest.approx(3 / 5)  # y = 1,0,1,1,0 (Eq. 2, unweighted)
    assert s.max_sim == pytest.approx(1.0)
    loo = sn.loo()
    assert all(i not in sc.neighbours for i, sc in enumerate(loo))  # SN5: never itself
    assert loo[0].neighbours == [1, 2, 3, 4, 5] and loo[0].f_sn == pytest.approx(3 / 5)
    assert loo[0].max_sim == pytest.approx(np.cos(0.1), abs=1e-6)
    # memory "all" keeps same; k larger than the memory is cut
    everything = SimilarQueries(TableEmbedder(ANGLES), k=5, memory="all", novelty=False).fit(
        MEMORY)
    assert len(everything.questions) == 7


def test_t3_novelty_fires_below_theta_and_never_above():
    sn = SimilarQueries(TableEmbedder(ANGLES), k=5, novelty=True).fit(MEMORY)
    # calibrated: the 5th percentile of the LOO max-similarity, all cos(0.1) here
    assert sn.theta_new == pytest.approx(np.cos(0.1), abs=1e-6)
    far, near = sn.score(["far", "q"])
    assert far.novelty_fired and far.f_sn == 1.0
    assert not near.novelty_fired and near.f_sn == pytest.approx(0.6)
    fixed = SimilarQueries(TableEmbedder(ANGLES), theta_new=0.5).fit(MEMORY)
    assert fixed.theta_new == 0.5  # given, not calibrated
    mid = fixed.score(["mid"])[0]  # max_sim = cos(0.05) > 0.5
    assert not mid.novelty_fired
    off = SimilarQueries(TableEmbedder(ANGLES), novelty=False).fit(MEMORY)
    assert not off.score(["far"])[0].novelty_fired


def test_validation_names_the_bad_value():
    with pytest.raises(ConfigError, match="got 0"):
        SimilarQueries(TableEmbedder(ANGLES), k=0)
    with pytest.raises(ConfigError, match="'some'"):
        SimilarQueries(TableEmbedder(ANGLES), memory="some")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="memory is empty"):
        SimilarQueries(TableEmbedder(ANGLES)).fit([rec("m6", "same")])


def random_memory(seed: int, n: int = 120) -> tuple[list[LabelRecord], dict[str, float]]:
    rng = random.Random(seed)
    records, angles = [], {}
    for i in range(n):
        j = rng.choices(["ir_better", "ir_worse", "same"], weights=[47, 62, 740])[0]
        records.append(rec(f"r{i}", j))
        angles[f"r{i}"] = rng.uniform(0, 6.28)
    for i in range(80):
        angles[f"t{i}"] = rng.uniform(0, 6.28)
    return records, angles


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_t6_sn_with_drop_same_equals_skr_knn(seed):
    """SN with drop_same, K = 5, novelty off and 'retrieve iff F_SN > 0.5' decides as SKR's
    kNN rule: with odd K and two labels SKR skips retrieval iff #worse > #better, i.e. iff
    F_SN ≤ 0.4 — which is why Table 2's SN row equals SKR_knn."""
    records, angles = random_memory(seed)
    sn = SimilarQueries(TableEmbedder(angles), k=5, novelty=False).fit(records)
    assert set(sn.judgements) <= {"ir_better", "ir_worse"}
    scores = sn.score([f"t{i}" for i in range(80)])
    kw = dict(k=5, train_better=sn.train_better, train_worse=sn.train_worse,
              train_total=sn.train_total)
    skr = [skr_rule(s, **kw) for s in scores]
    assert [s.f_sn > 0.5 for s in scores] == skr
    assert any(skr) and not all(skr)
    assert all((not d) == (s.f_sn <= 0.4) for s, d in zip(scores, skr))


def test_flashrag_rule_retrieves_on_ties_and_same_neighbourhoods():
    records, angles = random_memory(0)
    sn = SimilarQueries(TableEmbedder(angles), k=5, memory="all", novelty=False).fit(records)
    kw = dict(k=5, train_better=sn.train_better, train_worse=sn.train_worse,
              train_total=sn.train_total)
    assert sn.train_better - sn.train_worse < 0
    for s in sn.score([f"t{i}" for i in range(80)]):
        decision = flashrag_rule(s, **kw)
        if s.better == s.worse:  # ties, all-'same' neighbourhoods included
            assert decision
        if s.worse > s.better:
            assert not decision
