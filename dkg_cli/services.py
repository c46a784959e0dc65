"""`dkg services …` (the local Neo4j and CoreNLP) and `dkg health`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from dkg.settings import load_settings
from dkg_cli.app import app
from dkg_cli.env import configure_prefect
from dkg_cli.output import err, out, service_table

services_app = typer.Typer(help="Start, stop and inspect the local Neo4j and CoreNLP services.",
                           no_args_is_help=True)
app.add_typer(services_app, name="services")


@services_app.command("up")
def services_up_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Start Neo4j and CoreNLP (idempotent) and wait until both answer."""
    settings = load_settings()
    with err.status("starting services…") as spinner:
        from dkg.services import services_up

        statuses = services_up(settings, progress=lambda msg: spinner.update(msg))
    if as_json:
        print(json.dumps([s.model_dump() for s in statuses]))
        return
    out.print(service_table(statuses))
    for s in statuses:
        verb = "started" if s.started else "already running" if s.managed else "external"
        out.print(f"{s.name} {verb}, listening on {s.address}")


@services_app.command("status")
def services_status_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Report each service's health, version and memory; exit 1 when one is down."""
    from dkg.services import services_status

    statuses = services_status(load_settings())
    if as_json:
        print(json.dumps([s.model_dump() for s in statuses]))
    else:
        out.print(service_table(statuses))
    if not all(s.healthy for s in statuses):
        raise typer.Exit(1)


@services_app.command("down")
def services_down_cmd() -> None:
    """Stop only the processes this project started (by their recorded PID)."""
    from dkg.services import services_down

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
        out.print(service_table(report.services))
        out.print("[green]healthy[/]" if report.healthy else "[red]unhealthy[/]")
    if not report.healthy:
        raise typer.Exit(1)

