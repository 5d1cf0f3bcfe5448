"""RQM: Eq. 3 features (T4), LightGBM settings and F_RQM (T5), text-format save/load."""

from __future__ import annotations

import numpy as np
import pytest

from quaderno.errors import ConfigError
from quaderno.gate.rqm import ResponseQuality, features, length_richness
from quaderno.index.embedders import HashEmbedder


def test_t4_features_order_length_richness_and_cosine():
    emb = HashEmbedder(768)
    x = features(["who is the king", "q"], ["the the the king", ""], emb)
    assert x.shape == (2, 771)  # [L, E, φ(r) 768, C]
    assert x[0, 0] == 4 and x[0, 1] == pytest.approx(2 / 4)  # repeated tokens: E < 1
    assert x[1, 0] == 0 and x[1, 1] == 0  # empty response: E = 0, not NaN
    r = emb.embed_documents(["the the the king"])[0]
    assert np.allclose(x[0, 2:770], r)
    assert -1 <= x[0, 770] <= 1 and x[0, 770] > 0  # C shares "the", "king"
    assert length_richness("A, b; a!") == (3.0, pytest.approx(2 / 3))
    with pytest.raises(ConfigError, match="2 questions but 1 responses"):
        features(["a", "b"], ["c"], emb)


def training_rows(n: int = 80, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 10)).astype(np.float32)
    y = np.clip(0.5 + 0.4 * np.tanh(x[:, 0]), 0, 1)
    y[x[:, 1] > 1.0] = 0.0  # like R-1 = 0 → Y = 0
    return x, y


def test_t5_lightgbm_settings_are_read_back_and_f_rqm_is_one_minus_y(tmp_path):
    x, y = training_rows()
    model = ResponseQuality(seed=0, min_child_samples=5).fit(x, y)
    params = model.booster.params
    assert params["num_leaves"] == 31 and params["learning_rate"] == 0.03
    assert params["early_stopping_round"] == 30 and params["objective"] == "cross_entropy"
    q = model.quality(x)
    f = model.f_rqm(x)
    assert np.all((f >= 0) & (f <= 1)) and np.allclose(f, 1 - q)
    assert np.corrcoef(q, y)[0, 1] > 0.5  # it learned something
    # text format, identical predictions after loading; nothing pickled
    path = tmp_path / "rqm.txt"
    model.save(path)
    assert path.read_text().startswith("tree")
    again = ResponseQuality.load(path)
    assert np.allclose(again.f_rqm(x), f)
    # deterministic with a seed
    assert np.allclose(ResponseQuality(seed=0, min_child_samples=5).fit(x, y).quality(x), q)


def test_rqm_refuses_bad_input():
    x, y = training_rows(10)
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        ResponseQuality().fit(x, y * 3)
    with pytest.raises(ConfigError, match="not fitted"):
        ResponseQuality().quality(x)
    with pytest.raises(ConfigError, match="valid_fraction"):
        ResponseQuality(valid_fraction=1.5)
