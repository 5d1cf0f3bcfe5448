from __future__ import annotations

import json

import pytest

from quaderno.corpus.chunk import Chunk, KBKind
from quaderno.corpus.loaders import load_jsonl, load_qa_pairs
from quaderno.errors import (AlreadyExistsError, ConfigError, IndexFormatError, InputFormatError,
                             NotFoundError)


def chunks(*texts: str) -> list[Chunk]:
    return [Chunk(id=f"c{i}", text=t, title=f"T{i}") for i, t in enumerate(texts)]


def test_add_and_read_back(ws):
    kb = ws.add_kb("notes", chunks("alpha one", "beta two", "gamma three"))
    assert len(kb) == 3 and kb.kind is KBKind.passage
    assert [c.text for c in kb] == ["alpha one", "beta two", "gamma three"]
    assert kb.by_positions([2, 0])[0].id == "c2"
    assert kb.get("c1").title == "T1" and kb.get("c1").kb == "notes"
    assert ws.kb_names() == ["notes"]
    assert ws.list_kbs()[0]["num_chunks"] == 3


def test_md5_dedup_drops_identical_text(ws):
    kb = ws.add_kb("d", chunks("same  text", "other", "same text"))
    assert len(kb) == 2 and kb.manifest["duplicates_dropped"] == 1
    kb2 = ws.add_kb("nd", chunks("same text", "same text"), dedup=False)
    assert len(kb2) == 2


def test_long_documents_are_chunked_to_max_words(ws):
    text = " ".join(f"w{i}" for i in range(650))
    kb = ws.add_kb("long", [Chunk(id="doc", text=text)], max_words=300)
    assert [c.id for c in kb] == ["doc#0", "doc#1", "doc#2"]
    assert max(len(c.text.split()) for c in kb) == 300


def test_duplicate_id_with_different_text_is_named(ws):
    bad = [Chunk(id="x", text="one", source="a.jsonl:1"),
           Chunk(id="x", text="two", source="a.jsonl:7")]
    with pytest.raises(InputFormatError, match=r"duplicate chunk id 'x'.*a.jsonl:1.*a.jsonl:7"):
        ws.add_kb("dup", bad)


def test_existing_kb_is_not_overwritten_without_replace(ws):
    ws.add_kb("k", chunks("first"))
    with pytest.raises(AlreadyExistsError, match="--replace"):
        ws.add_kb("k", chunks("second"))
    assert [c.text for c in ws.kb("k")] == ["first"]
    assert [c.text for c in ws.add_kb("k", chunks("second"), replace=True)] == ["second"]


def test_bad_input_midway_loses_nothing_stored(ws, tmp_path):
    ws.add_kb("k", chunks("kept text"))
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "1", "text": "ok"}\n{"id": "2", "text": "ok2"}\nnot json\n')
    with pytest.raises(InputFormatError, match="line 3"):
        ws.add_kb("k", load_jsonl(path), replace=True)
    assert [c.text for c in ws.kb("k")] == ["kept text"]
    assert sorted(p.name for p in (ws.root / "kbs" / "k").iterdir() if p.name.startswith(".build"))\
        == []


def test_empty_source_is_refused(ws):
    with pytest.raises(InputFormatError, match="would be empty"):
        ws.add_kb("empty", [])
    assert not ws.has_kb("empty")


def test_unknown_kb_lists_known_names(ws):
    ws.add_kb("alpha", chunks("x"))
    with pytest.raises(NotFoundError, match=r"no knowledge base named 'beta' \(known: alpha\)"):
        ws.kb("beta")


@pytest.mark.parametrize("name", ["", "../up", "a b", "-x", "x" * 65])
def test_invalid_names(ws, name):
    with pytest.raises(ConfigError, match="invalid knowledge base name"):
        ws.add_kb(name, chunks("x"))


def test_unknown_kind(ws):
    with pytest.raises(ConfigError, match="unknown KB kind 'book'"):
        ws.add_kb("k", chunks("x"), kind="book")


def test_merge_passages_and_qa_pairs(ws, data_dir):
    ws.add_kb("p", chunks("passage one", "shared text"))
    ws.add_kb("qa", load_qa_pairs(data_dir / "medquad_20.jsonl"), kind="qa_pair")
    ws.add_kb("p2", chunks("shared text"))
    merged = ws.merge_kbs("all", ["p", "qa"])
    assert len(merged) == 22 and merged.kind is KBKind.mixed
    first = merged.by_positions([0])[0]
    assert first.id == "p/c0" and first.meta["origin_kb"] == "p"
    assert merged.by_positions([2])[0].meta["origin_kind"] == "qa_pair"
    # identical text across sources is stored once
    assert len(ws.merge_kbs("pp", ["p", "p2"])) == 2


def test_kb_of_another_format_version_is_a_clear_error(ws):
    kb = ws.add_kb("k", chunks("x"))
    manifest = kb.path / "manifest.json"
    data = json.loads(manifest.read_text())
    data["format_version"] = 99
    manifest.write_text(json.dumps(data))
    with pytest.raises(IndexFormatError, match="format version 99.*rebuild"):
        ws.kb("k")


def test_remove_kb_removes_indexes(ws):
    ws.add_kb("k", chunks("alpha", "beta"))
    ws.build_index("k", embedder="hash:64")
    ws.remove_kb("k")
    assert ws.kb_names() == [] and not (ws.root / "indexes" / "k").exists()
