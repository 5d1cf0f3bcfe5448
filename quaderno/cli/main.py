"""The `quaderno` command line."""

from __future__ import annotations

import typer

from quaderno import __version__
from quaderno.cli import (ask_cmd, demo_cmd, eval_cmd, gate_cmd, index_cmd, kb_cmd, llm_cmd,
                          methods_cmd, synth_cmd)
from quaderno.cli.common import setup_logging

app = typer.Typer(name="quaderno", no_args_is_help=True, add_completion=False,
                  help="Structured, adaptive retrieval-augmented generation.")
app.add_typer(kb_cmd.app, name="kb")
app.add_typer(index_cmd.app, name="index")
app.add_typer(llm_cmd.app, name="llm")
app.add_typer(synth_cmd.app, name="synth")
app.add_typer(gate_cmd.app, name="gate")
app.command("search")(index_cmd.friendly_errors(index_cmd.search))
app.command("ask")(ask_cmd.ask)
app.command("methods")(methods_cmd.methods)
app.command("demo")(demo_cmd.demo)
app.command("eval")(eval_cmd.eval_)
app.command("report")(eval_cmd.report)
app.command("serve")(__import__("quaderno.cli.serve_cmd").cli.serve_cmd.serve)
app.command("mcp")(__import__("quaderno.cli.serve_cmd").cli.serve_cmd.mcp)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"quaderno {__version__}")
        raise typer.Exit()


@app.callback()
def main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress"),
         version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                      help="Show the version and exit")) -> None:
    setup_logging(verbose)


if __name__ == "__main__":
    app()
