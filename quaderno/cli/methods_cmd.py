"""`quaderno methods`: every registered method with its paper, summary and options."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from quaderno.cli.common import console, print_json
from quaderno.methods.registry import METHODS


def markdown_table() -> str:
    """The methods as the README shows them (a test keeps the README equal to this)."""
    lines = ["| `--method` | retrieves | paper | what it does | options (`--opt key=value`, "
             "default) |", "|---|---|---|---|---|"]
    for spec in METHODS.values():
        opts = ", ".join(f"`{row['name']}={json.dumps(row['default'])}`"
                         for row in spec.option_rows()) or "—"
        roles = f" Roles: {', '.join(spec.roles)} (`--{spec.roles[0]}-model`…)." \
            if spec.roles else ""
        lines.append(f"| `{spec.name}` | {'yes' if spec.needs_retrieval else 'no'} | "
                     f"{spec.paper} | {spec.summary}.{roles} | {opts} |")
    return "\n".join(lines)


def methods(json_out: bool = typer.Option(False, "--json", help="Each method with the JSON "
                                          "Schema of its options"),
            markdown: bool = typer.Option(False, "--markdown", help="A Markdown table")) -> None:
    """List the methods `ask` and `eval` can run, and the options each takes (--opt k=v)."""
    if json_out:
        print_json([spec.describe() for spec in METHODS.values()])
        return
    if markdown:
        console.print(markdown_table(), markup=False, highlight=False, soft_wrap=True)
        return
    table = Table("method", "retrieves", "paper", "what it does", "options (--opt key=value)",
                  show_lines=True)
    for spec in METHODS.values():
        opts = "\n".join(f"{row['name']}={json.dumps(row['default'])} ({row['type']}): "
                         f"{row['description']}" for row in spec.option_rows()) or "—"
        table.add_row(spec.name, "yes" if spec.needs_retrieval else "no", spec.paper,
                      spec.summary, opts)
    console.print(table)
