"""The one place a run's :class:`~quaderno.eval.runner.RunConfig` is built, for ``quaderno
eval`` and for the server's ``POST /v1/evals`` alike: a run started by one resumes in the
other, since resuming compares the saved configuration with the new one field by field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from quaderno.eval.dig import DIGParams
from quaderno.eval.runner import RunConfig
from quaderno.llm.lm import LM
from quaderno.methods.registry import get_spec

GENERATION_KEYS = ("temperature", "top_p", "seed")
DEFAULT_MAX_ITERS = 10


def generation_of(lm: LM) -> dict[str, Any]:
    """How ``lm`` samples, as a run records it: temperature, top-p, seed; and, only when set
    (runs saved before had none, and must resume), top-k, the repetition penalty, the chat
    template's arguments and a profile other than the deterministic default."""
    out = {key: lm.defaults.get(key) for key in GENERATION_KEYS}
    for key in ("top_k", "repetition_penalty", "chat_template_kwargs"):
        if lm.defaults.get(key) is not None:
            out[key] = lm.defaults[key]
    profile = getattr(lm, "profile", "deterministic")
    if profile != "deterministic":
        out["profile"] = profile
        out["step_max_tokens"] = dict(getattr(lm, "step_max_tokens", {}))
    return out


def default_k(method: str) -> int:
    """The k a run records when none is given: the method's own default (5 for most;
    a method without retrieval records 5, which it never uses, as runs always have)."""
    spec = get_spec(method)
    return int(spec.validate({}).k) if spec.needs_retrieval else 5  # type: ignore[attr-defined]


def method_options_for(method: str, max_iters: int, extra: Mapping[str, Any]) -> dict:
    """The options recorded for ``method`` in its run: ``max_iters`` when the method has
    that option, and every option of ``extra`` it has; a bad value is a ConfigError before
    anything runs."""
    spec = get_spec(method)
    fields = spec.options.model_fields
    options = {"max_iters": max_iters} if "max_iters" in fields else {}
    options |= {key: value for key, value in extra.items() if key in fields}
    spec.validate(options)
    return options


def run_config(*, dataset: str, method: str, options: Mapping[str, Any], lm: LM,
               roles: Mapping[str, LM] | None = None, limit: int | None = None,
               k: int | None = None, pool: str = "per-question", kbs: Iterable[str] = (),
               retrieval: str = "bm25", embedder: str | None = None,
               judge: LM | None = None, judges: Iterable[str] = (), dig: bool = False,
               dig_alias: str = "first",
               measures: Iterable[str] = (), gate: str | None = None,
               gate_allow_other_llm: bool = False) -> RunConfig:
    """The configuration of a run of ``method`` (its ``options`` as
    :func:`method_options_for` recorded them) answered by ``lm``."""
    return RunConfig(dataset=dataset, limit=limit, method=method,
                     method_options=dict(options),
                     k=k if k is not None else default_k(method),
                     pool=pool, kbs=list(kbs), retrieval=retrieval, embedder=embedder,
                     model=lm.model_id,
                     generation=generation_of(lm),
                     judge_model=judge.model_id if judge else None, judges=list(judges),
                     dig=DIGParams(alias=dig_alias) if dig else None, measures=list(measures),
                     roles={r: x.model_id for r, x in (roles or {}).items()},
                     gate=gate, gate_allow_other_llm=gate_allow_other_llm)
