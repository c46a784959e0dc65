"""`dkg cluster …`: the production topology as separate processes."""

from __future__ import annotations

from typing import Annotated

import typer

from dkg.settings import load_settings
from dkg_cli.app import app
from dkg_cli.output import err, out, print_statuses

cluster_app = typer.Typer(help="The production topology: PostgreSQL, Prefect server and workers, Dask, "
                          "Neo4j and CoreNLP as separate processes.", no_args_is_help=True)
app.add_typer(cluster_app, name="cluster")


@cluster_app.command("up")
def cluster_up_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Start every process of the topology that is not running (idempotent) and wait until each is healthy."""
    from dkg import cluster

    settings = load_settings()
    with err.status("starting the cluster…") as spinner:
        statuses = cluster.up(settings, progress=lambda msg: spinner.update(msg))
    print_statuses(statuses, as_json)
    if not as_json:
        out.print(f"Prefect UI and API: {cluster.api_url(settings).removesuffix('/api')}  (database "
                  f"{cluster.database_url(settings)})")
        out.print(f"use it: export PREFECT_API_URL={cluster.api_url(settings)}")


@cluster_app.command("status")
def cluster_status_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Every process of the topology with its address and health; exit 1 when one is down."""
    from dkg import cluster

    statuses = cluster.status(load_settings())
    print_statuses(statuses, as_json)
    if not all(s.healthy for s in statuses):
        raise typer.Exit(1)


@cluster_app.command("down")
def cluster_down_cmd(
    purge: Annotated[bool, typer.Option("--purge", help="Also delete Prefect's database and the shared "
                                        "results.")] = False,
) -> None:
    """Stop what `dkg cluster up` started (Neo4j and CoreNLP only if it started them)."""
    from dkg import cluster

    with err.status("stopping the cluster…") as spinner:
        stopped = cluster.down(load_settings(), purge=purge, progress=lambda msg: spinner.update(msg))
    for name, was in stopped.items():
        out.print(f"{name}: {'stopped' if was else 'not running'}")

