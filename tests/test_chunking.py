from __future__ import annotations

import pytest

from quaderno.corpus.chunk import Chunk, text_md5
from quaderno.corpus.chunking import WordChunker
from quaderno.errors import ConfigError


def doc(n: int) -> Chunk:
    return Chunk(id="d", text=" ".join(f"w{i}" for i in range(n)), title="T")


def test_short_document_kept_whole_with_its_id():
    assert WordChunker(300).split(doc(300)) == [doc(300)]


def test_windows_cover_every_word_without_overlap():
    pieces = WordChunker(300).split(doc(700))
    assert [len(p.text.split()) for p in pieces] == [300, 300, 100]
    assert [p.id for p in pieces] == ["d#0", "d#1", "d#2"]
    assert " ".join(p.text for p in pieces) == doc(700).text
    assert all(p.title == "T" and p.meta["parent_id"] == "d" for p in pieces)


def test_overlap_repeats_words():
    pieces = WordChunker(4, overlap=2).split(doc(8))
    assert [p.text for p in pieces] == ["w0 w1 w2 w3", "w2 w3 w4 w5", "w4 w5 w6 w7"]


@pytest.mark.parametrize("max_words, overlap", [(0, 0), (10, 10), (10, -1)])
def test_bad_parameters_are_named(max_words, overlap):
    with pytest.raises(ConfigError, match="max_words|overlap"):
        WordChunker(max_words, overlap)


def test_md5_ignores_whitespace_differences():
    assert text_md5("a  b\nc") == text_md5("a b c")
    assert text_md5("a b") != text_md5("a c")
