"""Metrics against hand-computed cases and reference libraries."""

from __future__ import annotations

import math

import pytest

from quaderno.eval import metrics as M


@pytest.mark.parametrize("pred, golds, em, f1", [
    ("The Eiffel Tower!", ["eiffel tower"], 1.0, 1.0),
    ("Paris, France", ["Paris"], 0.0, 2 * 0.5 * 1 / 1.5),
    ("yes", ["no"], 0.0, 0.0),
    ("yes it is", ["yes"], 0.0, 0.0),  # yes/no mismatch after normalization: F1 = 0
    ("noanswer", ["noanswer"], 1.0, 1.0),
    ("a cat sat", ["the dog sat", "cat sat"], 1.0, 1.0),  # max over golds, articles dropped
    ("", ["x"], 0.0, 0.0),
])
def test_em_f1_hotpotqa_definition(pred, golds, em, f1):
    assert M.em(pred, golds) == em
    assert M.f1(pred, golds) == pytest.approx(f1)


def test_precision_recall():
    assert M.precision("Chief of Protocol of the US", ["Chief of Protocol"]) == pytest.approx(3 / 5)
    assert M.recall("Chief of Protocol of the US", ["Chief of Protocol"]) == 1.0


def test_cover_em_is_unordered_token_coverage_and_differs_from_acc():
    golds = ["Wilhelm Conrad Röntgen"]
    assert M.cover_em("It was Röntgen, Wilhelm Conrad.", golds) == 1.0  # order ignored
    assert M.acc("It was Röntgen, Wilhelm Conrad.", golds) == 0.0  # not a substring
    assert M.cover_em_span("It was Röntgen, Wilhelm Conrad.", golds) == 0.0
    assert M.cover_em("Wilhelm Röntgen", golds) == 0.0  # a gold token is missing
    assert M.cover_em("the new_york yankees", ["New York Yankees"]) == 1.0  # underscores
    assert M.cover_em("it’s Paris", ["it s Paris"]) == 1.0  # curly quote → space
    assert M.acc("He was born in Paris in 1900", ["paris"]) == 1.0
    assert M.cover_em("anything", [""]) == 0.0


def test_rouge_matches_rouge_score_on_english():
    from rouge_score import rouge_scorer
    pred = "The cat sat quietly on the mat near the door."
    gold = "A cat was sitting on the mat by the door."
    ref = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"]).score(gold, pred)
    ours = M.rouge(pred, [gold])
    for key in ("rouge1", "rouge2", "rougeL"):
        assert ours[key] == pytest.approx(ref[key].fmeasure)


def test_rouge_and_bleu_tokenize_chinese_by_character():
    gold = "术后泡脚是可以的"
    assert M.rouge("术后泡脚是可以的", [gold])["rouge1"] == pytest.approx(1.0)
    partial = M.rouge("泡脚可以", [gold])["rouge1"]
    # 4 of 4 predicted characters appear among 8 gold characters: P=1, R=0.5
    assert partial == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert M.bleu("术后泡脚是可以的", [gold])["bleu4"] == pytest.approx(1.0)


def test_bleu_matches_sacrebleu_on_pretokenized_text():
    from sacrebleu.metrics import BLEU
    pred, gold = "the cat sat on the mat", "the cat sat on a mat"
    bleu = BLEU(max_ngram_order=2, tokenize="none", effective_order=True)
    ref = bleu.sentence_score(pred, [gold])
    assert M.bleu(pred, [gold])["bleu2"] == pytest.approx(ref.score / 100)
    assert 0 < M.bleu(pred, [gold])["bleu4"] < M.bleu(pred, [gold])["bleu1"] <= 1


def test_retrieval_recall_precision_and_overlap():
    assert M.recall_at_k(["a", "b", "c"], {"a", "c"}, 2) == 0.5
    assert M.recall_at_k(["a", "b", "c"], {"a", "c"}, 5) == 1.0
    assert M.precision_at_k(["a", "b", "c"], {"a", "c"}, 2) == 0.5
    assert M.recall_at_k(["a"], set(), 2) is None
    # step 2 vs step 1: {b,c} vs {a,b} → 1/3; step 3 vs {a,b,c}: {c,d} → 1/4
    assert M.jaccard_overlap([["a", "b"], ["b", "c"], ["c", "d"]]) == pytest.approx([1 / 3, 1 / 4])
    assert M.jaccard_overlap([["a"]]) == []


def test_strict_em_and_containment_on_an_nq_answer():
    """The paper's "EM" exceeds its F1 in every row of Table 1: containment can, strict
    EM (max over the same golds) cannot (checklist A17)."""
    pred, golds = "Anthony Hopkins as Dr. Hannibal Lecter", ["Anthony Hopkins", "Hopkins"]
    assert M.em(pred, golds) == 0.0
    assert M.acc(pred, golds) == 1.0 and M.cover_em(pred, golds) == 1.0
    # 6 predicted tokens, gold "anthony hopkins": P = 2/6, R = 1 → F1 = 0.5 < containment
    assert M.f1(pred, golds) == pytest.approx(0.5)
    assert M.precision(pred, golds) == pytest.approx(2 / 6)
    assert M.recall(pred, golds) == 1.0  # either gold is recalled fully
    assert M.em("anthony  hopkins.", golds) == 1.0  # strict, after SQuAD normalization


def test_nq_style_records_get_strict_and_containment_em_and_token_f1_p_r():
    from quaderno.eval.datasets import QARecord
    from quaderno.eval.runner import score
    from quaderno.methods.answer import Answer

    record = QARecord(id="nq1", question="who played hannibal lecter in silence of the lambs",
                      answers=["Anthony Hopkins", "Sir Anthony Hopkins"])
    out = score(record, Answer(question=record.question, answer="Sir Anthony Hopkins",
                               method="m"))
    assert {"em", "acc", "cover_em", "f1", "precision", "recall"} <= set(out)
    assert out["em"] == out["acc"] == out["cover_em"] == out["f1"] == 1.0
    assert not {"rouge1", "bleu1"} & set(out)  # long-form metrics only for long answers


def test_bleu_is_cumulative_with_smoothing_method_1_by_hand():
    # p1 = 3/4, p2 = 1/3, p3 = 0/2 → 0.1/2, p4 = 0/1 → 0.1/1 (method 1); equal lengths: BP = 1
    out = M.bleu("a b c d", ["a b x d"])
    assert out["bleu1"] == pytest.approx(0.75)
    assert out["bleu2"] == pytest.approx((0.75 * 1 / 3) ** (1 / 2))
    assert out["bleu3"] == pytest.approx((0.75 * 1 / 3 * 0.05) ** (1 / 3))
    assert out["bleu4"] == pytest.approx((0.75 * 1 / 3 * 0.05 * 0.1) ** (1 / 4))
    # a short answer is penalized for brevity: BP = exp(1 - 8/4)
    zh = M.bleu("泡脚可以", ["术后泡脚是可以的"])
    assert zh["bleu1"] == pytest.approx(math.exp(1 - 8 / 4) * 1.0)
    assert M.bleu("", ["x"]) == {"bleu1": 0.0, "bleu2": 0.0, "bleu3": 0.0, "bleu4": 0.0}
    assert M.bleu("x y", ["", "  "])["bleu1"] == 0.0  # no usable reference


def test_bleu_multiple_golds_are_references_and_rouge_takes_the_best():
    golds = ["the cat sat on a mat", "a dog ran"]
    assert M.bleu("the cat sat on a mat", golds)["bleu4"] == pytest.approx(1.0)
    assert M.rouge("a dog ran", golds)["rouge1"] == pytest.approx(1.0)
