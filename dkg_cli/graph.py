"""`dkg graph …` (versions, differences, rollback, constraint edits, drawing) and `dkg match`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from dkg.settings import load_settings
from dkg_cli.app import app
from dkg_cli.output import out

graph_app = typer.Typer(help="Versions, differences and rollback of the Decision Knowledge Graph.",
                        no_args_is_help=True)
app.add_typer(graph_app, name="graph")


@graph_app.command("versions")
def graph_versions_cmd(code: Annotated[str, typer.Argument(help="Guideline code, e.g. ALL.")]) -> None:
    """Every version loaded for a guideline, oldest first."""
    from dkg.graph import loader

    table = Table("seq", "version", "kind", "loaded at", "current")
    for v in loader.versions(load_settings(), code):
        table.add_row(str(v["seq"]), v["version"], str(v.get("kind") or ""), str(v["loadedAt"]),
                      "yes" if v["current"] else "")
    out.print(table)


@graph_app.command("diff")
def graph_diff_cmd(
    code: Annotated[str, typer.Argument(help="Guideline code, e.g. ALL.")],
    v1: Annotated[str, typer.Argument(help="Older version, e.g. 1.2022.")],
    v2: Annotated[str, typer.Argument(help="Newer version, e.g. 2.2022.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Boxes changed, added and removed between two loaded versions, and the decision paths affected."""
    from dkg.graph import loader

    d = loader.diff_versions(load_settings(), code, v1, v2)
    if as_json:
        print(d.model_dump_json())
        return
    for kind, items in (("changed", d.changed), ("added", d.added), ("removed", d.removed)):
        for c in items:
            out.print(f"[bold]{kind}[/] {c.page} {c.uid}: {c.text_before or ''} → {c.text_after or ''}")
            if c.constraints_before != c.constraints_after:
                out.print(f"    constraints {json.dumps(c.constraints_before)} → {json.dumps(c.constraints_after)}")
    out.print(f"{len(d.changed_paths)} decision path(s) lead patients elsewhere now")


@graph_app.command("rollback")
def graph_rollback_cmd(
    code: Annotated[str, typer.Argument(help="Guideline code, e.g. ALL.")],
    version: Annotated[str, typer.Argument(help="A version loaded before.")],
) -> None:
    """Restore a guideline to an earlier loaded version (recorded as a change, reversible)."""
    from dkg.graph import loader

    out.print(loader.rollback(load_settings(), code, version).message)


constraint_app = typer.Typer(help="Insert, delete or update constraints on a decision node (recorded).",
                              no_args_is_help=True)
graph_app.add_typer(constraint_app, name="constraint")


def _edit(action: str, code: str, uid: str, items: str) -> None:
    from dkg.graph import loader

    try:
        payload = json.loads(items)
    except ValueError as e:
        raise typer.BadParameter(f"not JSON: {e}") from e
    payload = payload if isinstance(payload, list) else [payload]
    out.print(loader.edit_constraints(load_settings(), code, uid, action, payload).message)


@constraint_app.command("add")
def constraint_add_cmd(code: str, uid: str, items: Annotated[str, typer.Argument(
        help='JSON constraint or list, e.g. \'{"attr": "age", "op": "<", "value": 60, "unit": "years"}\'')]) -> None:
    """Add constraints to a box's decision node."""
    _edit("add", code, uid, items)


@constraint_app.command("remove")
def constraint_remove_cmd(code: str, uid: str, items: Annotated[str, typer.Argument(
        help="JSON constraint or list to remove (must be present).")]) -> None:
    """Remove constraints from a box's decision node."""
    _edit("remove", code, uid, items)


@constraint_app.command("set")
def constraint_set_cmd(code: str, uid: str, items: Annotated[str, typer.Argument(
        help="JSON list that replaces all of the box's constraints.")]) -> None:
    """Replace a box's constraints."""
    _edit("set", code, uid, items)


@graph_app.command("render")
def graph_render_cmd(
    code: Annotated[str, typer.Argument(help="Guideline code, e.g. ALL.")],
    out_file: Annotated[Path, typer.Option("--out", help="SVG file to write.")] = Path("dkg.svg"),
    patient: Annotated[str | None, typer.Option("--patient", help='Facts as JSON, e.g. \'{"age": 68}\'.')] = None,
) -> None:
    """Draw the decision graph (decisions with their constraints), a patient's path highlighted."""
    from dkg.graph.render import render

    facts = json.loads(patient) if patient else None
    out.print(f"wrote {render(load_settings(), code, out_file, facts)}")


@app.command("match")
def match_cmd(
    guideline: Annotated[str | None, typer.Option("--guideline", help="Guideline code (default: all).")] = None,
    age: Annotated[float | None, typer.Option("--age")] = None,
    ph_status: Annotated[str | None, typer.Option("--ph-status")] = None,
    response: Annotated[str | None, typer.Option("--response")] = None,
    mrd: Annotated[str | None, typer.Option("--mrd")] = None,
    comorbidities: Annotated[str | None, typer.Option("--comorbidities")] = None,
    fact: Annotated[list[str] | None, typer.Option("--fact", help="Any other fact as attr=value.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON list.")] = False,
) -> None:
    """Recommended next steps for a patient, with evidence, from one read-only Cypher query."""
    from dkg.graph import loader

    facts: dict[str, object] = {"age": age, "ph_status": ph_status, "response": response, "mrd": mrd,
                                "comorbidities": comorbidities}
    for f in fact or []:
        k, _, v = f.partition("=")
        facts[k.strip()] = float(v) if v.replace(".", "", 1).isdigit() else v.strip()
    rows = loader.match_patient(load_settings(), facts, guideline)
    if as_json:
        print(json.dumps(rows, default=str))
        return
    for r in rows:
        out.print(f"[bold]{r['guideline']} {r['version']} {r['page']}[/] {r['condition']}")
        for n in r["next"]:
            out.print(f"   → {n['page']}: {n['text']}")

