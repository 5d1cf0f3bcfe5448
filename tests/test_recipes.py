"""KB recipes of the missing-knowledge experiments: evaluation questions never get in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quaderno.cli.main import app
from quaderno.corpus.chunk import KBKind, text_md5
from quaderno.corpus.loaders import load_qa_pairs
from quaderno.corpus.recipes import (RECIPES, EvalExclusion, build_recipe, medquad_half,
                                     normalize_question, question_md5)
from quaderno.errors import ConfigError, InputFormatError, NotFoundError
from quaderno.eval.datasets import load_dataset
from quaderno.workspace import Workspace

runner = CliRunner()
LONG = " ".join(f"w{i}" for i in range(700))  # one 700-word answer: three passage chunks


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")


def _json(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")


def _medquad_rows() -> list[dict]:
    rows = []
    for i in range(40):
        focus = f"Condition {i}"
        # MedQuAD ids repeat across records (not within the first 10 here)
        rows.append({"id": f"{i:07d}_1-1" if i < 10 else f"{i // 4:07d}_2-1",
                     "source": "GARD", "file": f"x/{i}.xml", "focus": focus, "qtype": "information",
                     "question": f"What is (are) {focus} ?",
                     "answer": LONG if i == 7 else f"{focus} is a disorder number {i}.   Rare.",
                     "url": f"https://example.org/{i}"})
    # leaks: evaluation question 0 asked again, and evaluation answer 1 given again
    rows.append({**rows[0], "id": "dup-q", "question": "WHAT is (are) condition 0?",
                 "answer": "Another text about condition 0."})
    rows.append({**rows[1], "id": "dup-a", "question": "Is condition 1 inherited ?"})
    return rows


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder with every file the recipes read, in the real formats."""
    root = tmp_path / "data"
    _jsonl(root / "nq_open/NQ-open.dev.minus-heldout.jsonl", [
        {"question": "who wrote hamlet", "answer": ["William Shakespeare", "Shakespeare"]},
        {"question": "when did the berlin wall fall", "answer": ["1989"]},
        {"question": "who painted the mona lisa", "answer": ["Leonardo da Vinci"]},
        {"question": "Who wrote Hamlet?", "answer": ["Shakespeare"]},  # leak of eval question 0
        {"question": "what is the capital of peru", "answer": ["Lima"]},
        {"question": "how many legs does a spider have", "answer": ["eight", "8"]},
    ])
    _jsonl(root / "nq_open/NQ-open.efficientqa.dev.1.1.jsonl", [
        {"question": "when  did the Berlin wall fall ?", "answer": ["9 November 1989"]},  # leak
        {"question": "what is the capital of peru", "answer": ["Lima"]},  # duplicate pair
        {"question": "who discovered penicillin", "answer": ["Alexander Fleming"]},
    ])
    _json(root / "2wikimultihopqa/corpus_6119.json", [
        {"title": "Teutberga", "text": "Teutberga was a queen of Lotharingia."},
        {"title": "Teutberga (copy)", "text": "Teutberga  was a queen of Lotharingia."},  # dup
        {"title": "Long", "text": LONG},
    ])
    para = {"title": "Lima", "paragraph_text": "Lima is the capital of Peru.",
            "is_supporting": True}
    _jsonl(root / "hotpotqa/hotpotqa_dev_ircot_300.jsonl", [
        {"question_id": f"h{i}", "question_text": "what is the capital of peru",
         "answers_objects": [{"spans": ["Lima"]}],
         "contexts": [para, {"title": f"Other {i}", "paragraph_text": f"Paragraph {i}.",
                             "is_supporting": False}]} for i in range(2)])
    _jsonl(root / "medical_qa/medquad_qa_pairs_14000.jsonl", _medquad_rows())
    pairs = [("头痛怎么办？", "多休息，必要时就医。"), ("发烧吃什么药", "可以服用退烧药。"),
             ("头痛，怎么办", "喝水。"),  # a punctuation variant of evaluation question 0: a leak
             ("咳嗽怎么办", "多喝水。"), ("失眠怎么办", "规律作息。")]
    _json(root / "medical_qa/huatuo26M_test_5000.json",
          [{"id": "", "instruction": [q], "input": "", "output": [a]} for q, a in pairs])
    return root


