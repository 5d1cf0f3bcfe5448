"""CLEAR Level A: a confidence per extracted value, and a conformal threshold (spec §3).

The paper scores each tuple with a LoRA adapter fine-tuned on Mistral-7B per schema (Eq. 4:
``conf(t) = Ca(Prob_{M_ext+LoRA}(t | d, S^q), D_1)``). Training an adapter is impossible on
the CPUs quaderno runs on, so this module **substitutes** the adapter's probability with:

* **model probability** where the backend returns token log-probabilities (llama.cpp does;
  OpenAI-compatible servers with ``logprobs``): p(value) = exp(mean log-prob of the tokens
  that overlap the value's characters in the raw JSON reply); or
* **agreement across samples** otherwise: n samples at temperature 0.7 with different
  seeds; p(cell) = share of the n samples that give the majority value (a sample that lacks
  the row votes "absent").

A tuple's confidence is the minimum over its values (:meth:`Row.confidence`). Either score is
then calibrated the same way, by split conformal prediction over *wrong* cells (the
error-coverage rule of ReDD/SCAPE): from n_e calibration cells known to be wrong,
τ_low = the ⌈(n_e+1)(1−α)⌉-th smallest of their confidences, and a value is flagged when
p ≤ τ_low; by exchangeability at least 1−α of new wrong values are flagged. With too few
wrong cells (⌈(n_e+1)(1−α)⌉ > n_e, i.e. n_e < 9 at α = 0.1) every value is flagged.
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from quaderno.errors import ConfigError, InputFormatError
from quaderno.llm.types import TokenLogprob
from quaderno.methods.docsage.normalize import cell_form, entity_key, row_identity
from quaderno.methods.docsage.schema import Table
from quaderno.storage import write_json_atomic

log = logging.getLogger(__name__)

ScoreKind = Literal["logprobs", "samples"]

Path_ = tuple[str | int, ...]  # where a value sits in a JSON reply: ("companies", 0, "name")


# -- model probability: token log-probabilities mapped onto the raw reply -----------------------
class _Scanner:
    """A strict JSON reader that records the character span of every leaf value."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: dict[Path_, tuple[int, int]] = {}

    def _ws(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t\r\n":
            i += 1
        return i

    def value(self, i: int, path: Path_) -> int:
        i = self._ws(i)
        if i >= len(self.text):
            raise ValueError("end of text")
        ch = self.text[i]
        if ch == "{":
            return self._object(i, path)
        if ch == "[":
            return self._array(i, path)
        if ch == '"':
            end = self._string_end(i)
            self.spans[path] = (i + 1, end - 1) if end - i > 2 else (i, end)
            return end
        for word in ("true", "false", "null"):
            if self.text.startswith(word, i):
                self.spans[path] = (i, i + len(word))
                return i + len(word)
        j = i
        while j < len(self.text) and self.text[j] in "+-0123456789.eE":
            j += 1
        if j == i:
            raise ValueError(f"unexpected {ch!r} at {i}")
        self.spans[path] = (i, j)
        return j

    def _string_end(self, i: int) -> int:
        j = i + 1
        while j < len(self.text):
            if self.text[j] == "\\":
                j += 2
                continue
            if self.text[j] == '"':
                return j + 1
            j += 1
        raise ValueError("unterminated string")

    def _object(self, i: int, path: Path_) -> int:
        i = self._ws(i + 1)
        if i < len(self.text) and self.text[i] == "}":
            return i + 1
        while True:
            i = self._ws(i)
            if i >= len(self.text) or self.text[i] != '"':
                raise ValueError(f"expected a key at {i}")
            end = self._string_end(i)
            key = json.loads(self.text[i:end])
            i = self._ws(end)
            if i >= len(self.text) or self.text[i] != ":":
                raise ValueError(f"expected ':' at {i}")
            i = self._ws(self.value(i + 1, (*path, key)))
            if i < len(self.text) and self.text[i] == ",":
                i += 1
                continue
            if i < len(self.text) and self.text[i] == "}":
                return i + 1
            raise ValueError(f"expected ',' or '}}' at {i}")

    def _array(self, i: int, path: Path_) -> int:
        i = self._ws(i + 1)
        if i < len(self.text) and self.text[i] == "]":
            return i + 1
        n = 0
        while True:
            i = self._ws(self.value(i, (*path, n)))
            n += 1
            if i < len(self.text) and self.text[i] == ",":
                i += 1
                continue
            if i < len(self.text) and self.text[i] == "]":
                return i + 1
            raise ValueError(f"expected ',' or ']' at {i}")


def json_value_spans(raw: str) -> dict[Path_, tuple[int, int]]:
    """Character span in ``raw`` of every leaf value of the first well-formed JSON object
    in it (string values without their quotes); {} when there is none (a reply that only
    parsed after repair has no reliable offsets)."""
    start = raw.find("{")
    while start >= 0:
        scanner = _Scanner(raw)
        try:
            scanner.value(start, ())
        except (ValueError, IndexError):
            start = raw.find("{", start + 1)
            continue
        return scanner.spans
    return {}


def token_offsets(raw: str, logprobs: Sequence[TokenLogprob],
                  max_gap: int = 8) -> list[tuple[int, int, float]]:
    """(start, end, logprob) of each token located in ``raw``, in order. Tokens are matched
    left to right; a token found up to ``max_gap`` characters after the previous one still
    counts (backends that drop whitespace), one that cannot be found (a byte-fallback
    piece of a multi-byte character) is skipped."""
    out: list[tuple[int, int, float]] = []
    pos = 0
    for tok in logprobs:
        if not tok.token:
            continue
        start = raw.find(tok.token, pos)
        if start < 0 or start - pos > max_gap:
            continue
        end = start + len(tok.token)
        out.append((start, end, tok.logprob))
        pos = end
    return out


def span_probability(tokens: Sequence[tuple[int, int, float]], start: int,
                     end: int) -> float | None:
    """exp(mean log-prob) of the tokens overlapping [start, end); None when none does."""
    lps = [lp for s, e, lp in tokens if s < end and e > start]
    if not lps:
        return None
    return math.exp(sum(lps) / len(lps))


def logprob_confidences(raw: str, logprobs: Sequence[TokenLogprob]) -> dict[Path_, float]:
    """Confidence of every leaf value of the JSON reply ``raw`` from its tokens'
    log-probabilities, keyed by the value's path; values without tokens are left out."""
    tokens = token_offsets(raw, logprobs)
    out = {}
    for path, (start, end) in json_value_spans(raw).items():
        p = span_probability(tokens, start, end)
        if p is not None:
            out[path] = p
    return out


# -- agreement across samples ------------------------------------------------------------------
class AgreedRow(BaseModel):
    """A row as the samples agree on it: majority values and each cell's agreement share."""

    values: dict[str, Any]
    confidence: dict[str, float]
    sample: int  # the first sample that had the row (its provenance is used)
    index: int   # the row's position in that sample


def agreement_rows(samples: Sequence[Sequence[dict[str, Any]]], table: Table) -> list[AgreedRow]:
    """Align the rows of n samples by their entity key (and the values of multi-valued
    columns: :func:`row_identity`) and vote per cell. A cell's value is
    the most common normalized value among the samples that have the row (ties: the earlier
    sample), shown as that sample wrote it; its confidence is the share of all n samples
    giving that value, so a row only one sample found scores at most 1/n."""
    n = len(samples)
    if n == 0:
        return []
    groups: dict[tuple[str, ...], list[tuple[int, int, dict[str, Any]]]] = {}
    order: list[tuple[str, ...]] = []
    for s, rows in enumerate(samples):
        seen: set[tuple[str, ...]] = set()
        for i, values in enumerate(rows):
            # an entity's rows for different values of a multi-valued column stay apart
            key = row_identity(table, values)
            if not any(entity_key(table, values)):
                key = ("#", str(i))  # no key: align by position
            if key in seen:
                continue  # a sample repeating a row votes once
            seen.add(key)
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append((s, i, values))
    out = []
    for key in order:
        members = groups[key]
        values, conf = {}, {}
        for col in table.columns:
            votes = [cell_form(table, col.name, v.get(col.name)) for _, _, v in members]
            best, count = Counter(votes).most_common(1)[0]
            # most_common keeps first-seen order among ties: the earlier sample wins
            first = next(v for (_, _, v), norm in zip(members, votes) if norm == best)
            values[col.name] = first.get(col.name) if best is not None else None
            conf[col.name] = count / n
        out.append(AgreedRow(values=values, confidence=conf, sample=members[0][0],
                             index=members[0][1]))
    return out


# -- conformal threshold -----------------------------------------------------------------------
class LabelledCell(BaseModel):
    """A calibration cell: the confidence of an extracted value and whether it was right."""

    confidence: float
    correct: bool
    kind: ScoreKind | None = None   # which score produced the confidence, when known


class Calibration(BaseModel):
    """An error-coverage conformal threshold; ``tau_low`` None means "flag everything".
    ``score_kind`` and ``model``: what it was computed on (token probabilities and sample
    agreement are different scales, and so are two models' probabilities); None / "" for
    an older calibration that did not record them."""

    alpha: float = 0.1
    tau_low: float | None = None
    n_cells: int = 0
    n_errors: int = 0
    rank: int = 0        # the order statistic used, ⌈(n_e+1)(1−α)⌉
    source: str = ""     # what the labelled cells were (benchmark, schema family)
    score_kind: ScoreKind | None = None
    model: str = ""
    # checked on held-back labelled cells, none of them calibrated on (:func:`checked_on`):
    # their number, how many were wrong, the share of those flagged (at least 1 - alpha is
    # the promise) and the share of the right ones flagged too (what re-reading costs)
    held_out_cells: int = 0
    held_out_errors: int = 0
    held_out_coverage: float | None = None
    held_out_false_flags: float | None = None

    def mismatch(self, kind: str | None, model: str) -> str | None:
        """Why this threshold must not be applied to a confidence of score ``kind`` from
        ``model``, or None when it may (unknown on either side is not a mismatch)."""
        if self.score_kind is not None and kind is not None and kind != self.score_kind:
            return (f"calibration {self.source!r} is for {self.score_kind} confidences, "
                    f"not {kind}")
        if self.model and model and model != self.model:
            return f"calibration {self.source!r} is for model {self.model}, not {model}"
        return None

    def flags(self, p: float | None) -> bool:
        """Whether a value of confidence ``p`` is flagged (``None``: unknown, flagged)."""
        return p is None or self.tau_low is None or p <= self.tau_low

    def save(self, path: Path) -> None:
        write_json_atomic(Path(path), {"kind": "docsage-calibration", "format_version": 1,
                                       **self.model_dump(mode="json")})

    @classmethod
    def load(cls, path: Path) -> Calibration:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise InputFormatError("calibration file missing", path=str(path)) from exc
        except json.JSONDecodeError as exc:
            raise InputFormatError(f"not valid JSON ({exc})", path=str(path)) from exc
        if not isinstance(data, dict) or data.get("kind") != "docsage-calibration":
            raise InputFormatError("not a DocSage calibration file", path=str(path))
        data.pop("kind")
        data.pop("format_version", None)
        return cls.model_validate(data)


def calibrate(cells: Sequence[LabelledCell], alpha: float = 0.1, *,
              source: str = "", model: str = "") -> Calibration:
    """τ_low from labelled cells (spec §3 Level A): the ⌈(n_e+1)(1−α)⌉-th smallest
    confidence of the n_e wrong cells. With too few wrong cells the threshold cannot give
    the coverage, so every value is flagged (``tau_low`` None) and a warning is logged.
    Cells of two score kinds are never pooled: the most common kind is calibrated, the
    others left out (a warning); ``model``: the extraction model, recorded."""
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha}")
    kinds = Counter(c.kind for c in cells if c.kind is not None)
    score_kind = kinds.most_common(1)[0][0] if kinds else None
    if len(kinds) > 1:
        log.warning("conformal calibration: cells of kinds %s; calibrating %s only",
                    dict(kinds), score_kind)
        cells = [c for c in cells if c.kind in (score_kind, None)]
    wrong = sorted(c.confidence for c in cells if not c.correct)
    rank = math.ceil((len(wrong) + 1) * (1 - alpha))
    if rank > len(wrong):
        log.warning("conformal calibration: %d wrong cells of %d are too few for alpha=%s "
                    "(need %d); every value will be flagged", len(wrong), len(cells), alpha,
                    math.ceil((1 - alpha) / alpha))
    tau = wrong[rank - 1] if rank <= len(wrong) else None
    return Calibration(alpha=alpha, tau_low=tau, n_cells=len(cells), n_errors=len(wrong),
                       rank=rank, source=source, score_kind=score_kind, model=model)


