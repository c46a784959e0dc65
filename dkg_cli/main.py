"""Entry point of the ``dkg`` command."""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dkg.errors import DkgError
from dkg.services import services_down, services_status, services_up
from dkg.services.status import ServiceStatus
from dkg.settings import load_settings
from dkg_cli.env import configure_prefect

app = typer.Typer(help="Decision Knowledge Graphs from clinical practice guidelines.", no_args_is_help=True)
services_app = typer.Typer(help="Start, stop and inspect the local Neo4j and CoreNLP services.",
                           no_args_is_help=True)
app.add_typer(services_app, name="services")

out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)
_state = {"debug": False}


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    """Decision Knowledge Graphs from clinical practice guidelines."""
    _state["debug"] = debug


def _table(statuses: list[ServiceStatus]) -> Table:
    table = Table("service", "address", "health", "version", "pid", "started", "startup s", "peak MiB")
    for s in statuses:
        table.add_row(
            s.name, s.address, "[green]healthy[/]" if s.healthy else f"[red]down[/] {s.detail}",
            s.version or "-", str(s.pid or "-"), "yes" if s.started else "no",
            f"{s.startup_s:.1f}" if s.startup_s is not None else "-",
            f"{s.peak_rss_mib:.0f}" if s.peak_rss_mib else "-",
        )
    return table


@services_app.command("up")
def services_up_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Start Neo4j and CoreNLP (idempotent) and wait until both answer."""
    settings = load_settings()
    with err.status("starting services…") as spinner:
        statuses = services_up(settings, progress=lambda msg: spinner.update(msg))
    if as_json:
        print(json.dumps([s.model_dump() for s in statuses]))
        return
    out.print(_table(statuses))
    for s in statuses:
        verb = "started" if s.started else "already running" if s.managed else "external"
        out.print(f"{s.name} {verb}, listening on {s.address}")


@services_app.command("status")
def services_status_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Report each service's health, version and memory; exit 1 when one is down."""
    statuses = services_status(load_settings())
    if as_json:
        print(json.dumps([s.model_dump() for s in statuses]))
    else:
        out.print(_table(statuses))
    if not all(s.healthy for s in statuses):
        raise typer.Exit(1)


@services_app.command("down")
def services_down_cmd() -> None:
    """Stop only the processes this project started (by their recorded PID)."""
    stopped = services_down(load_settings())
    for name, was in stopped.items():
        out.print(f"{name}: {'stopped' if was else 'not running (nothing of ours to stop)'}")


@app.command("health")
def health_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run the health-check flow (a Prefect flow run) against the configured services."""
    settings = load_settings()
    configure_prefect(settings)
    from flows.healthcheck import healthcheck

    report = healthcheck()
    if as_json:
        print(report.model_dump_json())
    else:
        out.print(_table(report.services))
        out.print("[green]healthy[/]" if report.healthy else "[red]unhealthy[/]")
    if not report.healthy:
        raise typer.Exit(1)


@app.command("demo")
def demo_cmd() -> None:
    """The main job on the bundled samples: start services, then run the pipeline flows."""
    settings = load_settings()
    configure_prefect(settings)
    t0 = time.monotonic()
    with err.status("starting services…") as spinner:
        statuses = services_up(settings, progress=lambda msg: spinner.update(msg))
    out.print(_table(statuses))
    from flows.healthcheck import healthcheck

    report = healthcheck()
    out.print(_table(report.services))
    out.print(f"health-check flow: {'[green]healthy[/]' if report.healthy else '[red]unhealthy[/]'}")
    out.print(f"demo finished in {time.monotonic() - t0:.1f} s")
    if not report.healthy:
        raise typer.Exit(1)


def main() -> None:
    """Run the CLI; a :class:`DkgError` becomes one line on stderr and exit code 1."""
    try:
        app()
    except DkgError as e:
        if _state["debug"]:
            raise
        err.print(f"[red]error:[/] {e}", highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