def _build(ws: Workspace, data: Path, name: str, limit: int | None, **kw):
    return build_recipe(ws, name, eval_limit=limit, data=data, **kw)


def _kb_question_md5s(ws: Workspace, kb: str) -> set[str]:
    """Normalized-question MD5 of every chunk that comes from a question (QA pair or MedQuAD
    answer passage)."""
    out = set()
    for chunk in ws.kb(kb):
        if "question" in chunk.meta:
            out.add(question_md5(chunk.meta["question"]))
        if "question_md5" in chunk.meta:
            out.add(chunk.meta["question_md5"])
    return out


def test_normalized_question_md5_ignores_case_punctuation_and_spacing():
    assert normalize_question("  Who WROTE   Hamlet? ") == "who wrote hamlet"
    assert question_md5("What is (are) Gout ?") == question_md5("what is are gout")
    assert normalize_question("头痛，怎么办？") == "头痛怎么办"
    assert question_md5("who wrote hamlet") != question_md5("who wrote macbeth")


def test_nq_qa_keeps_the_rest_of_the_file_and_drops_every_leak(ws, data):
    report = _build(ws, data, "nq-qa", 2)
    evaluation = load_dataset("nq", limit=2, data=data)
    assert not {question_md5(r.question) for r in evaluation} & _kb_question_md5s(ws, "nq-qa")
    assert (report.read, report.evaluation, report.leaks) == (9, 2, 2)
    assert report.dropped_as_leaks == 4 and report.eval_questions == 2
    assert (report.kept, report.duplicates, report.chunks) == (5, 1, 4)
    kb = ws.kb("nq-qa")
    assert kb.kind is KBKind.qa_pair and "exclude:nq[:2]" in kb.manifest["sources"]
    spider = [c for c in kb if c.meta["question"].startswith("how many legs")]
    assert spider[0].text == "Question: how many legs does a spider have\nAnswer: eight, 8"
    assert spider[0].meta == {"question": "how many legs does a spider have", "answer": "eight, 8"}


def test_default_exclusion_is_the_whole_evaluation_file(ws, data):
    report = _build(ws, data, "nq-qa", None)
    assert report.evaluation == 6 and report.leaks == 2  # EfficientQA's copy of a dev question
    assert sorted(c.meta["question"] for c in ws.kb("nq-qa")) == ["who discovered penicillin"]
    with pytest.raises(ConfigError, match="huatuo-qa.*kept none of the 5.*--eval-limit"):
        _build(ws, data, "huatuo-qa", None)
    assert not ws.has_kb("huatuo-qa")


def test_qa_pair_chunks_are_made_as_load_qa_pairs_makes_them(ws, data):
    _build(ws, data, "medquad-qa", 5)
    path = data / "medical_qa/medquad_qa_pairs_14000.jsonl"
    loaded = {c.id: c for c in load_qa_pairs(path, id_field="no-such-field")}
    stored = list(ws.kb("medquad-qa"))
    assert stored
    for chunk in stored:
        assert chunk.model_copy(update={"kb": ""}) == loaded[chunk.id]
    # NQ's answer list is joined with ", " and otherwise made the same way
    joined = data / "joined.jsonl"
    _jsonl(joined, [{"question": "how many legs does a spider have", "answer": "eight, 8"}])
    ref = next(load_qa_pairs(joined))
    _build(ws, data, "nq-qa", 2)
    mine = next(c for c in ws.kb("nq-qa") if c.title == ref.title)
    assert (mine.text, mine.title, mine.meta) == (ref.text, ref.title, ref.meta)


