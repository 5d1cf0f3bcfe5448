"""`quaderno index ...` and `quaderno search`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from quaderno.cli.common import HomeOption, console, friendly_errors, print_json, workspace
from quaderno.index.kb_index import DenseConfig

app = typer.Typer(help="Build and inspect indexes.", no_args_is_help=True)


@app.command("build")
@friendly_errors
def build(
    kb: str = typer.Argument(..., help="Knowledge base to index"),
    index: str = typer.Option("default", help="Index name"),
    bm25: bool = typer.Option(True, help="Build the BM25 component"),
    embedder: str = typer.Option("minilm", help="minilm | hash[:DIM] | st:MODEL | "
                                                "openai:MODEL@URL | none"),
    store: str = typer.Option("faiss-flat", help="faiss-flat | faiss-hnsw | qdrant"),
    metric: str = typer.Option("ip", help="ip (cosine on normalized vectors) | l2"),
    qdrant_url: str = typer.Option(None, help="Qdrant server/cluster URL (default: local mode)"),
    batch_size: int = typer.Option(256, help="Chunks embedded per batch"),
    home: Path = HomeOption,
) -> None:
    """Build (or rebuild, atomically) the index of a knowledge base."""
    ws = workspace(home)
    dense = DenseConfig(store=store, metric=metric, qdrant_url=qdrant_url, batch_size=batch_size)
    emb = None if embedder == "none" else ws.embedder(embedder)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as progress:
        tasks: dict[str, int] = {}

        def report(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(f"{stage} {kb}", total=total)
            progress.update(tasks[stage], completed=done)

        manifest = ws.build_index(kb, index=index, bm25=bm25, embedder=emb, dense=dense,
                                  progress=report)
    b = manifest["build"]
    console.print(f"[green]built[/] index [bold]{kb}/{index}[/] "
                  f"({', '.join(manifest['components'])}) over {manifest['num_chunks']} chunks "
                  f"in {b['total_s']:.1f}s, peak memory {b['peak_rss_mb']:.0f} MB")


@app.command("info")
@friendly_errors
def info(kb: str, index: str = typer.Option("default"),
         json_out: bool = typer.Option(False, "--json"),
         home: Path = HomeOption) -> None:
    """Show an index's manifest."""
    opened = workspace(home).open_index(kb, index=index)
    if json_out:
        print_json(opened.manifest)
        return
    m = opened.manifest
    table = Table("field", "value", show_header=False)
    table.add_row("knowledge base", f"{m['kb']} ({m['num_chunks']} chunks)")
    table.add_row("folder", str(opened.folder))
    for name, params in m["components"].items():
        table.add_row(name, ", ".join(f"{k}={v}" for k, v in sorted(params.items())))
    build = m["build"]
    table.add_row("built", f"{build['created']} in {build['total_s']:.1f}s, peak "
                           f"{build['peak_rss_mb']:.0f} MB, quaderno {m['quaderno_version']}")
    console.print(table)


def search(
    query: str = typer.Argument(..., help="The query"),
    kb: list[str] = typer.Option(None, "--kb", help="Knowledge base(s); repeat for several"),
    k: int = typer.Option(5, "--k", "-k", help="How many chunks"),
    mode: str = typer.Option("auto", help="auto | bm25 | dense | hybrid"),
    strategy: str = typer.Option("split", help="With several KBs: split (k/n each) | fuse (RRF)"),
    index: str = typer.Option("default", help="Index name"),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output"),
    home: Path = HomeOption,
) -> None:
    """Search one or several knowledge bases."""
    ws = workspace(home)
    kbs = kb or ws.kb_names()
    if not kbs:
        raise typer.BadParameter("no knowledge bases; add one with: quaderno kb add NAME PATH")
    hits = ws.retriever(kbs, mode=mode, index=index, strategy=strategy, cache=False).retrieve(
        query, k)
    if json_out:
        print_json([{"rank": h.rank, "score": h.score, "retriever": h.retriever,
                     **h.chunk.model_dump()} for h in hits])
        return
    if not hits:
        console.print("no results")
        return
    table = Table("#", "score", "kb", "id", "title", "text")
    for h in hits:
        text = h.chunk.text if len(h.chunk.text) <= 160 else h.chunk.text[:157] + "..."
        table.add_row(str(h.rank), f"{h.score:.3f}", h.chunk.kb, h.chunk.id, h.chunk.title, text)
    console.print(table)
