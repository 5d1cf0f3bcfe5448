"""`quaderno synth ...`: make fictional MEBench-like collections and check their gates."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from quaderno.cli.common import console, friendly_errors, print_json
from quaderno.eval.synth import BINS, FAMILIES, make_collection, write_collection
from quaderno.eval.synth.gates import oracle_score, single_doc_answerable
from quaderno.eval.synth.templates import ALL_TEMPLATES

app = typer.Typer(help="Fictional multi-entity benchmark collections (DocSage, issue 11).",
                  no_args_is_help=True)


def _template_families(text: str) -> tuple[int, ...]:
    return tuple(int(t) for t in text.split(",") if t.strip()) if text else ALL_TEMPLATES


@app.command("make")
@friendly_errors
def make(
    family: list[str] = typer.Option(..., "--family", "-f", help=" | ".join(FAMILIES)
                                     + " (repeatable)"),
    bin_name: list[str] = typer.Option(..., "--bin", "-b", help=" | ".join(BINS)
                                       + " (repeatable)"),
    seed: list[int] = typer.Option([0], "--seed", "-s", help="Seed (repeatable)"),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the collection folders"),
    entities: int = typer.Option(None, help="Members of the topic [default: the bin's: "
                                 + ", ".join(f"{b.name} {b.default}" for b in BINS.values())
                                 + "]"),
    per_type: int = typer.Option(5, help="Questions of each of the eight types"),
    templates: str = typer.Option("", help="Template families to render with, e.g. 2,3; 4 is "
                                  "the held-out test family, 5 the fresh one [default: 0-3]"),
    filler: int = typer.Option(1, help="Filler sentences per document (more: longer texts)"),
    json_out: bool = typer.Option(False, "--json", help="Print the manifests as JSON"),
) -> None:
    """Make one collection per (family, bin, seed): documents, questions, gold tables."""
    table = Table("collection", "entities", "documents", "questions", "oracle",
                  "single-doc statistics")
    manifests = []
    for fam in family:
        for b in bin_name:
            for s in seed:
                col = make_collection(fam, b, s, entities=entities, per_type=per_type,
                                      template_families=_template_families(templates),
                                      filler=filler)
                folder = write_collection(col, out)
                manifests.append(str(folder / "manifest.json"))
                table.add_row(str(folder), str(len(col.world.members)),
                              str(len(col.documents)), str(len(col.questions)),
                              f"{oracle_score(folder):.3f}",
                              str(len(single_doc_answerable(col.questions))))
    if json_out:
        print_json([json.loads(Path(m).read_text()) for m in manifests])
        return
    console.print(table)
    console.print("load the documents with: quaderno kb add NAME FOLDER/documents.jsonl; "
                  "evaluate with: quaderno eval -d FOLDER/questions.jsonl --format synth "
                  "--pool kb --kb NAME --measure synth_score")