def test_medquad_halves_share_no_question_and_keep_evaluation_out(ws, data):
    qa = _build(ws, data, "medquad-qa", 5)
    passages = _build(ws, data, "medquad-passages", 5)
    evaluation = {question_md5(r.question) for r in load_dataset("medquad", limit=5, data=data)}
    qa_questions = _kb_question_md5s(ws, "medquad-qa")
    passage_questions = _kb_question_md5s(ws, "medquad-passages")
    assert qa_questions and passage_questions
    assert not qa_questions & passage_questions
    assert not (qa_questions | passage_questions) & evaluation
    assert all(medquad_half(c.meta["question"]) == "qa" for c in ws.kb("medquad-qa"))
    for report in (qa, passages):  # the repeated question 0 and the repeated answer 1
        assert (report.evaluation, report.leaks) == (5, 2)
    assert qa.kept + passages.kept == 42 - 5 - 2
    assert qa.other_half == passages.kept and passages.other_half == qa.kept
    assert all(text_md5(c.text) != text_md5("Condition 1 is a disorder number 1.   Rare.")
               for c in ws.kb("medquad-passages"))


def test_medquad_passages_are_focus_titled_chunks_under_300_words(ws, data):
    assert medquad_half("What is (are) Condition 7 ?") == "passage"  # the long answer's half
    _build(ws, data, "medquad-passages", 5)
    chunks = list(ws.kb("medquad-passages"))
    assert all(len(c.text.split()) < 300 for c in chunks)
    long = [c for c in chunks if c.title == "Condition 7"]
    assert [len(c.text.split()) for c in long] == [299, 299, 102]  # no overlap
    assert " ".join(c.text for c in long) == LONG
    # rendered as documents, not as Q:/A: pairs
    assert all("question" not in c.meta and "answer" not in c.meta for c in chunks)
    assert ws.kb("medquad-passages").kind is KBKind.passage


def test_medquad_split_is_deterministic_and_balanced():
    questions = [f"What are the symptoms of condition {i} ?" for i in range(400)]
    halves = [medquad_half(q) for q in questions]
    assert halves == [medquad_half(q.upper().replace("?", " ")) for q in questions]
    assert 150 < halves.count("qa") < 250


def test_nq_passages_dedup_and_chunk(ws, data):
    report = _build(ws, data, "nq-passages", 2)
    kb = ws.kb("nq-passages")
    assert report.read == 1000 + 3 + 4 and report.evaluation == report.leaks == 0
    assert report.duplicates == kb.manifest["duplicates_dropped"] >= 2
    texts = [c.text for c in kb]
    assert len({text_md5(t) for t in texts}) == len(texts)
    assert sum(t.startswith("Teutberga") for t in texts) == 1
    assert sum(t == "Lima is the capital of Peru." for t in texts) == 1
    assert all(len(t.split()) < 300 for t in texts)
    assert kb.get("wiki18:0").title == "Evan Morris"


@pytest.mark.parametrize("merged,parts", [("nq-merged", ["nq-passages", "nq-qa"]),
                                          ("medical-merged", ["medquad-passages", "medquad-qa"])])
def test_merged_recipe_equals_merge_kbs_of_its_parts(ws, data, merged, parts):
    for part in parts:
        _build(ws, data, part, 2)
    report = _build(ws, data, merged, 2)
    ws.merge_kbs("by-hand", parts)
    mine, ref = ws.kb(merged), ws.kb("by-hand")
    assert [(c.id, c.text, c.meta) for c in mine] == [(c.id, c.text, c.meta) for c in ref]
    assert mine.kind is KBKind.mixed
    assert set(report.parts) == set(parts)
    assert report.kept == sum(p.kept for p in report.parts.values())


def test_huatuo_pairs_get_ids_and_drop_punctuation_variants(ws, data):
    report = _build(ws, data, "huatuo-qa", 1)
    assert (report.evaluation, report.leaks, report.kept) == (1, 1, 3)
    chunks = list(ws.kb("huatuo-qa"))
    assert len({c.id for c in chunks}) == 3 and all(c.id for c in chunks)
    assert "头痛怎么办" not in {normalize_question(c.meta["question"]) for c in chunks}
    assert chunks[0].text == "Question: 发烧吃什么药\nAnswer: 可以服用退烧药。"


