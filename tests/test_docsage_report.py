"""The DocSage benchmark report names each run's method and code version, so runs made
while the code changed are not read as one configuration's figures."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark_scripts import load
from quaderno.eval.records import ResultRecord

def _report_module():
    return load("docsage_report")


def _run(root: Path, name: str, method: str, code: str | None, score: float,
         resumed: str | None = None) -> None:
    run = root / name
    run.mkdir()
    config = {"method": method} | ({"code_version": f"0.1.0+{code}"} if code else {})
    if resumed:                  # the runner lists every version a resumed run was made with
        config["code_versions"] = [f"0.1.0+{code}", f"0.1.0+{resumed}"]
    (run / "config.json").write_text(json.dumps(config))
    record = ResultRecord(id="q1", question="How many?", answers=["3"], prediction="3",
                          method=method, metrics={"synth_score": score}, llm_calls=4,
                          prompt_tokens=10, completion_tokens=2, latency_s=1.5)
    (run / "results.jsonl").write_text(record.model_dump_json() + "\n")


def _runs_beside_one_question(tmp_path: Path) -> Path:
    """A collection of one Statistics question under ``tmp_path/collections``, and the
    empty folder of runs the report reads."""
    coll = tmp_path / "collections" / "c1"
    coll.mkdir(parents=True)
    (coll / "questions.jsonl").write_text(json.dumps(
        {"id": "q1", "category": "Statistics", "type": "Stat", "gold": {"answer": "3"}}) + "\n")
    out = tmp_path / "runs"
    out.mkdir()
    return out


def test_each_config_row_names_its_method_and_code_versions(tmp_path, capsys) -> None:
    out = _runs_beside_one_question(tmp_path)
    _run(out, "passive-head-set1", "docsage-passive", "5a069df", 1.0)
    _run(out, "passive-head-set2", "docsage-passive", "13ad1ac", 0.0)
    _run(out, "old-set3", "docsage", None, 0.0)
    _run(out, "resumed-set1", "docsage-no-sql", "5a069df", 1.0, resumed="0a1b6b8")
    _report_module().main(out, tmp_path / "collections")
    lines = capsys.readouterr().out.splitlines()
    [head] = [x for x in lines if x.startswith("| config |") and "method" in x]
    assert head.split(" | ")[1:3] == ["method", "code"]
    width = len(head.split("|"))
    rows = {cells[0]: cells for x in lines if x.startswith("| ") and len(x.split("|")) == width
            for cells in [[c.strip() for c in x.strip("|").split("|")]]}
    assert rows["passive-head"][1:3] == ["docsage-passive", "13ad1ac, 5a069df"]
    assert rows["passive-head"][-2:] == ["0.50", "2"]    # set1 1.0 and set2 0.0
    assert rows["old"][1:3] == ["docsage", "?"]
    assert rows["resumed"][1:3] == ["docsage-no-sql", "0a1b6b8, 5a069df"]


def test_a_resumed_run_older_than_code_versions_reads_as_unknown(tmp_path) -> None:
    """The review of 2b6b7be: the runner lists None first for a run begun before it
    recorded versions; the report read None.rpartition."""
    run = tmp_path / "old-set1"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"method": "docsage",
                                                 "code_versions": [None, "0.1.0+2b6b7be"]}))
    assert _report_module().run_config(run) == ("docsage", ["?", "2b6b7be"])


def test_the_report_opens_with_every_method_run_at_one_commit(tmp_path, capsys) -> None:
    """Runs made at many versions read as one table hide which ablation beat which on the
    same code: the report first shows the version with the most (method, bin) runs, each
    wholly at it, in the paper's order."""
    out = _runs_beside_one_question(tmp_path)
    _run(out, "m-sql-set1", "docsage-no-sql", "aaa", 0.0)
    _run(out, "m-full-set1", "docsage", "aaa", 1.0)
    _run(out, "m-full-set2", "docsage", "aaa", 0.0)
    _run(out, "m-other-set1", "docsage", "aaa", 1.0)
    _run(out, "m-passive-set1", "docsage-passive", "aaa", 1.0, resumed="bbb")  # two versions
    _run(out, "old-set1", "docsage", "bbb", 1.0)
    _run(out, "old-passive-set1", "docsage-passive", "bbb", 0.0)
    _run(out, "lone-set1", "docsage-no-clear", "ccc", 0.0)
    mod = _report_module()
    mod.main(out, tmp_path / "collections")
    text = capsys.readouterr().out
    first, _, rest = text.partition("## Every run")
    assert "## Every configuration at one commit (aaa)" in first
    rows = [x for x in first.splitlines() if x.startswith("| docsage")]
    # docsage before its ablation, each configuration its own row (the review of 1d6ae04:
    # two of one method were pooled); the resumed passive run is not a run at aaa
    assert [r.split(" | ")[:2] for r in rows] == [["| docsage", "m-full"],
                                                  ["| docsage", "m-other"],
                                                  ["| docsage-no-sql", "m-sql"]]
    assert rows[0].rstrip(" |").endswith("| 0.50 | 2")
    assert rows[1].rstrip(" |").endswith("| 1.00 | 1")
    assert "| m-passive |" in rest and "| lone |" in rest
    # a tie in methods goes to the version with more questions; one method is no table
    runs = {"a": {"set1": [1, 2]}, "b": {"set1": [1]}, "c": {"set1": [1]}, "d": {"set1": [1]}}
    made = {"a": {"set1": ("docsage", ["v1"])}, "b": {"set1": ("docsage-no-sql", ["v1"])},
            "c": {"set1": ("docsage", ["v2"])}, "d": {"set1": ("docsage-no-sql", ["v2"])}}
    assert mod.one_commit(runs, made)[0] == "v1"
    assert mod.one_commit({"a": runs["a"]}, {"a": made["a"]}) is None
    # two methods on two bins (four pairs) go before three methods on one bin (three)
    runs = {"a": {"set1": [1], "set2": [1]}, "b": {"set1": [1], "set2": [1]},
            "c": {"set1": [1]}, "d": {"set1": [1]}, "e": {"set1": [1]}}
    made = {"a": {"set1": ("docsage", ["v1"]), "set2": ("docsage", ["v1"])},
            "b": {"set1": ("docsage-no-sql", ["v1"]), "set2": ("docsage-no-sql", ["v1"])},
            "c": {"set1": ("docsage", ["v2"])}, "d": {"set1": ("docsage-no-sql", ["v2"])},
            "e": {"set1": ("docsage-passive", ["v2"])}}
    assert mod.one_commit(runs, made)[0] == "v1"


