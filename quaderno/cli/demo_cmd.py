"""`quaderno demo`: the main job on the sample corpus shipped in the package.

Indexes the bundled 1,000-passage Wikipedia sample once, then answers a question with
PAGER on the configured LLM (by default the embedded SmolLM2 model), showing the page.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import typer
from rich.panel import Panel
from rich.text import Text

from quaderno.ask import aask
from quaderno.cli.common import HomeOption, console, friendly_errors, workspace
from quaderno.cli.llm_cmd import build_lm, llm_config
from quaderno.corpus.loaders import load_flashrag
from quaderno.index.hits import Hit
from quaderno.methods.registry import get_spec

SAMPLE_KB = "wiki-sample"
# A two-hop comparison whose facts the bundled sample really holds: Alfred Molina's passages
# say "born 24 May 1953", Jonathan Larson's "(February 4, 1960 – ...)". BM25, MiniLM and
# hybrid retrieval all put both people's passages in the top 3 (tests/test_demo.py).
DEFAULT_QUESTION = "Who was born first, Alfred Molina or Jonathan Larson?"
DEFAULT_ANSWER = "Alfred Molina"
DEFAULT_EVIDENCE = {"Alfred Molina's birth date": "24 May 1953",
                    "Jonathan Larson's birth date": "February 4, 1960"}


def sample_corpus() -> Path:
    sample = resources.files("quaderno") / "data" / "wiki_sample" / "wiki_sample_1000.jsonl"
    return Path(str(sample))


def _normalized(text: str) -> str:
    return " ".join(text.split()).casefold()


def passages_with(text: str, hits: Sequence[Hit]) -> list[int]:
    """Ranks of the ``hits`` whose title or text holds ``text`` word for word.

    Case and runs of whitespace are ignored, and so is a final full stop, question or
    exclamation mark of ``text`` (a model's "Alfred Molina." is found); it must stand as
    whole words ("1953" is not found in "19530", "yes" not in "yesterday"). Empty text is in
    none.
    """
    needle = _normalized(text).rstrip(".!?").strip()
    if not needle:
        return []
    pattern = re.compile(rf"(?<!\w){re.escape(needle)}(?!\w)")
    return [hit.rank for hit in hits if pattern.search(_normalized(hit.chunk.render()))]


def locate(text: str, hits: Sequence[Hit]) -> str:
    """Where ``text`` is among the retrieved ``hits``: "in passage 2: <title>, ..."."""
    ranks = passages_with(text, hits)
    if not ranks:
        return f"in none of the {len(hits)} retrieved passages"
    titles = {hit.rank: hit.chunk.title for hit in hits}
    return "in " + ", ".join(f"passage {rank}: {titles[rank]}" for rank in ranks)


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
    if question == DEFAULT_QUESTION:
        console.print(f"the answer ({DEFAULT_ANSWER}) is {locate(DEFAULT_ANSWER, hits)}")
        for fact, text in DEFAULT_EVIDENCE.items():
            console.print(f"  {fact} ({text}) is {locate(text, hits)}")
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
    if question != DEFAULT_QUESTION:
        console.print(f"the method's answer appears {locate(answer.answer, hits)}")
    s = answer.trace.summary()
    console.print(f"[dim]{s['llm_calls']} LLM calls, {s['prompt_tokens']} prompt + "
                  f"{s['completion_tokens']} completion tokens, {s['llm_seconds']:.1f}s; "
                  "the embedded 135M model shows the mechanics, not answer quality: point "
                  "--llm openai at a strong model for real answers[/]")
