"""`dkg vocab …`: the attribute registry and its approval step."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from dkg.errors import DkgError
from dkg.settings import load_settings
from dkg_cli.app import app
from dkg_cli.env import configure_prefect
from dkg_cli.output import out

vocab_app = typer.Typer(help="The attribute registry: list, approve, rename, merge, reject.", no_args_is_help=True)
app.add_typer(vocab_app, name="vocab")


def _registry() -> tuple[object, Path]:
    from dkg.constraints.registry import read_registry, registry_path
    from dkg.constraints.vocabulary import base_seed

    path = registry_path(load_settings())
    return read_registry(path, base_seed()), path


@vocab_app.command("list")
def vocab_list_cmd(
    pending: Annotated[bool, typer.Option("--pending", help="Only what waits for a decision.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
) -> None:
    """Every attribute: type, unit, range or values, aliases, status, where it was first seen."""
    from dkg.constraints.registry import Registry, to_json

    reg, path = _registry()
    assert isinstance(reg, Registry)
    attrs = reg.pending() if pending else list(reg.attributes.values())
    if as_json:
        data = to_json(reg)
        data["attributes"] = {a.name: data["attributes"][a.name] for a in attrs}
        print(json.dumps(data, ensure_ascii=False))
        return
    table = Table("attribute", "status", "type", "unit", "range / values", "aliases", "first seen")
    for a in attrs:
        rng = f"{a.min:g}–{a.max:g}" if a.min is not None and a.max is not None else ", ".join(a.values)
        if a.proposed_values:
            rng += f" (+ proposed {', '.join(a.proposed_values)})"
        seen = " ".join(x for x in (a.first_seen.guideline, a.first_seen.version,
                                    f"p. {a.first_seen.page}" if a.first_seen.page else "", a.first_seen.box) if x)
        table.add_row(a.name, a.status, a.type, a.unit or "", escape(rng), escape(", ".join(a.aliases)), escape(seen))
    out.print(table)
    out.print(f"registry version {reg.version} ({path})")


def _save_registry(reg: object, path: Path, message: str) -> None:
    from dkg.constraints.registry import Registry, write_registry

    assert isinstance(reg, Registry)
    version = write_registry(reg, path)
    out.print(f"{message} (registry version {version})")


@vocab_app.command("approve")
def vocab_approve_cmd(
    names: Annotated[list[str] | None, typer.Argument(help="Attributes to approve.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Approve everything pending.")] = False,
    resume: Annotated[bool, typer.Option("--resume", help="Then resume every build paused for approval.")] = False,
) -> None:
    """Approve proposed attributes (and proposed values of approved ones)."""
    from dkg.constraints.registry import Registry

    reg, path = _registry()
    assert isinstance(reg, Registry)
    if not names and not all_:
        raise DkgError("name the attributes to approve, or pass --all")
    done = reg.approve(None if all_ else names)
    _save_registry(reg, path, f"approved: {', '.join(done) or 'nothing pending'}")
    if resume:
        for run_id in _resume_paused_builds({"action": "approve_all"}):
            out.print(f"resumed flow run {run_id}")


def _resume_paused_builds(run_input: dict[str, object]) -> list[str]:
    """Resume every extract-constraints run paused for attribute approval, with ``run_input``."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType
    from prefect.client.schemas.objects import StateType
    from prefect.flow_runs import resume_flow_run

    configure_prefect(load_settings())
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED]))))
    resumed = []
    for r in runs:
        if r.state and r.state.state_details and r.state.state_details.pause_key == "attribute-approval":
            resume_flow_run(r.id, run_input=run_input)
            resumed.append(str(r.id))
    return resumed


def _edit_registry(change: Callable[[Any], str]) -> None:
    """Apply ``change`` (which returns what it did) to the registry and save it as a new version."""
    from dkg.constraints.registry import Registry

    reg, path = _registry()
    assert isinstance(reg, Registry)
    _save_registry(reg, path, change(reg))


@vocab_app.command("reject")
def vocab_reject_cmd(names: Annotated[list[str], typer.Argument(help="Proposed attributes to refuse.")]) -> None:
    """Reject proposals: constraints on them never pass the gate."""
    _edit_registry(lambda reg: f"rejected: {', '.join(reg.reject(names))}")


@vocab_app.command("rename")
def vocab_rename_cmd(old: str, new: str) -> None:
    """Give an attribute another name (the old one stays as an alias)."""
    _edit_registry(lambda reg: reg.rename(old, new) or f"renamed {old} → {new}")


@vocab_app.command("merge")
def vocab_merge_cmd(source: str, into: str) -> None:
    """Merge an attribute into an existing one of the same type (its names become aliases)."""
    _edit_registry(lambda reg: reg.merge(source, into) or f"merged {source} into {into}")

