"""The static embedder distilled from MiniLM: a deterministic table, cached and fingerprinted,
and a CCSK gate trained on it that saves, reloads and refuses another table."""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest

from quaderno.errors import ConfigError, IndexFormatError
from quaderno.gate.store import GateBundle
from quaderno.gate.train import train_bundle
from quaderno.index import embedders as embedders_mod
from quaderno.index.embedders import SentenceTransformerEmbedder, make_embedder
from quaderno.index.static_embedder import StaticEmbedder, distill
from test_gate_data import label_file

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm():
    return SentenceTransformerEmbedder("minilm")


@pytest.fixture(scope="module")
def static(tmp_path_factory):
    """The full table, distilled once for this module (~1 min on 2 cores)."""
    return StaticEmbedder(cache_dir=tmp_path_factory.mktemp("embedders"))


def another_build(folder, *, row: int) -> None:
    """Replace the table in ``folder`` by another build (one row's sign flipped) whose sidecar
    is consistent: a valid table, with another fingerprint."""
    table = np.load(folder / "static-minilm-256.npy")
    table[row] *= -1
    np.save(folder / "static-minilm-256.npy", table)
    meta = json.loads((folder / "static-minilm-256.json").read_text())
    meta["sha256"] = hashlib.sha256(table.tobytes()).hexdigest()
    (folder / "static-minilm-256.json").write_text(json.dumps(meta))


def test_distillation_is_deterministic_and_pca_signs_fixed(minilm):
    ids = list(range(1000, 1400))
    a = distill(minilm._model, dim=16, token_ids=ids, batch_size=128)
    b = distill(minilm._model, dim=16, token_ids=ids, batch_size=400)
    assert a.shape == (400, 16) and a.dtype == np.float32
    np.testing.assert_allclose(a, b, atol=1e-5)  # batching does not change the table
    # centred, and the components ordered by variance
    assert np.abs(a.mean(axis=0)).max() < 1e-4
    var = a.var(axis=0)
    assert all(var[i] >= var[i + 1] - 1e-6 for i in range(15))
    with pytest.raises(ConfigError, match="dim must be 1..384, got 500"):
        distill(minilm._model, dim=500, token_ids=ids[:10])


def test_static_vectors_shape_norm_and_meaning(static):
    texts = ["who is the president of france",
             "Emmanuel Macron is the president of France.",
             "bananas are a yellow fruit", ""]
    v = static.embed_documents(texts)
    assert v.shape == (4, 256) and v.dtype == np.float32 and static.dim == 256
    np.testing.assert_allclose(np.linalg.norm(v[:3], axis=1), 1.0, atol=1e-5)
    assert not v[3].any()  # no token: the zero vector, not NaN
    sims = v[:3] @ v[:3].T
    assert sims[0, 1] > sims[0, 2] + 0.3 and sims[0, 1] > sims[1, 2] + 0.3
    # queries and documents live in one space (the gate embeds a question and its response
    # with one call), and a text always gets the same vector
    np.testing.assert_array_equal(static.embed_queries(texts[:1]), v[:1])
    np.testing.assert_array_equal(static.embed_documents(texts[:1]), v[:1])
    # the token states the fusion's token attention reads: one row per token
    rows = static.token_vectors(["bananas are yellow", ""])
    assert rows[0].shape == (len(static.token_ids(["bananas are yellow"])[0]), 256)
    assert rows[1].shape == (1, 256) and not rows[1].any()


def test_cached_table_loads_without_the_model_and_refuses_damage(static, monkeypatch, tmp_path):
    # a second instance reads the cache: no transformer is loaded
    def no_model(*a, **k):
        raise AssertionError("the cached table must not load MiniLM")

    monkeypatch.setattr(embedders_mod.SentenceTransformerEmbedder, "__init__", no_model)
    again = StaticEmbedder(cache_dir=static.cache_dir)
    assert again.fingerprint == static.fingerprint and len(again.fingerprint) == 64
    np.testing.assert_array_equal(again.embed_documents(["a question"]),
                                  static.embed_documents(["a question"]))
    # a damaged table is refused with what to do, never used
    damaged = tmp_path / "embedders"
    shutil.copytree(static.cache_dir, damaged)
    table = np.load(damaged / "static-minilm-256.npy")
    table[0, 0] += 1.0
    np.save(damaged / "static-minilm-256.npy", table)
    with pytest.raises(IndexFormatError, match="delete both and it is rebuilt"):
        StaticEmbedder(cache_dir=damaged)


