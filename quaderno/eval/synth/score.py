"""Deterministic scoring of an answer text against a synthetic gold answer.

- ``number``: any of the (at most :data:`MAX_NUMBERS`) numbers in the text within 1% of the
  gold (years exactly, averages and medians of years within 0.5; money also when written
  in dollars rather than millions, and a variance of money in square dollars rather than
  square millions);
- ``name`` / ``category``: the gold or one of its aliases appears as a whole phrase, after
  SQuAD normalization, and none of the listed wrong candidates does;
- ``names``: set F1 of the gold items found against wrong candidates found;
- ``correlation``: the sign/strength label (a coefficient in the text counts as its label);
  1 for the right label, 0.5 for the right sign with the wrong strength;
- ``boolean``: the first yes/no (true/false) word.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import (BaseModel, Field, SerializationInfo, SerializerFunctionWrapHandler,
                      ValidationError, model_serializer)

from quaderno.errors import ConfigError
from quaderno.eval.metrics import normalize_answer

AnswerKind = Literal["number", "name", "names", "category", "correlation", "boolean"]
MAX_NUMBERS = 3
REL_TOL = 0.01
STRENGTH_CUTS = (0.3, 0.6)  # |r| below 0.3: no clear correlation; 0.6 and above: strong


class Gold(BaseModel):
    kind: AnswerKind
    answer: str  # the normalized answer string
    value: float | None = None  # number, correlation coefficient
    is_year: bool = False
    money: bool = False  # the value is in millions of dollars
    # the power of that unit in the value: 2 for a variance (square millions of dollars)
    money_power: int = Field(default=1, ge=1, le=2)
    abs_tol: float | None = None  # absolute tolerance (averages of years), else 1% relative
    items: list[str] = Field(default_factory=list)  # name(s), category, label
    aliases: dict[str, list[str]] = Field(default_factory=dict)
    wrong: list[str] = Field(default_factory=list)  # candidates that make a name answer wrong

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler,
                 info: SerializationInfo) -> dict[str, Any]:
        """``money_power`` is written only where it is not 1, so collections without a
        variance of money are written byte for byte as before it existed."""
        out = handler(self)
        if out.get("money_power") == 1:
            del out["money_power"]
        return out


def corr_label(r: float) -> str:
    if abs(r) < STRENGTH_CUTS[0]:
        return "no clear correlation"
    strength = "strong" if abs(r) >= STRENGTH_CUTS[1] else "moderate"
    return f"{strength} {'positive' if r > 0 else 'negative'}"


_NUM = re.compile(r"(?<![\w.])[-−]?\$?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+\b)?(?:\s*(?:k|thousand|m|"
                  r"million|bn|billion)\b)?", re.IGNORECASE)
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}


def numbers(text: str) -> list[float]:
    """Numbers written in ``text``: "2,300", "2.3k", "$12.5 million", "−0.8", "1.16e15"."""
    out = []
    for m in _NUM.finditer(text):
        raw = m.group(0).replace("−", "-").replace("$", "").replace(",", "")
        parts = raw.split()
        num = re.match(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", raw.strip(), re.IGNORECASE)
        if not num:
            continue
        value = float(num.group(0))
        unit = raw.strip()[num.end():].strip().lower()
        if unit in _SCALE:
            value *= _SCALE[unit]
        elif parts and parts[-1].lower() in _SCALE:
            value *= _SCALE[parts[-1].lower()]
        out.append(value)
    return out


def _close(x: float, gold: float, is_year: bool, abs_tol: float | None = None) -> bool:
    if abs_tol is not None:
        return abs(x - gold) <= abs_tol
    if is_year:
        return round(x) == round(gold) and abs(x - round(x)) < 1e-9
    if gold == 0:
        return abs(x) < 1e-6
    return abs(x - gold) <= REL_TOL * abs(gold)


def _has(norm_text: str, phrase: str) -> bool:
    p = normalize_answer(phrase)
    return bool(p) and re.search(rf"(?<!\w){re.escape(p)}(?!\w)", norm_text) is not None


def _found(norm_text: str, item: str, gold: Gold) -> bool:
    return any(_has(norm_text, p) for p in [item] + gold.aliases.get(item, []))


def _score_number(gold: Gold, text: str) -> float:
    found = list(dict.fromkeys(numbers(text)))
    if gold.value is None or not found or len(found) > MAX_NUMBERS:
        return 0.0
    targets = [gold.value] + ([gold.value * 1e6 ** gold.money_power] if gold.money else [])
    return float(any(_close(x, t, gold.is_year, gold.abs_tol) for x in found for t in targets))


def _score_names(gold: Gold, text: str) -> float:
    norm = normalize_answer(text)
    tp = sum(_found(norm, item, gold) for item in gold.items)
    fp = sum(_has(norm, w) for w in gold.wrong)
    if tp == 0:
        return 0.0
    precision, recall = tp / (tp + fp), tp / len(gold.items)
    return 2 * precision * recall / (precision + recall)


def _score_name(gold: Gold, text: str) -> float:
    norm = normalize_answer(text)
    if any(_has(norm, w) for w in gold.wrong):
        return 0.0
    return float(any(_found(norm, item, gold) for item in gold.items))


def predicted_corr_label(text: str) -> str | None:
    low = text.lower()
    coef = [x for x in numbers(text) if -1 <= x <= 1 and re.search(r"\d\.\d", text)]
    if coef:
        return corr_label(coef[0])
    if re.search(r"\bno (clear |significant |strong )?(correlation|relationship)|"
                 r"\buncorrelated\b|\bnot correlated\b|\bweak\b|\bnegligible\b", low):
        return "no clear correlation"
    sign = ("negative" if re.search(r"\bnegative|\binverse", low) else
            "positive" if re.search(r"\bpositive", low) else None)
    if sign is None:
        return None
    return f"{'moderate' if 'moderate' in low else 'strong'} {sign}"


def _score_corr(gold: Gold, text: str) -> float:
    label = predicted_corr_label(text)
    if label is None:
        return 0.0
    if label == gold.answer:
        return 1.0
    same_sign = label.split()[-1] == gold.answer.split()[-1] and "no clear" not in label
    return 0.5 if same_sign else 0.0


def _score_bool(gold: Gold, text: str) -> float:
    m = re.search(r"\b(yes|no|true|false)\b", text.lower())
    if not m:
        return 0.0
    said = m.group(1) in ("yes", "true")
    return float(said == (gold.answer == "yes"))


_SCORERS = {"number": _score_number, "name": _score_name, "category": _score_name,
            "names": _score_names, "correlation": _score_corr, "boolean": _score_bool}


def score(gold: Gold | dict[str, Any], predicted_text: str) -> float:
    """The score in [0, 1] of ``predicted_text`` against ``gold`` (a :class:`Gold` or the
    ``gold`` object of a ``questions.jsonl`` line)."""
    try:
        g = gold if isinstance(gold, Gold) else Gold.model_validate(gold)
    except ValidationError as exc:
        raise ConfigError(f"not a synthetic gold answer: {gold!r} "
                          f"({exc.errors()[0]['msg']})") from exc
    return _SCORERS[g.kind](g, predicted_text or "")
