"""`quaderno demo`: the main job on the sample corpus shipped in the package.

Indexes the bundled 1,000-passage Wikipedia sample once, then answers a question with
PAGER on the configured LLM (by default the embedded SmolLM2 model), showing the page.
"""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path

import typer
from rich.panel import Panel
from rich.text import Text

from quaderno.ask import aask
from quaderno.cli.common import HomeOption, console, friendly_errors, workspace
from quaderno.cli.llm_cmd import build_lm, llm_config
from quaderno.corpus.loaders import load_flashrag
from quaderno.methods.registry import get_spec

SAMPLE_KB = "wiki-sample"
DEFAULT_QUESTION = "who got the first nobel prize in physics"


def sample_corpus() -> Path:
    sample = resources.files("quaderno") / "data" / "wiki_sample" / "wiki_sample_1000.jsonl"
    return Path(str(sample))


@friendly_errors
def demo(
    question: str = typer.Argument(DEFAULT_QUESTION, help="The question to answer"),
    method: str = typer.Option("pager", "--method", "-m", help="Method to answer with"),
    embedder: str = typer.Option("minilm", help="Embedder for the dense index"),
    k: int = typer.Option(3, "--k", "-k", help="Documents per retrieval"),
    max_iters: int = typer.Option(10, help="PAGER: most slot fills"),
    rebuild: bool = typer.Option(False, help="Rebuild the sample KB and index"),
    home: Path = HomeOption,
) -> None:
    """Index the bundled Wikipedia sample (once) and answer a question from it."""
    ws = workspace(home)
    if rebuild or not ws.has_kb(SAMPLE_KB):
        kb = ws.add_kb(SAMPLE_KB, load_flashrag(sample_corpus()), replace=True,
                       sources=["FlashRAG wiki sample (MIT)"])
        console.print(f"added knowledge base {SAMPLE_KB}: {len(kb)} chunks")
    if rebuild or not ws.index_names(SAMPLE_KB):
        console.print(f"building the BM25 + dense ({embedder}) index (about a minute, once) ...")
        m = ws.build_index(SAMPLE_KB, embedder=embedder)
        console.print(f"built in {m['build']['total_s']:.1f}s")
    hits = ws.retriever(SAMPLE_KB, mode="hybrid").retrieve(question, k)
    console.print(f"[bold]{question}[/] — top {k} passages (hybrid BM25 + dense):")
    for hit in hits:
        console.print(f"  {hit.rank}. {hit.chunk.title}: {hit.chunk.text[:100]}...")
    cfg = llm_config(home, None)
    console.print(f"\nanswering with {method} on {cfg.backend} "
                  f"({cfg.model or 'SmolLM2-135M, embedded'}) ...")
    options = {"max_iters": max_iters} if "max_iters" in get_spec(method).options.model_fields \
        else {}
    answer = asyncio.run(aask(question, method=method, kbs=[SAMPLE_KB], mode="hybrid", k=k,
                              lm=build_lm(cfg, home), workspace=ws, options=options))
    if answer.page is not None:
        console.print(Panel(Text(answer.page.render()), title="page", expand=False))
    console.print(Panel(answer.answer, title=f"answer ({answer.method})", expand=False))
    s = answer.trace.summary()
    console.print(f"[dim]{s['llm_calls']} LLM calls, {s['prompt_tokens']} prompt + "
                  f"{s['completion_tokens']} completion tokens, {s['llm_seconds']:.1f}s; "
                  "the embedded 135M model shows the mechanics, not answer quality: point "
                  "--llm openai at a strong model for real answers[/]")
