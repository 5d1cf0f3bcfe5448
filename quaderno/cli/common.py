"""Shared pieces of the CLI: the console, the workspace option, error reporting."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console

from quaderno.errors import QuadernoError
from quaderno.workspace import Workspace

console = Console()
err_console = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])

HomeOption = typer.Option(None, "--home", envvar="QUADERNO_HOME",
                          help="Workspace folder for knowledge bases and indexes "
                               "[default: ~/.quaderno]")

ProfileOption = typer.Option(
    "deterministic", "--profile", help="Generation profile: deterministic (greedy, the "
    "default) | paper (PAGER's authors: temperature 0.7, top-p 0.8, top-k 20, seed 66, "
    "repetition penalty 1.02, Qwen3 thinking off, the official answer step)")
GateOption = typer.Option(None, "--gate", help="Decide per question whether to retrieve "
                          "(CCSK): always | never | a trained gate DIR | DIR:GATE "
                          "(quaderno gate train)")
GateOtherLLMOption = typer.Option(False, "--gate-allow-other-llm", help="Use a gate trained "
                                  "on another LLM's labels (warns)")


def workspace(home: Path | None) -> Workspace:
    return Workspace(home)


def friendly_errors(func: F) -> F:
    """Show a QuadernoError as one line on stderr and exit 2, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except QuadernoError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("faiss", "bm25s", "httpx", "sentence_transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
