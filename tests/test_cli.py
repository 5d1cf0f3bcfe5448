from __future__ import annotations

import json

from typer.testing import CliRunner

from quaderno.cli.demo_cmd import sample_corpus
from quaderno.cli.main import app

runner = CliRunner()


def run(home, *args):
    return runner.invoke(app, [*args, "--home", str(home)])


def test_kb_add_index_search_json(tmp_path):
    home = tmp_path / "h"
    res = run(home, "kb", "add", "wiki", str(sample_corpus()))
    assert res.exit_code == 0, res.output
    assert "1000 chunks" in res.output and "flashrag" in res.output
    res = run(home, "index", "build", "wiki", "--embedder", "hash:128")
    assert res.exit_code == 0, res.output
    res = run(home, "search", "Evan Morris Genentech lobbyist", "--json", "-k", "3")
    assert res.exit_code == 0, res.output
    hits = json.loads(res.output)
    assert len(hits) == 3 and hits[0]["title"] == "Evan Morris" and hits[0]["rank"] == 1
    res = run(home, "search", "Evan Morris Genentech lobbyist", "--mode", "bm25")
    assert res.exit_code == 0 and "Evan Morris" in res.output
    listing = json.loads(run(home, "kb", "list", "--json").output)
    assert listing[0]["name"] == "wiki" and listing[0]["indexes"] == ["default"]
    info = json.loads(run(home, "index", "info", "wiki", "--json").output)
    assert info["components"]["dense"]["embedder"] == "hash:128"


def test_bad_input_is_one_line_error_and_keeps_the_kb(tmp_path):
    home = tmp_path / "h"
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "1", "text": "hello world"}\n')
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "text": "x"}\n{"id": "2", "txt": "y"}\n')
    assert run(home, "kb", "add", "notes", str(good)).exit_code == 0
    res = run(home, "kb", "add", "notes", str(bad), "--replace")
    assert res.exit_code == 2
    assert "bad.jsonl, line 2, field 'text': missing field" in res.output
    assert "Traceback" not in res.output
    listing = json.loads(run(home, "kb", "list", "--json").output)
    assert listing[0]["num_chunks"] == 1


def test_unknown_kb_and_qa_format(tmp_path, data_dir):
    home = tmp_path / "h"
    res = run(home, "search", "x", "--kb", "nope")
    assert res.exit_code == 2 and "no knowledge base named 'nope'" in res.output
    res = run(home, "kb", "add", "med", str(data_dir / "medquad_20.jsonl"))
    assert res.exit_code == 0 and "qa_pair" in res.output and "format qa" in res.output
