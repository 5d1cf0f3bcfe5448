from __future__ import annotations

import json
from pathlib import Path

import pytest

from quaderno.corpus.loaders import (guess_format, load, load_flashrag, load_folder, load_jsonl,
                                     load_qa_pairs, split_flashrag_contents)
from quaderno.errors import ConfigError, InputFormatError


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_flashrag_sample_loads_with_titles(wiki_chunks):
    assert len(wiki_chunks) == 1000
    first = wiki_chunks[0]
    assert first.id == "0"
    assert first.title == "Evan Morris"
    assert first.text.startswith("Evan Morris Evan L. Morris")
    assert len({c.id for c in wiki_chunks}) == 1000


def test_split_flashrag_contents_without_title():
    assert split_flashrag_contents("plain text\nmore") == ("", "plain text\nmore")
    assert split_flashrag_contents('"T"\nbody') == ("T", "body")


def test_generic_json_list_with_custom_fields(data_dir):
    chunks = list(load_jsonl(data_dir / "2wiki_corpus_40.json", id_field="nope",
                             text_field="text", title_field="title"))
    assert len(chunks) == 40
    assert chunks[0].title == "Teutberga"
    assert chunks[0].id == "2wiki_corpus_40:1"  # no id field: file stem + record number
    assert "Lotharingia" in chunks[0].text


def test_qa_pairs_index_question_and_answer(data_dir):
    chunks = list(load_qa_pairs(data_dir / "medquad_20.jsonl"))
    assert len(chunks) == 20
    c = chunks[0]
    assert c.text.startswith("Question: What is (are) Adult Acute Lymphoblastic Leukemia ?")
    assert "\nAnswer: Key Points" in c.text
    assert c.meta["question"].startswith("What is")
    assert guess_format(data_dir / "medquad_20.jsonl") == "qa"


def test_qa_pairs_accept_one_element_lists(tmp_path):
    path = tmp_path / "huatuo.json"
    path.write_text(json.dumps([{"instruction": ["头痛怎么办"], "output": ["多休息"]}]),
                    encoding="utf-8")
    (chunk,) = load_qa_pairs(path, question_field="instruction", answer_field="output")
    assert chunk.text == "Question: 头痛怎么办\nAnswer: 多休息"


def test_folder_of_txt_and_md(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("alpha text", encoding="utf-8")
    (tmp_path / "sub" / "b.md").write_text("# Bravo Title\n\nbravo body", encoding="utf-8")
    (tmp_path / "ignored.csv").write_text("x,y", encoding="utf-8")
    chunks = list(load_folder(tmp_path))
    assert [c.id for c in chunks] == ["a.txt", "sub/b.md"]
    assert chunks[1].title == "Bravo Title"
    assert guess_format(tmp_path) == "folder"


def test_malformed_line_names_file_and_line(tmp_path):
    path = write_lines(tmp_path / "c.jsonl", ['{"id": "1", "contents": "\\"T\\"\\nok"}',
                                              '{"id": "2", "contents": '])
    with pytest.raises(InputFormatError) as err:
        list(load_flashrag(path))
    assert "c.jsonl" in str(err.value) and "line 2" in str(err.value)
    assert err.value.line == 2


def test_missing_field_names_field_and_line(tmp_path):
    path = write_lines(tmp_path / "c.jsonl", ['{"id": "1", "text": "fine"}', '{"id": "2"}'])
    with pytest.raises(InputFormatError, match=r"line 2, field 'text': missing field"):
        list(load_jsonl(path))


def test_empty_document_is_an_error(tmp_path):
    path = write_lines(tmp_path / "c.jsonl", ['{"id": "1", "text": "   "}'])
    with pytest.raises(InputFormatError, match="empty document"):
        list(load_jsonl(path))
    flash = write_lines(tmp_path / "f.jsonl", ['{"id": "1", "contents": "\\"Only title\\"\\n"}'])
    with pytest.raises(InputFormatError, match="empty document"):
        list(load_flashrag(flash))


def test_non_object_record_and_wrong_type(tmp_path):
    path = write_lines(tmp_path / "c.jsonl", ['[1, 2]'])
    with pytest.raises(InputFormatError, match="expected a JSON object"):
        list(load_jsonl(path))
    path = write_lines(tmp_path / "d.jsonl", ['{"text": 5}'])
    with pytest.raises(InputFormatError, match="expected text, got int"):
        list(load_jsonl(path))


def test_skip_invalid_keeps_good_records(tmp_path):
    path = write_lines(tmp_path / "c.jsonl", ['{"id": "1", "text": "one"}', 'garbage{',
                                              '{"id": "3"}', '{"id": "4", "text": "four"}'])
    assert [c.id for c in load_jsonl(path, skip_invalid=True)] == ["1", "4"]


def test_empty_folder_and_missing_file(tmp_path):
    with pytest.raises(InputFormatError, match="no files matching"):
        list(load_folder(tmp_path))
    with pytest.raises(InputFormatError, match="file not found"):
        list(load_jsonl(tmp_path / "nope.jsonl"))


def test_unknown_format():
    with pytest.raises(ConfigError, match="unknown format 'xml'"):
        load("x", "xml")


def test_qa_pairs_with_empty_or_repeated_ids_get_unique_ones(tmp_path):
    """Huatuo's records have "id": ""; MedQuAD reuses a document id for each question."""
    import json

    from quaderno.corpus.loaders import load_qa_pairs
    path = tmp_path / "pairs.jsonl"
    rows = [{"id": "", "question": "q1", "answer": "a1"},
            {"id": "doc-7", "question": "q2", "answer": "a2"},
            {"id": "doc-7", "question": "q3", "answer": "a3"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    ids = [c.id for c in load_qa_pairs(path)]
    assert ids == ["pairs:1", "doc-7", "doc-7@3"]


def test_medquad_questions_have_unique_ids(shared_data):
    from quaderno.eval.datasets import load_dataset
    records = load_dataset("medquad", limit=2000, data=shared_data)
    assert len({r.id for r in records}) == len(records) == 2000
