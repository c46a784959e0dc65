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
    import graphviz

    state = loader.current_state(settings, code)
    if state is None:
        raise GraphLoadError(f"{code} is not loaded")
    hot: set[str] = set()
    if patient:
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
                sub.node(ids[uid], label=label, fillcolor=fill, penwidth="2" if uid in hot else "1", tooltip=uid)
    for e in sorted(state.edges, key=lambda e: (e.head, e.tail)):
        style = "dashed" if e.type == "LINKS_TO" else "solid"
        color = "#d4a000" if e.head in hot and e.tail in hot else "black"
        g.edge(ids[e.head], ids[e.tail], label=e.label, style=style, color=color)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        svg = g.pipe(format="svg")
    except graphviz.ExecutableNotFound as err:
        raise GraphLoadError("Graphviz `dot` is not installed (apt-get install graphviz)") from err
    out.write_bytes(svg)
    return out
