"""`dkg export fhir`: a loaded guideline version as a FHIR R4 Bundle (CPG PlanDefinitions, CQL Library)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from dkg.settings import load_settings
from dkg_cli.app import app
from dkg_cli.output import err, out

export_app = typer.Typer(help="Export the graph in other standards.", no_args_is_help=True)
app.add_typer(export_app, name="export")


@export_app.command("fhir")
def export_fhir_cmd(
    code: Annotated[str, typer.Argument(help="Guideline code, e.g. ALL.")],
    version: Annotated[str | None, typer.Argument(help="A loaded version (default: the current one).")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for <CODE>-<VERSION>.bundle.json.")] = Path("fhir"),
    validate: Annotated[bool, typer.Option("--validate", help="Run HAPI's validator, the CQL-to-ELM translator "
                                                              "and the CPG/reference checks; exit 1 on any "
                                                              "error.")] = False,
) -> None:
    """Write the version's Bundle (a PlanDefinition per page, ActivityDefinitions, a CQL Library)."""
    from dkg.fhir import run

    settings = load_settings()
    ex = run.export(settings, code, version)
    bundle, cql = run.write(ex, out_dir)
    counts = ex.counts()
    out.print(f"wrote {bundle} and {cql}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())),
              highlight=False)
    if not validate:
        return
    v = run.validate(settings, bundle, cql)
    out.print(v.summary(), highlight=False)
    for line in (v.checks + v.cql_errors + v.hapi_errors)[:50]:
        err.print(f"  {line}", highlight=False, soft_wrap=True)
    if not v.ok:
        sys.exit(1)