def test_bad_input_names_the_file_and_writes_nothing(ws, data):
    path = data / "medical_qa/medquad_qa_pairs_14000.jsonl"
    rows = _medquad_rows()
    del rows[20]["answer"]
    _jsonl(path, rows)
    with pytest.raises(InputFormatError, match=r"medquad_qa_pairs_14000.jsonl, line 21, "
                                               r"field 'answer'"):
        _build(ws, data, "medquad-passages", 5)
    assert not ws.has_kb("medquad-passages")
    (data / "2wikimultihopqa/corpus_6119.json").unlink()
    with pytest.raises(NotFoundError, match="corpus_6119.json.*--data-dir"):
        _build(ws, data, "nq-passages", 2)
    with pytest.raises(ConfigError, match="unknown evaluation dataset 'nqq'.*nq"):
        build_recipe(ws, "nq-qa", eval_dataset="nqq", data=data)


def test_another_evaluation_dataset_can_be_kept_out(ws, data):
    report = build_recipe(ws, "medquad-qa", eval_dataset="huatuo", data=data)
    assert report.eval_dataset == "huatuo" and report.eval_questions == 5
    assert report.evaluation == report.leaks == 0


def test_cli_builds_a_kb_a_retriever_finds_answers_in(tmp_path, data):
    home = tmp_path / "home"
    res = runner.invoke(app, ["kb", "recipe", "nq-qa", "--eval-dataset", "nq", "--eval-limit",
                              "2", "--data-dir", str(data), "--home", str(home)])
    assert res.exit_code == 0, res.output
    assert "4 chunks, 1 MD5 duplicates dropped" in res.output
    assert "dropped as evaluation leaks 4 (2 evaluation records, 2 repeating" in res.output
    ws = Workspace(home)
    ws.build_index("nq-qa")
    hits = ws.retriever("nq-qa", mode="bm25").retrieve("who painted the mona lisa", k=1)
    assert hits[0].chunk.meta["answer"] == "Leonardo da Vinci"
    res = runner.invoke(app, ["kb", "recipe", "nq-qa", "--eval-limit", "2", "--data-dir",
                              str(data), "--home", str(home)])
    assert res.exit_code == 2 and "already exists" in res.output
    res = runner.invoke(app, ["kb", "recipe", "nq-qa", "--eval-limit", "3", "--data-dir",
                              str(data), "--home", str(home), "--replace", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["evaluation"] == 3


def test_cli_lists_recipes_and_rejects_an_unknown_one(tmp_path):
    res = runner.invoke(app, ["kb", "recipe", "--list"])
    assert res.exit_code == 0
    assert all(name in res.output for name in RECIPES)
    res = runner.invoke(app, ["kb", "recipe", "nq-pairs", "--home", str(tmp_path)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "unknown recipe 'nq-pairs'" in res.output
    assert all(name in res.output for name in RECIPES)


# -- the real benchmark data (skipped where ../shared/data is absent) -------------------------
REAL = {"nq-qa": "nq", "nq-passages": "nq", "medquad-qa": "medquad",
        "medquad-passages": "medquad", "huatuo-qa": "huatuo"}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_recipe_keeps_its_evaluation_slice_out(tmp_path, shared_data, name):
    ws = Workspace(tmp_path / "home")
    report = build_recipe(ws, name, eval_limit=20, data=shared_data)
    exclusion = EvalExclusion.load(REAL[name], 20, shared_data)
    assert report.eval_questions == exclusion.size == 20
    assert report.chunks > 1000
    assert not _kb_question_md5s(ws, name) & exclusion.questions
    if RECIPES[name].kind is KBKind.qa_pair:
        assert report.evaluation == 20  # the slice's own records, skipped
    else:
        assert all(len(c.text.split()) < 300 for c in ws.kb(name))
