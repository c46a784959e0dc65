"""Write a parsed guideline as the public ``edges.csv`` and ``graph.json``."""

from __future__ import annotations

import csv
from pathlib import Path

from dkg.pdf.models import Edge, GuidelineGraph
from dkg.storage import atomic_files

EDGE_COLUMNS = list(Edge.model_fields)


def write_outputs(graph: GuidelineGraph, out_dir: Path) -> tuple[Path, Path]:
    """Write ``edges.csv`` and ``graph.json`` into ``out_dir`` (atomically: both complete or neither written).

    Returns:
        The paths of the CSV and the JSON file.
    """
    csv_path, json_path = out_dir / "edges.csv", out_dir / "graph.json"
    with atomic_files([csv_path, json_path]) as (tmp_csv, tmp_json):
        with open(tmp_csv, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=EDGE_COLUMNS)
            writer.writeheader()
            for e in graph.edges:
                writer.writerow(e.model_dump())
        tmp_json.write_text(graph.model_dump_json(indent=1), encoding="utf-8")
    return csv_path, json_path


def page_report(graph: GuidelineGraph) -> list[dict[str, object]]:
    """One row per page for reports: boxes, arrows, footnotes and links resolved, path, seconds."""
    rows: list[dict[str, object]] = []
    for p in graph.pages:
        refs = [r for b in p.boxes for r in b.footnotes]
        rows.append({
            "page": p.index,
            "label": p.label or "",
            "kind": p.kind,
            "path": p.path,
            "boxes": len(p.boxes),
            "arrows": len(p.arrows),
            "footnotes_resolved": f"{sum(1 for r in refs if r.text)}/{len(refs)}",
            "links_resolved": f"{sum(1 for lk in p.links if lk.resolved)}/{len(p.links)}",
            "seconds": round(p.seconds, 2),
            "warnings": "; ".join(p.warnings),
        })
    return rows