def test_static_specs_are_validated():
    with pytest.raises(ConfigError, match="needs an integer DIM"):
        make_embedder("static:minilm:wide")
    with pytest.raises(ConfigError, match="source 'bert' is unknown"):
        make_embedder("static:bert")
    with pytest.raises(ConfigError, match="dim must be 1..384, got 0"):
        StaticEmbedder(dim=0)


def test_gate_on_the_static_embedder_round_trips_and_refuses_another_table(static, tmp_path):
    labels = label_file(n_train=50, n_val=24, n_test=24)
    bundle = train_bundle(labels, static, seed=0, min_child_samples=3, rqm_rounds=60, epochs=8)
    assert bundle.manifest.embedder == "static:minilm"
    assert bundle.manifest.embedder_fingerprint == static.fingerprint
    root = tmp_path / "gate"
    bundle.save(root)
    test = labels.split("test")
    qs, rs = [r.question for r in test], [r.response for r in test]
    again = GateBundle.load(root, StaticEmbedder(cache_dir=static.cache_dir))
    for name in ("ccsk", "ccsk-rec", "sn", "rqm"):
        a, b = bundle.gate(name).decide(qs, rs), again.gate(name).decide(qs, rs)
        assert [d.retrieve for d in a] == [d.retrieve for d in b], name
        assert [d.p for d in a] == pytest.approx([d.p for d in b], abs=1e-6), name
    # another table under the same spec (a different build) is refused, naming both
    other_dir = tmp_path / "other"
    shutil.copytree(static.cache_dir, other_dir)
    another_build(other_dir, row=5)
    with pytest.raises(ConfigError, match=f"table {static.fingerprint[:12]}.*load the gate "
                       "without an embedder"):
        GateBundle.load(root, StaticEmbedder(cache_dir=other_dir))
    # a bundle saved before gates carried their table cannot be loaded without one: the
    # advice is to restore the table or retrain, not to drop the embedder
    current = root / (root / "CURRENT").read_text()
    for suffix in (".npy", ".json"):
        (current / f"static-minilm-256{suffix}").unlink()
    with pytest.raises(ConfigError, match="saved before gates carried their table: restore"):
        GateBundle.load(root, StaticEmbedder(cache_dir=other_dir))
    # a bundle saved before the fingerprint existed still loads, with identical decisions
    manifest = json.loads((current / "manifest.json").read_text())
    del manifest["embedder_fingerprint"]
    (current / "manifest.json").write_text(json.dumps(manifest))
    old = GateBundle.load(root, StaticEmbedder(cache_dir=static.cache_dir))
    assert [d.retrieve for d in old.gate("ccsk").decide(qs, rs)] == \
        [d.retrieve for d in bundle.gate("ccsk").decide(qs, rs)]


def test_a_gate_carries_its_table_and_loads_where_no_table_was_built(static, monkeypatch,
                                                                     tmp_path):
    labels = label_file(n_train=40, n_val=20, n_test=20)
    bundle = train_bundle(labels, static, seed=0, min_child_samples=3, rqm_rounds=40, epochs=4)
    root = bundle.save(tmp_path / "gate")
    current = root / (root / "CURRENT").read_text()
    assert (current / "static-minilm-256.npy").is_file()
    # another machine: an empty home, and a rebuild would fail loudly
    monkeypatch.setenv("QUADERNO_HOME", str(tmp_path / "elsewhere"))

    def no_build(self, *paths):
        raise AssertionError("the table was rebuilt instead of read from the bundle")

    monkeypatch.setattr(StaticEmbedder, "_build", no_build)
    moved = GateBundle.load(root)
    assert moved.embedder.fingerprint == static.fingerprint
    assert not (tmp_path / "elsewhere").exists()
    assert "static-minilm-256.json" not in moved.extras  # the sidecar is not a grid
    test = labels.split("test")
    qs, rs = [r.question for r in test], [r.response for r in test]
    assert [d.p for d in moved.gate("ccsk").decide(qs, rs)] == pytest.approx(
        [d.p for d in bundle.gate("ccsk").decide(qs, rs)], abs=1e-6)
    # a damaged table in the bundle is refused, not used
    table = np.load(current / "static-minilm-256.npy")
    table[3] += 1.0
    np.save(current / "static-minilm-256.npy", table)
    with pytest.raises(IndexFormatError, match="damaged or replaced"):
        GateBundle.load(root)