def _docsage_record(tuples_new: int | None, clear: dict, calls: int = 10, cached: int = 0,
                    seconds: float = 50.0) -> ResultRecord:
    return ResultRecord.model_validate({
        "id": "q1", "question": "How many?", "answers": ["3"], "prediction": "3",
        "method": "docsage", "metrics": {"synth_score": 1.0}, "llm_calls": calls,
        "cached_calls": cached, "prompt_tokens": 900, "completion_tokens": 100,
        "latency_s": seconds, "details": {"kind": "docsage", "variant": "full",
                                          "tuples_new": tuples_new, "clear": clear}})


def test_cost_per_tuple_is_over_the_tuples_the_questions_own_calls_read() -> None:
    """Review (audit): seconds per tuple divided a question's time by tuples the tuple store
    held too; a run of 0 extraction calls and 39 store hits printed 0.2 s/tuple."""
    per_tuple = _report_module().per_tuple
    # every tuple from the store: no tuple read, no cost per tuple
    held = _docsage_record(0, {"tuples_extracted": 40, "llm_calls_extract": 0,
                               "cache_hits": 39})
    assert per_tuple([held]) == ("0", "–", "–", "–")
    # 5 tuples read by the question's calls, 40 in its tables: cost over the 5
    read = _docsage_record(5, {"tuples_extracted": 40, "cache_hits": 35})
    assert per_tuple([read]) == ("5", "2.0", "200", "10.0")
    # review: a question served from the store beside it blanks nothing; the bin's cost
    # is over the bin's tuples
    assert per_tuple([read, held]) == ("5", "4.0", "400", "20.0")
    # a replay from the response cache: calls and tokens per tuple, no seconds
    assert per_tuple([_docsage_record(5, {}, cached=10, seconds=0.5)]) == \
        ("5", "2.0", "200", "–")
    # an older record (no count kept) with no store hit: CLEAR's tuples, an estimate
    old = _docsage_record(None, {"tuples_extracted": 4, "cache_hits": 0})
    assert per_tuple([old]) == ("≈4", "≈2.5", "≈250", "≈12.5")
    # ... with store hits: no estimate for its bin
    assert per_tuple([old, _docsage_record(None, {"tuples_extracted": 9, "cache_hits": 3})]) \
        == ("–", "–", "–", "–")


