"""`quaderno demo`: the main job on the sample corpus shipped in the package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import typer
from rich.table import Table

from quaderno.cli.common import HomeOption, console, friendly_errors, workspace
from quaderno.corpus.loaders import load_flashrag

SAMPLE_KB = "wiki-sample"
DEFAULT_QUESTIONS = (
    "who got the first nobel prize in physics",
    "what is the capital city of the country where the Danube ends",
)


def sample_corpus() -> Path:
    return Path(str(resources.files("quaderno") / "data" / "wiki_sample" / "wiki_sample_1000.jsonl"))


@friendly_errors
def demo(
    questions: list[str] = typer.Argument(None, help="Questions to ask [default: two samples]"),
    embedder: str = typer.Option("minilm", help="Embedder for the dense index"),
    k: int = typer.Option(3, "--k", "-k"),
    rebuild: bool = typer.Option(False, help="Rebuild the sample KB and index"),
    home: Path = HomeOption,
) -> None:
    """Index the bundled 1,000-passage Wikipedia sample (once) and search it."""
    ws = workspace(home)
    if rebuild or not ws.has_kb(SAMPLE_KB):
        kb = ws.add_kb(SAMPLE_KB, load_flashrag(sample_corpus()), replace=True,
                       sources=["FlashRAG wiki sample (MIT)"])
        console.print(f"added knowledge base {SAMPLE_KB}: {len(kb)} chunks")
    if rebuild or not ws.index_names(SAMPLE_KB):
        console.print(f"building BM25 + dense ({embedder}) index ...")
        m = ws.build_index(SAMPLE_KB, embedder=embedder)
        console.print(f"built in {m['build']['total_s']:.1f}s")
    retriever = ws.retriever(SAMPLE_KB, mode="hybrid")
    for question in questions or DEFAULT_QUESTIONS:
        table = Table("#", "title", "text", title=f"[bold]{question}[/]", title_justify="left")
        for hit in retriever.retrieve(question, k):
            table.add_row(str(hit.rank), hit.chunk.title, hit.chunk.text[:150] + "...")
        console.print(table)
