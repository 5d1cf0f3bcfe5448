"""Index round-trips, atomic rebuilds, and the errors that protect against silent garbage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.errors import (EmbedderMismatchError, IndexFormatError, NotFoundError,
                             StaleIndexError)
from quaderno.index.embedders import HashEmbedder
from quaderno.index.kb_index import DenseConfig
from quaderno.workspace import Workspace

QUERY = "first nobel prize in physics"


def ids(hits):
    return [h.chunk.id for h in hits]


def test_round_trip_in_a_fresh_workspace_object(wiki_ws):
    before = {m: ids(wiki_ws.retriever("wiki", mode=m).retrieve(QUERY, 5))
              for m in ("bm25", "dense", "hybrid")}
    reopened = Workspace(wiki_ws.root)
    after = {m: ids(reopened.retriever("wiki", mode=m).retrieve(QUERY, 5))
             for m in ("bm25", "dense", "hybrid")}
    assert before == after
    manifest = reopened.open_index("wiki").manifest
    assert manifest["components"]["dense"]["embedder"] == "hash:256"
    assert manifest["kb_fingerprint"] == reopened.kb("wiki").fingerprint


def test_failed_build_leaves_previous_index(wiki_ws):
    before = ids(wiki_ws.retriever("wiki", mode="dense").retrieve(QUERY, 5))

    def explode(stage, done, total):
        if stage == "dense" and done >= 256:
            raise RuntimeError("simulated crash")

    with pytest.raises(RuntimeError, match="simulated crash"):
        wiki_ws.build_index("wiki", embedder=HashEmbedder(64), progress=explode)
    reopened = Workspace(wiki_ws.root)
    assert ids(reopened.retriever("wiki", mode="dense").retrieve(QUERY, 5)) == before
    root = wiki_ws.root / "indexes" / "wiki" / "default"
    assert not [p for p in root.iterdir() if p.name.startswith(".build-")]


@pytest.mark.slow
def test_kill_9_during_build_leaves_previous_index(wiki_ws, tmp_path):
    before = ids(wiki_ws.retriever("wiki", mode="dense").retrieve(QUERY, 5))
    marker = tmp_path / "started"
    script = textwrap.dedent(f"""
        import time, pathlib
        from quaderno.workspace import Workspace
        def slow(stage, done, total):
            if stage == "dense":
                pathlib.Path({str(marker)!r}).touch()
                time.sleep(0.5)
        Workspace({str(wiki_ws.root)!r}).build_index(
            "wiki", embedder="hash:64", dense=__import__("quaderno.index.kb_index",
            fromlist=["x"]).DenseConfig(batch_size=16), progress=slow)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 60
    while not marker.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), "the build never reached the dense stage"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    reopened = Workspace(wiki_ws.root)
    assert ids(reopened.retriever("wiki", mode="dense").retrieve(QUERY, 5)) == before
    # the next build cleans the dead build's folder and succeeds
    reopened.build_index("wiki", embedder="hash:256")
    root = wiki_ws.root / "indexes" / "wiki" / "default"
    assert not [p for p in root.iterdir() if p.name.startswith(".build-")]
    assert len([p for p in root.iterdir() if p.name.startswith("v-")]) == 1


def test_embedder_mismatch_is_an_error(wiki_ws):
    with pytest.raises(EmbedderMismatchError, match=r"built with embedder 'hash:256' \(dim 256\)"):
        wiki_ws.open_index("wiki", embedder=HashEmbedder(128))


def test_stale_index_after_kb_replaced(ws):
    ws.add_kb("k", [Chunk(id="1", text="alpha")])
    ws.build_index("k", embedder=None)
    ws.add_kb("k", [Chunk(id="1", text="beta")], replace=True)
    with pytest.raises(StaleIndexError, match="quaderno index build k"):
        ws.retriever("k")


def test_index_of_another_format_version(ws):
    ws.add_kb("k", [Chunk(id="1", text="alpha")])
    ws.build_index("k", embedder=None)
    opened = ws.open_index("k")
    manifest = opened.folder / "manifest.json"
    data = json.loads(manifest.read_text())
    data["format_version"] = 0
    manifest.write_text(json.dumps(data))
    with pytest.raises(IndexFormatError, match="format version 0"):
        ws.open_index("k")


def test_missing_index_and_component(ws):
    ws.add_kb("k", [Chunk(id="1", text="alpha")])
    with pytest.raises(NotFoundError, match="quaderno index build k"):
        ws.retriever("k")
    ws.build_index("k", embedder=None)
    with pytest.raises(NotFoundError, match="no dense component"):
        ws.retriever("k", mode="dense").retrieve("alpha")


def test_hnsw_and_l2_builds(wiki_ws):
    wiki_ws.build_index("wiki", index="hnsw", bm25=False, embedder="hash:256",
                        dense=DenseConfig(store="faiss-hnsw", metric="l2"))
    flat = ids(wiki_ws.retriever("wiki", mode="dense").retrieve(QUERY, 10))
    hnsw = ids(wiki_ws.retriever("wiki", mode="dense", index="hnsw").retrieve(QUERY, 10))
    # unit vectors: L2 order equals inner-product order; HNSW recovers most of the exact top-10
    assert len(set(flat) & set(hnsw)) >= 8
    assert wiki_ws.index_names("wiki") == ["default", "hnsw"]
