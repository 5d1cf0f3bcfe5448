"""Choosing the LLM in one place: command-line flag > environment variable > config file >
default (the embedded SmolLM2 model).

Environment: ``QUADERNO_LLM`` (llama-cpp | openai), ``QUADERNO_MODEL``,
``QUADERNO_BASE_URL``, ``QUADERNO_API_KEY_ENV``, ``QUADERNO_MODEL_PATH``, ``QUADERNO_TIMEOUT``
(seconds per request).
Config file (``$QUADERNO_HOME/config.toml`` or ``--config``)::

    [llm]
    backend = "openai"
    model = "Qwen/Qwen3-32B"
    base_url = "http://localhost:8000/v1"
    api_key_env = "VLLM_API_KEY"       # the NAME of the variable holding the key
    max_concurrency = 16
    scoring = "vllm"                   # a vLLM server: DIG may score gold answers
    structured = "json_schema"         # starting mode: json_schema | json_object | none
    extra_body = { chat_template_kwargs = { enable_thinking = false } }

The key itself never appears in flags, files, caches or logs: only the variable's name.

``structured`` is the mode structured output starts in; a server that refuses it makes the
backend step down (json_schema → json_object → none, see :mod:`quaderno.llm.openai_http`).
``cache = false`` turns the response cache off; the call log is written either way.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from quaderno.errors import ConfigError
from quaderno.llm.cache import SQLiteCache
from quaderno.llm.calllog import CallLog
from quaderno.llm.lm import LM

ENV = {"backend": "QUADERNO_LLM", "model": "QUADERNO_MODEL", "base_url": "QUADERNO_BASE_URL",
       "api_key_env": "QUADERNO_API_KEY_ENV", "model_path": "QUADERNO_MODEL_PATH",
       "timeout": "QUADERNO_TIMEOUT"}


class LLMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["llama-cpp", "openai"] = "llama-cpp"
    model: str | None = None
    base_url: str = "http://localhost:8000/v1"
    api_key_env: str = "OPENAI_API_KEY"
    model_path: str | None = None
    n_ctx: int = 8192
    max_concurrency: int = 8
    timeout: float = 120.0
    max_retries: int = 5
    structured: Literal["json_schema", "json_object", "none"] = "json_schema"
    scoring: Literal["none", "vllm"] = "none"  # "vllm": score given replies (prompt_logprobs)
    extra_body: dict[str, Any] = {}
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0
    cache: bool = True

    def describe(self) -> dict[str, Any]:
        """What is in use, for `quaderno llm info` (never a key)."""
        out = self.model_dump()
        out["api_key_set"] = bool(os.environ.get(self.api_key_env))
        return out


def load_config_file(path: Path | None, table: str = "llm") -> dict[str, Any]:
    """The ``[table]`` of the config file (``[llm]``, or a role such as ``[reasoner]``)."""
    if path is None or not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
    llm = data.get(table, {})
    if not isinstance(llm, dict):
        raise ConfigError(f"{path}: [{table}] must be a table")
    return llm


def resolve(flags: Mapping[str, Any] | None = None, *, env: Mapping[str, str] | None = None,
            config_path: Path | None = None) -> LLMConfig:
    """Merge defaults < config file < environment < flags (``None`` flags are unset)."""
    env = os.environ if env is None else env
    merged: dict[str, Any] = dict(load_config_file(config_path))
    for key, var in ENV.items():
        if env.get(var):
            merged[key] = env[var]
    merged.update({k: v for k, v in (flags or {}).items() if v is not None})
    try:
        config = LLMConfig(**merged)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid LLM configuration: {problems}") from None
    if config.backend == "openai" and not config.model:
        raise ConfigError("--llm openai needs --model (or QUADERNO_MODEL, or model in the "
                          "config file)")
    return config


def resolve_role(role: str, main: LLMConfig, flags: Mapping[str, Any] | None = None, *,
                 env: Mapping[str, str] | None = None,
                 config_path: Path | None = None) -> LLMConfig | None:
    """The LLM of a method role (e.g. missing-knowledge RAG's ``reasoner``), by the same
    precedence as the main one: ``--reasoner-*`` flags > ``QUADERNO_REASONER_LLM`` /
    ``_MODEL`` / ``_BASE_URL`` > the config file's ``[reasoner]`` table. Every setting it does
    not name is the main LLM's. None when nothing names it (or it names the main LLM): the
    role then uses the main LM."""
    env = os.environ if env is None else env
    given: dict[str, Any] = dict(load_config_file(config_path, table=role))
    prefix = f"QUADERNO_{role.upper()}_"
    for key, suffix in (("backend", "LLM"), ("model", "MODEL"), ("base_url", "BASE_URL")):
        if env.get(prefix + suffix):
            given[key] = env[prefix + suffix]
    given.update({k: v for k, v in (flags or {}).items() if v is not None})
    if not given:
        return None
    base = main.model_dump()
    if given.get("backend", main.backend) != main.backend:  # another server: no inherited model
        base.pop("model", None)
    try:
        config = LLMConfig(**{**base, **given})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid {role} LLM configuration: {problems}") from None
    if config.backend == "openai" and not config.model:
        raise ConfigError(f"the {role} LLM on an OpenAI-compatible server needs a model "
                          f"(--{role}-model, {prefix}MODEL, or model in [{role}])")
    return None if config == main else config


def make_backend(config: LLMConfig):  # noqa: ANN201 - one of the backends
    if config.backend == "openai":
        from quaderno.llm.openai_http import OpenAIChatLLM

        return OpenAIChatLLM(config.model or "", config.base_url, api_key_env=config.api_key_env,
                             max_concurrency=config.max_concurrency, timeout=config.timeout,
                             max_retries=config.max_retries, structured=config.structured,
                             extra_body=config.extra_body, scoring=config.scoring)
    from quaderno.llm.llama_cpp_backend import LlamaCppLLM

    return LlamaCppLLM(config.model_path, n_ctx=config.n_ctx)


def make_lm(config: LLMConfig, *, cache_path: Path | None = None, cache: bool | None = None,
            log_path: Path | None = None) -> LM:
    """The LM for ``config``. The call log is always written, at ``log_path`` (default: the
    cache's file, ``cache_path``); the response cache lives at ``cache_path`` only when
    caching is on (``cache``, else ``config.cache``): off, nothing is read from or written
    to it. Neither path: no cache and no log."""
    use_cache = config.cache if cache is None else cache
    store = SQLiteCache(cache_path) if (use_cache and cache_path is not None) else None
    log_path = log_path or cache_path
    if store is not None and log_path == cache_path:
        call_log: CallLog | None = store.call_log()  # the same file: one set of connections
    else:
        call_log = CallLog(log_path) if log_path is not None else None
    defaults = {"temperature": config.temperature, "top_p": config.top_p, "seed": config.seed}
    return LM(make_backend(config), cache=store, log=call_log, defaults=defaults)