def test_runs_on_held_out_collections_are_reported_apart(tmp_path, capsys) -> None:
    """A run over a collection rendered with the test template family alone is held-out
    accuracy; the development collections' runs are listed under their own heading."""
    out = _runs_beside_one_question(tmp_path)
    (tmp_path / "collections" / "c1" / "manifest.json").write_text(
        json.dumps({"template_families": [0, 1, 2, 3]}))
    held = tmp_path / "collections" / "c2"
    held.mkdir()
    (held / "manifest.json").write_text(json.dumps({"template_families": [4]}))
    (held / "questions.jsonl").write_text(json.dumps(
        {"id": "h1", "category": "Statistics", "type": "Stat", "gold": {"answer": "3"}}) + "\n")
    _run(out, "dev-set1", "docsage", "5a069df", 1.0)
    _run(out, "heldout-set1", "docsage", "5a069df", 0.0)
    (out / "heldout-set1" / "results.jsonl").write_text(
        (out / "heldout-set1" / "results.jsonl").read_text().replace('"q1"', '"h1"'))
    (out / "empty-set1").mkdir()                 # review: a run with no record yet
    (out / "empty-set1" / "results.jsonl").write_text("")
    _report_module().main(out, tmp_path / "collections")
    text = capsys.readouterr().out
    accuracy = text.partition("Cost per question")[0]       # the cost table lists every run
    assert "| empty |" not in accuracy.partition("## Development collections")[0]
    held_part, _, dev_part = accuracy.partition("## Development collections")
    assert "## Held-out collections" in held_part
    assert "| heldout | docsage | 5a069df |" in held_part and "| dev |" not in held_part
    assert "| dev | docsage | 5a069df |" in dev_part and "| heldout |" not in dev_part


def test_runs_on_fresh_collections_are_reported_apart_from_held_out_ones(tmp_path,
                                                                        capsys) -> None:
    """Template family 5 was written after family 4 had been read for failure analysis: its
    runs are a section of their own, before the held-out and development ones."""
    out = _runs_beside_one_question(tmp_path)
    (tmp_path / "collections" / "c1" / "manifest.json").write_text(
        json.dumps({"template_families": [0, 1, 2, 3]}))
    for name, families, qid in (("c2", [4], "h1"), ("c3", [5], "f1")):
        folder = tmp_path / "collections" / name
        folder.mkdir()
        (folder / "manifest.json").write_text(json.dumps({"template_families": families}))
        (folder / "questions.jsonl").write_text(json.dumps(
            {"id": qid, "category": "Statistics", "type": "Stat",
             "gold": {"answer": "3"}}) + "\n")
    _run(out, "dev-set1", "docsage", "5a069df", 1.0)
    for run, qid in (("heldout-set1", "h1"), ("fresh-set1", "f1")):
        _run(out, run, "docsage", "5a069df", 0.0)
        (out / run / "results.jsonl").write_text(
            (out / run / "results.jsonl").read_text().replace('"q1"', f'"{qid}"'))
    _report_module().main(out, tmp_path / "collections")
    accuracy = capsys.readouterr().out.partition("Cost per question")[0]
    fresh_part, _, rest = accuracy.partition("## Held-out collections")
    held_part, _, dev_part = rest.partition("## Development collections")
    assert "## Fresh collections" in fresh_part and "--templates 5" in fresh_part
    assert "| fresh | docsage |" in fresh_part and "| heldout |" not in fresh_part
    assert "| heldout | docsage |" in held_part and "| fresh |" not in held_part
    assert "| dev | docsage |" in dev_part
    assert "| fresh |" not in dev_part and "| heldout |" not in dev_part


def test_one_question_id_in_two_collections_is_refused_by_name(tmp_path) -> None:
    """Review: ids name family, bin and seed, not the template families, so one seed
    rendered two ways shares them, and the report read one collection's questions as the
    other's, held-out marks included."""
    import pytest
    root = tmp_path / "collections"
    for name, families in (("award-set1-s1", [0, 1, 2, 3]), ("award-set1-s1-t4", [4])):
        (root / name).mkdir(parents=True)
        (root / name / "manifest.json").write_text(json.dumps({"template_families": families}))
        (root / name / "questions.jsonl").write_text(json.dumps(
            {"id": "award-set1-s1-q001", "category": "Comparison"}) + "\n")
    with pytest.raises(SystemExit, match="award-set1-s1-q001 is in both award-set1-s1 and "
                                         "award-set1-s1-t4"):
        _report_module().question_index(root)
