"""The one place where the CLI prints: consoles, tables and answers; every command module uses these."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:  # the services package imports the Neo4j driver (seconds): only commands that need it load it
    from dkg.services.status import ServiceStatus

out = Console(width=None if sys.stdout.isatty() else 160)
"""Results (stdout); ``--json`` output is printed with ``print`` so that no console wraps it."""
err = Console(stderr=True)
"""Progress, spinners and errors (stderr)."""
state = {"debug": False}
"""Set by the root callback: ``--debug`` shows tracebacks instead of one error line."""


def service_table(statuses: list[ServiceStatus]) -> Table:
    table = Table("service", "address", "health", "version", "pid", "started", "startup s", "peak MiB")
    for s in statuses:
        table.add_row(
            s.name, s.address, "[green]healthy[/]" if s.healthy else f"[red]down[/] {s.detail}",
            s.version or "-", str(s.pid or "-"), "yes" if s.started else "no",
            f"{s.startup_s:.1f}" if s.startup_s is not None else "-",
            f"{s.peak_rss_mib:.0f}" if s.peak_rss_mib else "-",
        )
    return table


def print_statuses(statuses: list[ServiceStatus], as_json: bool) -> None:
    if as_json:
        print(json.dumps([s.model_dump() for s in statuses]))
    else:
        out.print(service_table(statuses))
        for s in statuses:
            if not s.healthy:
                out.print(f"[red]{escape(s.name)}[/]: {escape(s.detail)}")


def print_table2(rows: list[dict[str, object]]) -> None:
    t = Table("metric", "with DKG", "without DKG", "paper with DKG", "paper without DKG")
    for r in rows:
        t.add_row(*[("-" if v is None else str(v)) for v in r.values()])
    out.print(t)


def print_answer(answer: dict[str, Any]) -> None:
    """An answer (``dkg ask --json``'s object) for a person."""
    out.print(f"[bold]{answer['status']}[/]: {escape(answer['answer'])}")
    if answer.get("cypher"):  # markup=False: Cypher's facts[k] is not a console style
        out.print(f"cypher: {answer['cypher']}", highlight=False, markup=False)
    for ev in answer.get("evidence") or []:
        way = {"on the way": " (on the way)", "treatment": " (treatment asked about)"}.get(str(ev.get("role")), "")
        out.print(f"evidence{way}: {ev['guideline']} {ev['version']}, page {ev['page']}, box {ev['box']}: "
                  f"{ev['text']}", highlight=False, markup=False)
    if answer.get("missing_facts"):
        out.print("missing facts: " + ", ".join(answer["missing_facts"]))
    for f in answer.get("facts_read") or []:  # why the graph was asked what it was asked
        out.print(f"read: {f['attr']} = {f['value']} from “{f['text']}” ({f['rule']})", highlight=False, markup=False)
    if answer.get("unread"):
        out.print("not understood: " + ", ".join(answer["unread"]), highlight=False, markup=False)
    if answer.get("message") and answer["status"] != "answered":
        out.print(f"why: {answer['message']}", highlight=False, markup=False)
