"""`quaderno llm ...`: check the configured LLM, read the call log. Also the LLM options other
commands share."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from quaderno.cli.common import HomeOption, console, friendly_errors, print_json
from quaderno.llm.calllog import CallLog, CallRow
from quaderno.llm.config import make_backend
from quaderno.llm.lm import LM
from quaderno.llm.setup import build_lm, llm_config, llm_db, role_lms  # noqa: F401 - re-exported
from quaderno.llm.trace import Trace
from quaderno.llm.types import ChatResponse

app = typer.Typer(help="Check the configured LLM and read its call log.", no_args_is_help=True)

PROBE_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}},
                "required": ["ok"], "additionalProperties": False}

LLMOpt = typer.Option(None, "--llm", help="llama-cpp (embedded, default) | openai")
ModelOpt = typer.Option(None, "--model", help="Model name on the server (openai)")
BaseUrlOpt = typer.Option(None, "--base-url", help="OpenAI-compatible base URL, e.g. "
                                                   "http://localhost:8000/v1")
KeyEnvOpt = typer.Option(None, "--api-key-env", help="NAME of the env variable with the API key")
ModelPathOpt = typer.Option(None, "--model-path", help="GGUF file for llama-cpp")
ConfigOpt = typer.Option(None, "--config", help="Config file [default: $QUADERNO_HOME/config.toml]")


ReasonerLLMOpt = typer.Option(None, "--reasoner-llm", help="Backend of the reasoner LLM "
                                                           "(methods with a reasoner role)")
ReasonerModelOpt = typer.Option(None, "--reasoner-model", help="Reasoner model, e.g. "
                                                               "deepseek-reasoner [default: the "
                                                               "answering LLM]")
ReasonerBaseUrlOpt = typer.Option(None, "--reasoner-base-url", help="Reasoner server base URL")


def probe_structured(lm: LM) -> ChatResponse:
    """One tiny structured request, not answered from the cache: its ``structured`` says
    which mode the server accepts (after any downgrade it caused)."""
    request = lm.request("Reply with the JSON object {\"ok\": true}.", max_tokens=16,
                         json_schema=PROBE_SCHEMA, schema_name="probe")
    return asyncio.run(lm.chat(request, trace=Trace(label="llm info --probe"),
                               step="llm.probe", use_cache=False))


@app.command("info")
@friendly_errors
def info(llm: str = LLMOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt,
         api_key_env: str = KeyEnvOpt, model_path: str = ModelPathOpt,
         config: Path = ConfigOpt, json_out: bool = typer.Option(False, "--json"),
         probe: bool = typer.Option(False, "--probe", help="Send one tiny structured request "
                                    "and report the structured-output mode that works"),
         home: Path = HomeOption) -> None:
    """Show which LLM is configured, and from where (flag > env > config file > default);
    the structured-output mode, its last downgrade, and with --probe the mode that works."""
    cfg = llm_config(home, config, backend=llm, model=model, base_url=base_url,
                     api_key_env=api_key_env, model_path=model_path)
    data = cfg.describe()
    if cfg.backend == "llama-cpp" and not cfg.model_path:
        from quaderno.llm.llama_cpp_backend import default_model_path
        data["model_path"] = str(default_model_path())
    if cfg.backend == "openai" and llm_db(home).is_file():
        last = CallLog(llm_db(home)).last_downgrade(make_backend(cfg).model_id)
        data["structured_last_downgrade"] = (f"{_when(last.ts)}: {last.note}" if last
                                             else None)
    if probe:
        response = probe_structured(build_lm(cfg, home, cache=False))
        data["structured_probe"] = response.structured or (
            "grammar (enforced in-process)" if response.constrained else "none")
        data["structured_probe_downgrade"] = response.downgrade
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


@app.command("log")
@friendly_errors
def show_log(n: int = typer.Option(20, "-n", min=0, help="How many of the latest calls"),
             json_out: bool = typer.Option(False, "--json", help="The rows as JSON"),
             home: Path = HomeOption) -> None:
    """Show the latest LLM calls from the call log (cached or not, failed or not)."""
    path = llm_db(home)
    rows = CallLog(path).latest(n) if path.is_file() else []
    if json_out:
        print_json([row.model_dump() for row in rows])
        return
    if not rows:
        console.print(f"[dim]no calls logged yet in {path}[/]")
        return
    table = Table("time", "step", "label", "model", "tokens", "latency", "cached", "retries",
                  "structured", "error", title=f"latest {len(rows)} calls · {path}")
    for row in rows:
        table.add_row(*[Text(v) for v in _cells(row)])
    console.print(table)


def _cells(row: CallRow) -> list[str]:
    structured = (row.structured or "") + (" (downgraded)" if row.note else "")
    return [_when(row.ts), row.step or "", row.label or "", row.model,
            f"{row.prompt_tokens}+{row.completion_tokens}", f"{row.latency_s:.2f}s",
            "yes" if row.cached else "", str(row.retries) if row.retries else "", structured,
            (row.error or "")[:80]]


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
