"""`quaderno llm ...`: check the configured LLM. Also the LLM options other commands share."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from quaderno.cli.common import HomeOption, console, friendly_errors, print_json
from quaderno.llm.config import LLMConfig, make_lm, resolve
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.workspace import default_home

app = typer.Typer(help="Check the configured LLM.", no_args_is_help=True)

LLMOpt = typer.Option(None, "--llm", help="llama-cpp (embedded, default) | openai")
ModelOpt = typer.Option(None, "--model", help="Model name on the server (openai)")
BaseUrlOpt = typer.Option(None, "--base-url", help="OpenAI-compatible base URL, e.g. "
                                                   "http://localhost:8000/v1")
KeyEnvOpt = typer.Option(None, "--api-key-env", help="NAME of the env variable with the API key")
ModelPathOpt = typer.Option(None, "--model-path", help="GGUF file for llama-cpp")
ConfigOpt = typer.Option(None, "--config", help="Config file [default: $QUADERNO_HOME/config.toml]")


def llm_config(home: Path | None, config: Path | None, **flags: Any) -> LLMConfig:
    root = Path(home) if home else default_home()
    return resolve(flags, config_path=config or root / "config.toml")


def build_lm(cfg: LLMConfig, home: Path | None, *, cache: bool | None = None) -> LM:
    root = Path(home) if home else default_home()
    return make_lm(cfg, cache_path=root / "cache" / "llm.sqlite", cache=cache)


@app.command("info")
@friendly_errors
def info(llm: str = LLMOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt,
         api_key_env: str = KeyEnvOpt, model_path: str = ModelPathOpt,
         config: Path = ConfigOpt, json_out: bool = typer.Option(False, "--json"),
         home: Path = HomeOption) -> None:
    """Show which LLM is configured, and from where (flag > env > config file > default)."""
    cfg = llm_config(home, config, backend=llm, model=model, base_url=base_url,
                     api_key_env=api_key_env, model_path=model_path)
    data = cfg.describe()
    if cfg.backend == "llama-cpp" and not cfg.model_path:
        from quaderno.llm.llama_cpp_backend import default_model_path
        data["model_path"] = str(default_model_path())
    if json_out:
        print_json(data)
        return
    table = Table("setting", "value", show_header=False)
    for key, value in data.items():
        table.add_row(key, json.dumps(value) if isinstance(value, dict) else str(value))
    console.print(table)


@app.command("chat")
@friendly_errors
def chat(prompt: str = typer.Argument(..., help="What to say"),
         system: str = typer.Option(None, help="System message"),
         max_tokens: int = typer.Option(256, help="Most tokens to generate"),
         temperature: float = typer.Option(None, help="Sampling temperature"),
         no_cache: bool = typer.Option(False, "--no-cache", help="Do not read the cache"),
         llm: str = LLMOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt,
         api_key_env: str = KeyEnvOpt, model_path: str = ModelPathOpt, config: Path = ConfigOpt,
         json_out: bool = typer.Option(False, "--json", help="Reply and accounting as JSON"),
         home: Path = HomeOption) -> None:
    """Send one message to the configured LLM and print the reply."""
    cfg = llm_config(home, config, backend=llm, model=model, base_url=base_url,
                     api_key_env=api_key_env, model_path=model_path)
    lm = build_lm(cfg, home)
    messages = ([{"role": "system", "content": system}] if system else []) + \
        [{"role": "user", "content": prompt}]
    params: dict[str, Any] = {"max_tokens": max_tokens}
    if temperature is not None:
        params["temperature"] = temperature
    trace = Trace(label="chat")
    response = asyncio.run(lm.chat(lm.request(messages, **params), trace=trace,
                                   use_cache=not no_cache))
    if json_out:
        print_json(response.model_dump())
        return
    console.print(response.text, highlight=False, markup=False)
    console.print(f"[dim]{response.model} · {response.usage.prompt_tokens} prompt + "
                  f"{response.usage.completion_tokens} completion tokens · "
                  f"{response.latency_s:.2f}s{' · cached' if response.cached else ''}"
                  f"{f' · {response.retries} retries' if response.retries else ''}[/]")
