"""Answer and retrieval metrics, as the papers and their official scripts define them.

- ``em``, ``f1``, ``precision``, ``recall``: HotpotQA's official script (SQuAD
  normalization; yes/no/noanswer mismatch gives 0), max over golden answers.
- ``cover_em``: PAGER's "Cover-EM" — every token of a normalized golden answer appears among
  the prediction's tokens, order ignored (``cover_em_span`` is the contiguous variant the
  official script also computes).
- ``acc``: FlashRAG's accuracy / sub-EM — the normalized golden string is a substring of the
  normalized prediction. This is the containment match the missing-knowledge paper's "EM"
  behaves like (its EM exceeds its F1 in every row of Table 1, which strict EM, max over the
  same golds, cannot do; checklist A17): compare that paper's EM with ``acc`` (and
  ``cover_em``, its order-free variant), and strict ``em`` alongside.
- ``rouge`` (rouge-score, F-measure) and ``bleu`` (sentence BLEU-1..4, cumulative, NLTK's
  smoothing method 1) for long-form answers. Chinese is tokenized by character: the paper
  names no segmenter (checklist A18 prefers jieba words, with characters as the
  alternative); characters need no dictionary, so scores do not move with a segmenter's
  version, and absolute values do not carry across papers either way.
- ``recall_at_k`` / ``precision_at_k`` of supporting paragraphs; ``jaccard_overlap`` of the
  documents retrieved at a step against all earlier steps (PAGER §5.4, A.4).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def normalize_answer(text: str) -> str:
    """SQuAD/HotpotQA normalization: lower, drop punctuation, articles, extra whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def normalize_cover(text: str) -> str:
    """PAGER's normalization: also underscores and ‘ ’ ´ ` become spaces."""
    text = text.lower().replace("_", " ")
    text = "".join(" " if (ch in _PUNCT or ch in "‘’´`") else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _f1_parts(prediction: str, gold: str) -> tuple[float, float, float]:
    pred_n, gold_n = normalize_answer(prediction), normalize_answer(gold)
    special = {"yes", "no", "noanswer"}
    if (pred_n in special or gold_n in special) and pred_n != gold_n:
        return 0.0, 0.0, 0.0
    pred_t, gold_t = pred_n.split(), gold_n.split()
    common = Counter(pred_t) & Counter(gold_t)
    same = sum(common.values())
    if same == 0:
        return 0.0, 0.0, 0.0
    precision, recall = same / len(pred_t), same / len(gold_t)
    return 2 * precision * recall / (precision + recall), precision, recall


def _best(values: Sequence[float]) -> float:
    return max(values) if values else 0.0


def em(prediction: str, golds: Sequence[str]) -> float:
    return _best([float(normalize_answer(prediction) == normalize_answer(g)) for g in golds])


def f1(prediction: str, golds: Sequence[str]) -> float:
    return _best([_f1_parts(prediction, g)[0] for g in golds])


def precision(prediction: str, golds: Sequence[str]) -> float:
    return _best([_f1_parts(prediction, g)[1] for g in golds])


def recall(prediction: str, golds: Sequence[str]) -> float:
    return _best([_f1_parts(prediction, g)[2] for g in golds])


def cover_em(prediction: str, golds: Sequence[str]) -> float:
    pred = set(normalize_cover(prediction).split())
    scores = []
    for g in golds:
        tokens = normalize_cover(g).split()
        scores.append(float(bool(tokens) and all(t in pred for t in tokens)))
    return _best(scores)


def cover_em_span(prediction: str, golds: Sequence[str]) -> float:
    pred = f" {normalize_cover(prediction)} "
    return _best([float(bool(normalize_cover(g)) and f" {normalize_cover(g)} " in pred)
                  for g in golds])


def acc(prediction: str, golds: Sequence[str]) -> float:
    pred = normalize_answer(prediction)
    return _best([float(bool(normalize_answer(g)) and normalize_answer(g) in pred) for g in golds])


SPAN_METRICS = {"em": em, "f1": f1, "precision": precision, "recall": recall,
                "cover_em": cover_em, "acc": acc}


# -- long-form answers -----------------------------------------------------------------
def _tokens(text: str) -> list[str]:
    """Lower-cased words, with every CJK character its own token (Chinese has no spaces)."""
    return re.findall(r"\w+", _CJK.sub(lambda m: f" {m.group(0)} ", text.lower()))


class _Tokenizer:
    def tokenize(self, text: str) -> list[str]:
        return _tokens(text)


def rouge(prediction: str, golds: Sequence[str]) -> dict[str, float]:
    """ROUGE-1/2/L F-measure (rouge-score), best over golden answers."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=_Tokenizer())
    best = {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    for g in golds:
        scores = scorer.score(g, prediction)
        for key in best:
            best[key] = max(best[key], scores[key].fmeasure)
    return best


def bleu(prediction: str, golds: Sequence[str]) -> dict[str, float]:
    """Sentence BLEU-1..4 in [0, 1]: cumulative n-gram orders (BLEU-n weighs orders 1..n
    equally), every golden answer a reference, NLTK's smoothing method 1 (a zero n-gram
    count becomes 0.1), on our tokenization (checklist A18)."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    hyp = _tokens(prediction)
    refs = [tokens for g in golds if (tokens := _tokens(g))]
    if not hyp or not refs:
        return {f"bleu{n}": 0.0 for n in (1, 2, 3, 4)}
    smoothing = SmoothingFunction().method1
    return {f"bleu{n}": float(sentence_bleu(refs, hyp, weights=(1 / n,) * n,
                                            smoothing_function=smoothing))
            for n in (1, 2, 3, 4)}


# -- retrieval ---------------------------------------------------------------------------
def recall_at_k(retrieved: Sequence[str], relevant: set[str], k: int) -> float | None:
    if not relevant:
        return None
    return len(set(retrieved[:k]) & relevant) / len(relevant)


def precision_at_k(retrieved: Sequence[str], relevant: set[str], k: int) -> float | None:
    if not relevant or k < 1:
        return None
    top = list(retrieved[:k])
    return len(set(top) & relevant) / k


def jaccard_overlap(rounds: Sequence[Sequence[str]]) -> list[float]:
    """For each step t ≥ 2: |D_t ∩ D_<t| / |D_t ∪ D_<t| (documents of all earlier steps)."""
    out = []
    seen: set[str] = set()
    for i, docs in enumerate(rounds):
        current = set(docs)
        if i > 0:
            union = current | seen
            out.append(len(current & seen) / len(union) if union else 0.0)
        seen |= current
    return out