def error_coverage(calibration: Calibration, cells: Sequence[LabelledCell]) -> float | None:
    """Share of the wrong cells in ``cells`` that ``calibration`` flags (held-out check);
    None without wrong cells."""
    wrong = [c for c in cells if not c.correct]
    if not wrong:
        return None
    return sum(calibration.flags(c.confidence) for c in wrong) / len(wrong)


def checked_on(calibration: Calibration, cells: Sequence[LabelledCell]) -> Calibration:
    """``calibration`` with what it does on held-back ``cells`` recorded: the share of their
    wrong cells it flags, and of their right cells. Cells of another score kind than it
    was calibrated on are left out, as :func:`calibrate` leaves them out."""
    cells = [c for c in cells if calibration.score_kind is None or c.kind is None
             or c.kind == calibration.score_kind]
    right = [c for c in cells if c.correct]
    return calibration.model_copy(update={
        "held_out_cells": len(cells), "held_out_errors": len(cells) - len(right),
        "held_out_coverage": error_coverage(calibration, cells),
        "held_out_false_flags": (sum(calibration.flags(c.confidence) for c in right)
                                 / len(right)) if right else None})


__all__ = ["AgreedRow", "Calibration", "ScoreKind", "LabelledCell", "agreement_rows",
           "calibrate", "checked_on", "error_coverage", "json_value_spans",
           "logprob_confidences", "span_probability", "token_offsets"]
