"""The attention fusion (Eq. 5–6, T7, A1) and the decision rule (Eq. 7, T8, T9)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from quaderno.errors import ConfigError
from quaderno.gate.fusion import AttentionFusion, FusionInputs, token_states, train_fusion
from quaderno.gate.rule import Thresholds, branch_names, decide, single_score
from quaderno.index.embedders import HashEmbedder


def batch(n: int = 16, d: int = 768, seed: int = 0) -> FusionInputs:
    g = torch.Generator().manual_seed(seed)
    return FusionInputs(q=torch.randn(n, d, generator=g), r=torch.randn(n, d, generator=g),
                        f=torch.rand(n, 2, generator=g))


def test_t7_shapes_gates_and_p_between_the_two_scores():
    torch.manual_seed(0)
    model = AttentionFusion(768).eval()
    assert model.in_features == 2306 and model.heads == 8
    x = batch()
    with torch.no_grad():
        out = model(x)
    assert out.attended.shape == (16, 768) and out.g.shape == (16, 2)
    assert torch.all(out.g >= 0) and torch.allclose(out.g.sum(-1), torch.ones(16))
    assert torch.all(out.g.max(-1).values >= 0.5)  # two entries, normalised
    lo, hi = x.f.min(-1).values, x.f.max(-1).values
    assert torch.all(out.p >= lo - 1e-6) and torch.all(out.p <= hi + 1e-6)
    assert torch.all((out.g_a > 0) & (out.g_a < 1))
    assert torch.allclose(out.g_w.sum(-1), torch.ones(16))
    # unnormalised trust may fall below 0.5
    assert torch.allclose(out.trust, out.g.max(-1).values)
    un = AttentionFusion(768, trust="unnormalized").eval()
    with torch.no_grad():
        o2 = un(x)
    assert torch.allclose(o2.trust, (o2.g_a * o2.g_w).max(-1).values)
    assert torch.all(o2.trust <= 1)


def test_a1_pooled_attention_ignores_q_and_token_attention_does_not():
    torch.manual_seed(0)
    pooled = AttentionFusion(64).eval()
    x, y = batch(d=64, seed=1), batch(d=64, seed=2)
    same_r = FusionInputs(q=y.q, r=x.r, f=x.f)
    with torch.no_grad():
        assert torch.allclose(pooled.attend(x), pooled.attend(same_r), atol=1e-5)
    token = AttentionFusion(64, attention="token").eval()
    emb = HashEmbedder(64)
    q1, m1 = token_states(emb, ["when was acme founded", "who is it"], max_len=8)
    q2, m2 = token_states(emb, ["what is the capital city of peru", "where"], max_len=8)
    r, rm = token_states(emb, ["it was founded in 1950", "no idea"], max_len=8)
    pooled_vecs = FusionInputs(q=x.q[:2], r=x.r[:2], f=x.f[:2])
    a = FusionInputs(q=pooled_vecs.q, r=pooled_vecs.r, f=pooled_vecs.f, q_tok=q1, q_mask=m1,
                     r_tok=r, r_mask=rm)
    b = FusionInputs(q=pooled_vecs.q, r=pooled_vecs.r, f=pooled_vecs.f, q_tok=q2, q_mask=m2,
                     r_tok=r, r_mask=rm)
    with torch.no_grad():
        assert not torch.allclose(token.attend(a), token.attend(b), atol=1e-4)
    assert m1[1].sum() == 3 and q1.shape == (2, 8, 64)
    with pytest.raises(ConfigError, match="token states"):
        token.attend(pooled_vecs)


def test_fusion_validation_names_the_value():
    with pytest.raises(ConfigError, match="100 must be a positive multiple of heads 8"):
        AttentionFusion(100)
    with pytest.raises(ConfigError, match="'cross'"):
        AttentionFusion(64, attention="cross")  # type: ignore[arg-type]


def test_training_is_seeded_and_learns_to_trust_the_informative_score():
    n, d = 200, 32
    g = torch.Generator().manual_seed(0)
    y = (torch.rand(n, generator=g) > 0.5).float()
    f = torch.stack([y * 0.8 + 0.1, torch.rand(n, generator=g)], -1)  # F_SN informative
    x = FusionInputs(q=torch.randn(n, d, generator=g), r=torch.randn(n, d, generator=g), f=f)
    torch.manual_seed(0)
    m1 = AttentionFusion(d)
    h1 = train_fusion(m1, x, y.tolist(), seed=3, epochs=20)
    torch.manual_seed(0)
    m2 = AttentionFusion(d)
    h2 = train_fusion(m2, x, y.tolist(), seed=3, epochs=20)
    assert h1 == h2  # same seed, same run
    assert h1[-1]["train_loss"] < h1[0]["train_loss"]
    with torch.no_grad():
        out = m1(x)
    assert float(out.g[:, 0].mean()) > 0.6  # it learned to weigh SN


# -- Eq. 7 --------------------------------------------------------------------------------
def test_t8_fused_branch_cannot_override_agreeing_scores():
    """AttentionFusion's p (both variants, random weights and inputs) lies between F_SN and
    F_RQM, so on the fused branch it cannot overturn two scores that agree."""
    th = Thresholds(tau_pred=0.5, tau_conf=0.0, tau_single=0.5)  # always the fused branch
    for attention, trust in (("pooled", "normalized"), ("token", "unnormalized")):
        torch.manual_seed(0)
        model = AttentionFusion(32, attention=attention, trust=trust).eval()
        x = batch(400, 32, seed=1)
        if attention == "token":
            g = torch.Generator().manual_seed(2)
            x.q_tok, x.r_tok = torch.randn(400, 6, 32, generator=g), torch.randn(
                400, 6, 32, generator=g)
            x.q_mask = x.r_mask = torch.ones(400, 6, dtype=torch.bool)
        with torch.no_grad():
            out = model(x)
        p, f = out.p.numpy(), x.f.numpy()
        assert ((p >= f.min(1) - 1e-6) & (p <= f.max(1) + 1e-6)).all(), attention
        y, fused = decide(p, np.maximum(out.trust.numpy(), 0.5), np.zeros(400), th)
        assert fused.all()
        agree_yes, agree_no = (f > 0.5).all(1), (f <= 0.5).all(1)
        assert agree_yes.any() and agree_no.any()
        assert y[agree_yes].all() and not y[agree_no].any(), attention


def test_t9_branches_boundaries_and_dead_fallback():
    th = Thresholds(tau_pred=0.4, tau_conf=0.3, tau_single=0.3)
    # strict >: p = τ_pred does not retrieve; trust = τ_conf goes to the fallback
    y, fused = decide(np.array([0.4, 0.41]), np.array([0.5, 0.5]), np.array([0.0, 0.0]), th)
    assert fused.all() and y.tolist() == [False, True]
    y, fused = decide(np.array([0.9]), np.array([0.3]), np.array([0.3]), th)
    assert not fused[0] and not y[0]  # boundary → fallback; single = τ_single → no
    # the fallback reads the module with the larger g_w (ties: SN)
    single, use_rqm = single_score(np.array([0.9, 0.1, 0.9]), np.array([0.1, 0.9, 0.1]),
                                   np.array([[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]]))
    assert single.tolist() == [0.9, 0.9, 0.9] and use_rqm.tolist() == [False, True, False]
    y, fused = decide(np.zeros(3), np.zeros(3), single, th)
    assert branch_names(fused, use_rqm) == ["fallback-sn", "fallback-rqm", "fallback-sn"]
    assert y.all()
    # paper mode: max(g) ≥ 0.5 > τ_conf = 0.3, so the fallback never fires
    torch.manual_seed(0)
    model = AttentionFusion(64).eval()
    with torch.no_grad():
        out = model(batch(200, 64))
    _, fused = decide(out.p.numpy(), out.trust.numpy(), np.zeros(200), th)
    assert fused.all()
