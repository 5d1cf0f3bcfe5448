"""`quaderno gate label / train / eval / info / explain` and `--gate` on `ask` and `eval`,
end to end (the fake OpenAI-compatible server answers; a hash embedder stands in for MiniLM)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from quaderno.cli.main import app
from quaderno.corpus.chunk import Chunk
from quaderno.gate.labels import LabelWriter, read_labels
from quaderno.llm.testing import FakeOpenAIServer
from test_gate_data import label_file

runner = CliRunner()


def reply(body) -> str:
    text = body["messages"][-1]["content"]
    if "Documents" in text:
        return "<answer>Paris</answer>"
    return "not sure <answer>unknown</answer>" if "capital" in text else "<answer>Rome</answer>"


@pytest.fixture
def home(tmp_path):
    from quaderno.workspace import Workspace
    ws = Workspace(tmp_path / "home")
    ws.add_kb("geo", [Chunk(id="p", title="Paris", text="Paris is the capital of France."),
                      Chunk(id="r", title="Rome", text="Rome is the capital of Italy.")])
    ws.build_index("geo", embedder=None)
    return ws.root


@pytest.fixture
def server():
    with FakeOpenAIServer(reply=reply) as srv:
        yield srv


def llm(server) -> list[str]:
    return ["--llm", "openai", "--model", "fake-model", "--base-url", server.url]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    labels = root / "labels.jsonl"
    data = label_file(n_train=40, n_val=20, n_test=20)
    writer = LabelWriter(labels, data.provenance)
    for r in data.records:
        writer.write(r)
    res = runner.invoke(app, ["gate", "train", "--labels", str(labels), "--out",
                              str(root / "gate"), "--embedder", "hash:64",
                              "--min-child-samples", "3", "--rqm-rounds", "40", "--epochs", "5"])
    assert res.exit_code == 0, res.output
    assert "trained gates ccsk, ccsk-rec, skr-knn" in res.output
    return labels, root / "gate"


def test_gate_label_makes_resumable_labels_with_provenance(tmp_path, home, server):
    data = tmp_path / "wq.json"
    data.write_text(json.dumps([
        {"qId": "a", "qText": "what is the capital of france?", "answers": ["Paris"]},
        {"qId": "b", "qText": "what is the capital of italy?", "answers": ["Rome"]},
        {"qId": "c", "qText": "where was caesar born?", "answers": ["Rome"]},
        {"qId": "d", "qText": "what is it?", "answers": ["http://x.org/"]}]))
    out = tmp_path / "labels.jsonl"
    args = ["gate", "label", "-d", str(data), "--format", "webquestions", "--split", "train",
            "--kb", "geo", "--mode", "bm25", "--k", "2", "--out", str(out), "--embedder",
            "hash:64", "--home", str(home), *llm(server)]
    res = runner.invoke(app, [*args, "--n", "2", "--seed", "1"])
    assert res.exit_code == 0, res.output
    first = read_labels(out)
    assert len(first.records) == 2 and first.provenance.llm == "openai:fake-model"
    assert first.provenance.k == 2 and first.provenance.retrieval_method == "vanilla-rag"
    calls = len(server.requests)
    res = runner.invoke(app, args)  # resume: only the missing question; the URL one is out
    assert res.exit_code == 0, res.output
    labels = {r.id: r for r in read_labels(out).records}
    assert sorted(labels) == ["a", "b", "c"] and len(server.requests) == calls + 2
    assert labels["a"].judgement == "ir_better"  # closed book "unknown", documents "Paris"
    assert labels["b"].judgement == "same"  # both wrong
    assert labels["c"].judgement == "ir_worse"  # closed book "Rome", documents "Paris"
    # another LLM may not append to these labels
    res = runner.invoke(app, [*args[:-6], "--llm", "openai", "--model", "other",
                              "--base-url", server.url])
    assert res.exit_code == 2 and "write to another --out" in res.output


def test_gate_eval_info_explain(trained, tmp_path):
    labels, gate = trained
    report, js = tmp_path / "report.md", tmp_path / "report.json"
    res = runner.invoke(app, ["gate", "eval", str(gate), "--answers", str(labels), "--split",
                              "test", "--report", str(report), "--json-out", str(js)])
    assert res.exit_code == 0, res.output
    result = json.loads(js.read_text())
    assert result["n"] == 20 and set(result["gates"]) >= {"ccsk", "never", "always", "skr-knn"}
    text = report.read_text()
    assert "| ccsk |" in text and "where each branch of Eq. 7 sent" in text
    assert "Fig. 4 protocol on val" in text and "fake:fake" in text
    res = runner.invoke(app, ["gate", "info", str(gate), "--json"])
    info = json.loads(res.output)
    assert info["labels_llm"] == "fake:fake" and "ccsk-rec" in info["gates"]
    res = runner.invoke(app, ["gate", "explain", "when was the acme company founded",
                              "--gate", str(gate), "--response", "not sure <answer>x</answer>"])
    assert res.exit_code == 0, res.output
    assert "branch" in res.output and "f_sn" in res.output and "neighbour 1" in res.output


def test_gate_eval_on_precomputed_answers_needs_no_llm(tmp_path, trained):
    _, gate = trained
    path = tmp_path / "answers.jsonl"
    rows = [{"question": "when was the acme company founded", "golden_answers": ["1950"],
             "answer_no_retrieval": "unknown", "answer_retrieval": "1950"},
            {"question": "what is the capital city of peru", "golden_answers": ["lima"],
             "answer_no_retrieval": "lima", "answer_retrieval": "cusco"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    js = tmp_path / "r.json"
    # answers without provenance: their LLM is unknown, so a learned gate is refused ...
    res = runner.invoke(app, ["gate", "eval", "always", "never", f"{gate}:ccsk", "--answers",
                              str(path), "--json-out", str(js)])
    assert res.exit_code == 2 and "unknown" in res.output, res.output
    # ... unless allowed, and then warned about
    res = runner.invoke(app, ["gate", "eval", "always", "never", f"{gate}:ccsk", "--answers",
                              str(path), "--json-out", str(js), "--allow-other-llm"])
    assert res.exit_code == 0, res.output
    assert "WARNING" in res.output and "no splits" in res.output
    gates = json.loads(js.read_text())["gates"]
    assert gates["always"]["score"]["acc"] == 0.5 and gates["never"]["score"]["acc"] == 0.5
    assert gates["always"]["score"]["gain_over_never"] == 0.0
    assert gates["ccsk"]["score"]["n"] == 2


def test_ask_and_eval_with_gate_never(tmp_path, home, server):
    res = runner.invoke(app, ["ask", "where was caesar born?", "--method", "vanilla-rag",
                              "--gate", "never", "--json", "--no-cache", "--home", str(home),
                              *llm(server)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["answer"] == "Rome" and data["gate"]["retrieve"] is False
    assert data["retrieval_rounds"] == [] and data["method"] == "never>vanilla-rag"
    res = runner.invoke(app, ["ask", "q?", "--gate", str(tmp_path / "nope"), "--home",
                              str(home), *llm(server)])
    assert res.exit_code == 2 and "no gate" in res.output
    dataset = tmp_path / "d.jsonl"
    dataset.write_text(json.dumps({"id": "1", "question": "where was caesar born?",
                                   "golden_answers": ["Rome"]}) + "\n")
    out = tmp_path / "runs"
    res = runner.invoke(app, ["eval", "-d", str(dataset), "--format", "flashrag", "--method",
                              "vanilla-rag", "--pool", "kb", "--kb", "geo", "--gate", "always",
                              "--out", str(out), "--home", str(home), "--concurrency", "1",
                              *llm(server)])
    assert res.exit_code == 0, res.output
    run = next(out.iterdir())
    assert "gate-always" in run.name
    assert json.loads((run / "config.json").read_text())["gate"] == "always"
    res = runner.invoke(app, ["gate", "eval", "always", "--run", str(run)])
    assert res.exit_code == 0, res.output
    assert '"retrieval_rate": 1.0' in res.output and '"gated": 1' in res.output


def test_gate_train_exclude_and_eval_scores_test_by_default(trained, tmp_path):
    labels, gate = trained
    # evaluation questions in a label file: kept out of the memory, counted in the manifest
    data = read_labels(labels)
    held = {r.question for r in data.records if r.split != "train"}
    evals = [r for r in data.split("train") if r.question not in held][:3]
    other = tmp_path / "eval.jsonl"
    writer = LabelWriter(other, data.provenance)
    for r in evals:
        writer.write(r.model_copy(update={"split": "test"}))
    res = runner.invoke(app, ["gate", "train", "--labels", str(labels), "--out",
                              str(tmp_path / "g"), "--embedder", "hash:64", "--exclude",
                              str(other), "--min-child-samples", "3", "--rqm-rounds", "40",
                              "--epochs", "5"])
    assert res.exit_code == 0, res.output
    assert "--exclude removed 3 train" in res.output
    info = json.loads(runner.invoke(app, ["gate", "info", str(tmp_path / "g"), "--json"]).output)
    assert info["training"]["excluded"]["train"] == 3
    memory = json.loads(next((tmp_path / "g").rglob("memory.json")).read_text())
    assert not {r.question for r in evals} & {m["question"] for m in memory}
    # eval: test rows by default; --split all warns that train/val rows are optimistic
    js = tmp_path / "r.json"
    res = runner.invoke(app, ["gate", "eval", "never", "--answers", str(labels), "--json-out",
                              str(js)])
    assert res.exit_code == 0, res.output
    assert json.loads(js.read_text())["n"] == 20 and "WARNING" not in res.output
    res = runner.invoke(app, ["gate", "eval", "never", "--answers", str(labels), "--split",
                              "all", "--json-out", str(js)])
    assert res.exit_code == 0 and "WARNING" in res.output and "optimistic" in res.output
    assert json.loads(js.read_text())["n"] == 80
