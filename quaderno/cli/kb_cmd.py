"""`quaderno kb ...`: add, list, merge, build from recipes and remove knowledge bases."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from quaderno.cli.common import HomeOption, console, friendly_errors, print_json, workspace
from quaderno.corpus.loaders import guess_format, load
from quaderno.corpus.recipes import RECIPES, build_recipe
from quaderno.errors import ConfigError

app = typer.Typer(help="Manage knowledge bases (named collections of chunks).",
                  no_args_is_help=True)


@app.command("add")
@friendly_errors
def add(
    name: str = typer.Argument(..., help="Name of the knowledge base"),
    path: Path = typer.Argument(..., help="File (.jsonl/.json) or folder of .txt/.md files"),
    fmt: str = typer.Option("auto", "--format", "-f",
                            help="auto | flashrag | jsonl | qa | folder"),
    kind: str = typer.Option(None, "--kind", help="passage | qa_pair [default: from format]"),
    id_field: str = typer.Option("id", help="jsonl/qa: field holding the id"),
    text_field: str = typer.Option("text", help="jsonl: field holding the text"),
    title_field: str = typer.Option("title", help="jsonl: field holding the title"),
    question_field: str = typer.Option("question", help="qa: field holding the question"),
    answer_field: str = typer.Option("answer", help="qa: field holding the answer"),
    max_words: int = typer.Option(300, help="Split documents longer than this (0: never)"),
    overlap: int = typer.Option(0, help="Words repeated between consecutive chunks"),
    dedup: bool = typer.Option(True, help="Drop chunks whose text (MD5) is already stored"),
    replace: bool = typer.Option(False, help="Replace an existing knowledge base"),
    skip_invalid: bool = typer.Option(False, help="Skip malformed records instead of failing"),
    home: Path = HomeOption,
) -> None:
    """Read documents from PATH into knowledge base NAME."""
    ws = workspace(home)
    fmt = guess_format(path) if fmt == "auto" else fmt
    options: dict = {"skip_invalid": skip_invalid}
    if fmt == "jsonl":
        options |= {"id_field": id_field, "text_field": text_field, "title_field": title_field}
    elif fmt == "qa":
        options |= {"id_field": id_field, "question_field": question_field,
                    "answer_field": answer_field}
    kind = kind or ("qa_pair" if fmt == "qa" else "passage")
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task(f"reading {path}", total=None)
        kb = ws.add_kb(name, load(path, fmt, **options), kind=kind, replace=replace,
                       max_words=max_words or None, overlap=overlap, dedup=dedup,
                       sources=[str(path)],
                       progress=lambda n: progress.update(task, description=f"{n} chunks"))
    dropped = kb.manifest["duplicates_dropped"]
    console.print(f"[green]added[/] knowledge base [bold]{kb.name}[/]: {len(kb)} chunks "
                  f"({kb.kind.value}, format {fmt}, {dropped} duplicates dropped)")


@app.command("list")
@friendly_errors
def list_(json_out: bool = typer.Option(False, "--json"), home: Path = HomeOption) -> None:
    """List knowledge bases."""
    kbs = workspace(home).list_kbs()
    if json_out:
        print_json(kbs)
        return
    if not kbs:
        console.print("no knowledge bases yet; add one with: quaderno kb add NAME PATH")
        return
    table = Table("name", "kind", "chunks", "dup. dropped", "indexes", "sources", "created")
    for kb in kbs:
        table.add_row(kb["name"], kb["kb_kind"], str(kb["num_chunks"]),
                      str(kb["duplicates_dropped"]), ", ".join(kb["indexes"]) or "-",
                      ", ".join(kb["sources"]), kb["created"])
    console.print(table)


@app.command("merge")
@friendly_errors
def merge(name: str = typer.Argument(...), sources: list[str] = typer.Argument(...),
          replace: bool = typer.Option(False), home: Path = HomeOption) -> None:
    """Create NAME holding every chunk of SOURCES (e.g. passages + QA pairs)."""
    kb = workspace(home).merge_kbs(name, sources, replace=replace)
    console.print(f"[green]merged[/] {', '.join(sources)} into [bold]{kb.name}[/]: "
                  f"{len(kb)} chunks ({kb.kind.value})")


@app.command("recipe")
@friendly_errors
def recipe(
    name: str = typer.Argument(None, help="Recipe to build: " + " | ".join(RECIPES)),
    list_recipes: bool = typer.Option(False, "--list", help="List the recipes and exit"),
    kb: str = typer.Option(None, "--kb", help="Name of the KB [default: the recipe's name]"),
    eval_dataset: str = typer.Option(None, help="Evaluation dataset whose questions are kept "
                                                "out [default: the recipe's]"),
    eval_limit: int = typer.Option(None, help="Keep out its first N questions, as `quaderno "
                                              "eval --limit N` answers [default: all]"),
    data_dir: Path = typer.Option(None, help="Benchmark data folder [default: $QUADERNO_DATA "
                                             "or ../shared/data]"),
    replace: bool = typer.Option(False, help="Replace an existing knowledge base"),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON"),
    home: Path = HomeOption,
) -> None:
    """Build a knowledge base of the missing-knowledge experiments from the benchmark data,
    keeping every evaluation question out of it."""
    if list_recipes:
        table = Table("recipe", "kind", "evaluation", "what it holds")
        for r in RECIPES.values():
            table.add_row(r.name, r.kind.value, r.eval_dataset, r.description)
        console.print(table)
        return
    if not name:
        raise ConfigError(f"name a recipe: {', '.join(RECIPES)} (--list describes them)")
    ws = workspace(home)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task(f"building {name}", total=None)
        report = build_recipe(
            ws, name, kb=kb, eval_dataset=eval_dataset, eval_limit=eval_limit, data=data_dir,
            replace=replace,
            progress=lambda n: progress.update(task, description=f"{n} chunks"))
    if json_out:
        print_json(report.model_dump(mode="json"))
        return
    limit = f"first {report.eval_limit}" if report.eval_limit else "all"
    summed = " (summed over its parts)" if report.parts else ""
    lines = [
        f"[green]built[/] knowledge base [bold]{report.kb}[/] ({report.kind}) from recipe "
        f"{report.recipe}: {report.chunks} chunks, {report.duplicates} MD5 duplicates dropped",
        f"  evaluation kept out: {report.eval_dataset}, {limit} questions "
        f"({report.eval_questions})",
        f"  records{summed}: read {report.read}, kept {report.kept}, dropped as evaluation "
        f"leaks {report.dropped_as_leaks} ({report.evaluation} evaluation records, "
        f"{report.leaks} repeating an evaluation question or answer)"
        + (f", {report.other_half} in the other MedQuAD half" if report.other_half else ""),
    ]
    lines += [f"  part {part}: read {c.read}, kept {c.kept}, evaluation {c.evaluation}, "
              f"leaks {c.leaks}, other half {c.other_half}" for part, c in report.parts.items()]
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)


@app.command("remove")
@friendly_errors
def remove(name: str, home: Path = HomeOption) -> None:
    """Delete a knowledge base and its indexes."""
    workspace(home).remove_kb(name)
    console.print(f"removed knowledge base {name}")
