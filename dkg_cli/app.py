"""The root ``dkg`` Typer application; each command module adds its commands and groups to it."""

from __future__ import annotations

from typing import Annotated

import typer

from dkg_cli.output import state

app = typer.Typer(help="Decision Knowledge Graphs from clinical practice guidelines.", no_args_is_help=True)


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    """Decision Knowledge Graphs from clinical practice guidelines."""
    state["debug"] = debug