def test_a_dense_index_on_the_static_embedder_round_trips(static, monkeypatch, tmp_path):
    from quaderno.corpus.chunk import Chunk
    from quaderno.workspace import Workspace

    monkeypatch.setenv("QUADERNO_HOME", str(static.cache_dir.parent))  # the table built above
    texts = ["Wilhelm Röntgen received the first Nobel Prize in Physics in 1901.",
             "Bananas are yellow tropical fruit rich in potassium.",
             "The Eiffel Tower stands in Paris on the Champ de Mars.",
             "Photosynthesis turns light, water and carbon dioxide into sugar."]
    ws = Workspace(tmp_path / "home")
    ws.add_kb("tiny", [Chunk(id=f"c{i}", text=t) for i, t in enumerate(texts)])
    ws.build_index("tiny", embedder="static:minilm", bm25=False)
    reopened = Workspace(tmp_path / "home")
    assert reopened.open_index("tiny").manifest["components"]["dense"]["embedder"] == \
        "static:minilm"
    hits = reopened.retriever("tiny", mode="dense").retrieve("which tower is in paris", 2)
    assert hits[0].chunk.id == "c2"
    hits = reopened.retriever("tiny", mode="dense").retrieve("nobel prize physics", 2)
    assert hits[0].chunk.id == "c0"


def test_a_gate_saves_the_table_it_uses_and_refuses_half_a_table(static, monkeypatch, tmp_path):
    cache = tmp_path / "embedders"
    shutil.copytree(static.cache_dir, cache)
    emb = StaticEmbedder(cache_dir=cache)
    labels = label_file(n_train=40, n_val=20, n_test=20)
    bundle = train_bundle(labels, emb, seed=0, min_child_samples=3, rqm_rounds=40, epochs=4)
    # the cache's table is replaced after training (another build, its sidecar consistent):
    # the bundle saves the table it was trained with, from memory, not the file on disk
    another_build(cache, row=7)
    root = bundle.save(tmp_path / "gate")
    monkeypatch.setenv("QUADERNO_HOME", str(tmp_path / "elsewhere"))
    assert GateBundle.load(root).embedder.fingerprint == static.fingerprint
    first = (root / "CURRENT").read_text()
    # a table changed in memory after loading is refused, and the saved gate is untouched
    emb.table[0, 0] += 1.0
    with pytest.raises(IndexFormatError, match="changed after loading"):
        bundle.save(root)
    emb.table[0, 0] -= 1.0
    assert (root / "CURRENT").read_text() == first
    assert GateBundle.load(root).embedder.fingerprint == static.fingerprint
    # half a table in the bundle is damage: named, and nothing is rebuilt into the bundle

    def no_build(self, *paths):
        raise AssertionError("the table was rebuilt into the bundle")

    monkeypatch.setattr(StaticEmbedder, "_build", no_build)
    current = root / first
    sidecar = (current / "static-minilm-256.json").read_bytes()
    (current / "static-minilm-256.json").unlink()
    with pytest.raises(IndexFormatError, match=r"static-minilm-256\.json is missing"):
        GateBundle.load(root)
    assert not (current / "static-minilm-256.json").exists()
    (current / "static-minilm-256.json").write_bytes(sidecar)
    (current / "static-minilm-256.npy").unlink()
    with pytest.raises(IndexFormatError, match=r"static-minilm-256\.npy is missing"):
        GateBundle.load(root)
