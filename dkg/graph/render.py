"""Draw a guideline version's decision graph with Graphviz, a patient's path highlighted."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from dkg.constraints.models import items_from_json
from dkg.constraints.table import paper_form
from dkg.errors import GraphLoadError
from dkg.graph import loader
from dkg.settings import Settings


def render(settings: Settings, code: str, out: Path, patient: dict[str, Any] | None = None) -> Path:
    """Write an SVG of the current version of ``code``; decisions show their constraints.

    With ``patient`` facts, the decisions that hold for the patient and their next steps are
    drawn in colour (the same query as ``dkg match``).

    Raises:
        GraphLoadError: the guideline is not loaded, or Graphviz's ``dot`` is missing.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(render_svg(settings, code, None, patient))
    return out


def render_svg(settings: Settings, code: str, version: str | None = None,
               patient: dict[str, Any] | None = None) -> bytes:
    """The SVG of ``code`` at ``version`` (default: the current one), a patient's path highlighted.

    A patient's path is drawn on the current version only (the match query reads the current graph).

    Raises:
        GraphLoadError: the guideline or the version is not loaded, or Graphviz's ``dot`` is missing.
    """
    import graphviz

    current = loader.current_state(settings, code)
    if current is None:
        raise GraphLoadError(f"{code} is not loaded")
    state = current if version in (None, current.version) else loader.snapshot(settings, code, str(version))
    if state is None:
        raise GraphLoadError(f"{code} has no loaded version {version}")
    hot: set[str] = set()
    if patient and state.version == current.version:
        rows = loader.match_patient(settings, patient, code)
        holding = {row["decision"] for row in rows}
        hot |= holding
        for row in rows:  # next steps on the path: actions, or conditions that hold as well
            hot.update(n["uid"] for n in row["next"]
                       if n["uid"] in holding or state.boxes[n["uid"]].constraints in ("", "[]"))
    g = graphviz.Digraph(name=code, graph_attr={"rankdir": "LR", "fontsize": "10", "label": f"{code} {state.version}"},
                         node_attr={"shape": "box", "style": "rounded,filled", "fillcolor": "white", "fontsize": "9"})
    ids = {uid: f"n{i}" for i, uid in enumerate(sorted(state.boxes))}  # "ALL:ALL-5:…" would read as a port
    pages: dict[str, list[str]] = {}
    for b in state.boxes.values():
        pages.setdefault(b.page, []).append(b.uid)
    for page, uids in sorted(pages.items()):
        with g.subgraph(name=f"cluster_{page}") as sub:
            sub.attr(label=page, style="dashed")
            for uid in uids:
                b = state.boxes[uid]
                label = "\n".join(textwrap.wrap(b.textPlain, 32))
                items = items_from_json(json.loads(b.constraints))
                if items:
                    label += "\n—\n" + "\n".join(textwrap.wrap(paper_form(items), 36))
                fill = "#ffe08a" if uid in hot else "#e8f0fe" if items else "white"
                # the SVG element's id: what the web page and its tests find (Graphviz 2.43 writes no `class`)
                extra = {"id": f"onpath_{ids[uid]}"} if uid in hot else {}
                sub.node(ids[uid], label=label, fillcolor=fill, penwidth="2" if uid in hot else "1", tooltip=uid,
                         **extra)
    for e in sorted(state.edges, key=lambda e: (e.head, e.tail)):
        style = "dashed" if e.type == "LINKS_TO" else "solid"
        color = "#d4a000" if e.head in hot and e.tail in hot else "black"
        g.edge(ids[e.head], ids[e.tail], label=e.label, style=style, color=color)
    try:
        return bytes(g.pipe(format="svg"))
    except graphviz.ExecutableNotFound as err:
        raise GraphLoadError("Graphviz `dot` is not installed (apt-get install graphviz)") from err
