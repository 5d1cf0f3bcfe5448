"""Generation profiles: how an LM samples, as a named, recorded setting of a run.

- ``deterministic`` (the default): greedy decoding (temperature 0, top-p 1, seed 0) and each
  step's own ``max_tokens``: results repeat exactly, and the response cache serves reruns.
- ``paper``: what PAGER's authors run (OpenBMB/PAGER with vLLM and Qwen3): temperature 0.7,
  top-p 0.8, top-k 20, seed 66, repetition penalty 1.02, Qwen3's thinking off through the
  chat template, outline up to 4,096 tokens, fills up to 4,096 (the official code lets a
  rewrite run to the context limit; a server's own limit applies), answer up to 1,024; PAGER
  methods answer with the official answer step. top-k and the repetition penalty need a
  server that takes them (vLLM, SGLang, llama.cpp); one that refuses says so.

:func:`apply_profile` returns the LM with the profile's defaults; ``Step.run`` reads a
step's token budget from :attr:`LM.step_max_tokens`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from quaderno.errors import ConfigError

ProfileName = Literal["deterministic", "paper"]


class GenerationProfile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0
    top_k: int | None = None
    repetition_penalty: float | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    step_max_tokens: dict[str, int] = Field(default_factory=dict)
    # method options a profile sets where the method has them and the user did not
    method_options: dict[str, Any] = Field(default_factory=dict)

    def defaults(self) -> dict[str, Any]:
        """The LM defaults (request parameters) of this profile; unset ones left out."""
        out = {"temperature": self.temperature, "top_p": self.top_p, "seed": self.seed}
        for key in ("top_k", "repetition_penalty", "chat_template_kwargs"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


PROFILES: dict[str, GenerationProfile] = {
    "deterministic": GenerationProfile(name="deterministic"),
    "paper": GenerationProfile(
        name="paper", temperature=0.7, top_p=0.8, seed=66, top_k=20, repetition_penalty=1.02,
        chat_template_kwargs={"enable_thinking": False},
        step_max_tokens={"pager.outline": 4096, "pager.fill_rewrite": 4096,
                         "pager.fill_section": 4096, "answer": 1024,
                         "pager.answer_official": 1024},
        method_options={"answer_step": "official"}),
}


def get_profile(name: str) -> GenerationProfile:
    if name not in PROFILES:
        raise ConfigError(f"unknown generation profile {name!r}; choose "
                          f"{' or '.join(PROFILES)}")
    return PROFILES[name]


def apply_profile(lm: Any, name: str) -> Any:
    """``lm`` sampling as profile ``name`` (in place; returned for chaining). The
    deterministic profile keeps the LM's configured temperature, top-p and seed."""
    profile = get_profile(name)
    if profile.name != "deterministic":
        lm.defaults = {**lm.defaults, **profile.defaults()}
    lm.step_max_tokens = dict(profile.step_max_tokens)
    lm.profile = profile.name
    return lm


def profile_options(name: str, option_fields: Any, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the profile's method options added where the method has the field
    and the user set none (``option_fields``: the method's options model fields)."""
    extra = {k: v for k, v in get_profile(name).method_options.items()
             if k in option_fields and k not in options}
    return {**options, **extra}
