from __future__ import annotations

from pathlib import Path

import pytest

from quaderno.cli.demo_cmd import sample_corpus
from quaderno.corpus.loaders import load_flashrag
from quaderno.workspace import Workspace

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
SHARED = ROOT.parent / "shared" / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def shared_data() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"benchmark data not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def wiki_chunks():
    return list(load_flashrag(sample_corpus()))


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "home")


@pytest.fixture
def wiki_ws(tmp_path_factory) -> Workspace:
    """A workspace with the 1,000-passage sample indexed with BM25 + hash embeddings."""
    ws = Workspace(tmp_path_factory.mktemp("wiki") / "home")
    ws.add_kb("wiki", load_flashrag(sample_corpus()))
    ws.build_index("wiki", embedder="hash:256")
    return ws


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """No test writes under the user's ~/.quaderno (DocSage's tuple store, the LLM cache)."""
    monkeypatch.setenv("QUADERNO_HOME", str(tmp_path_factory.mktemp("home")))
