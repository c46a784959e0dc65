"""Synthetic guidelines for scale tests: the reference ones with renamed codes and perturbed constraints.

A synthetic guideline keeps a reference guideline's flowchart shape, is drawn by the style-matrix
renderer (so the parser reads it like any other PDF), and differs in what matters to the graph: its
code (``ALL`` → ``XQ7A3``; page labels ``ALL-2`` → ``XQ7A3-2``), its name, and the numbers of its
constraints (ages, counts, percentages shifted by a few units, the same shift in every version of
the code, so a version change stays the reference's change). ``long_document`` strings pages of
the reference guidelines together into a PDF of any length.
"""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any

from dkg.pdf.stylematrix import Style, render, style_named

DEFAULT_STYLE = "td-rect-straight-filled"
_NUMBER = re.compile(r"(?<![\d.])(\d{2})(?=\s*(?:years|year|y\b|%|or older|or younger))")


def _walk(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_walk(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, fn) for k, v in value.items()}
    return value


def rename(truth: dict[str, Any], code: str) -> dict[str, Any]:
    """``truth`` with its guideline code (and every page label that carries it) replaced by ``code``."""
    old = truth["guideline"]["short"]
    label = re.compile(rf"\b{re.escape(old)}-(\d+)\b")
    out = _walk(copy.deepcopy(truth), lambda s: label.sub(rf"{code}-\1", s))
    out["guideline"]["short"] = code
    out["guideline"]["name"] = f"{truth['guideline']['name']} (synthetic {code})"
    return dict(out)


def perturb(truth: dict[str, Any], seed: str) -> dict[str, Any]:
    """Shift the two-digit numbers of constraints (ages, percentages) by 1–3 units, the same shift for the
    same box in every version (the random generator is seeded by ``seed`` and the box id)."""
    out = copy.deepcopy(truth)
    for node in out["nodes"]:
        rng = random.Random(f"{seed}:{node['id']}")
        shift = rng.choice([-3, -2, -1, 1, 2, 3])

        def move(m: re.Match[str], shift: int = shift) -> str:
            return str(min(99, max(10, int(m.group(1)) + shift)))

        for key in ("text", "text_resolved", "text_markup"):
            if isinstance(node.get(key), str):
                node[key] = _NUMBER.sub(move, node[key])
    return out


def synthetic_guideline(truth_path: Path, code: str, out_dir: Path, style: Style | None = None) -> Path:
    """Draw the guideline version of ``truth_path`` as guideline ``code``; the PDF's path
    (``out_dir/<code>-<version>.pdf``, its truth beside it)."""
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    new = perturb(rename(truth, code), seed=code)
    pdf = out_dir / f"{code}-{truth['guideline']['version']}.pdf"
    drawn = render(new, style or style_named(DEFAULT_STYLE), pdf)
    pdf.with_suffix(".truth.json").write_text(json.dumps(drawn, ensure_ascii=False, indent=1), encoding="utf-8")
    return pdf


def long_document(truth_paths: list[Path], pages: int, out: Path, code: str = "LONG",
                  style: Style | None = None) -> Path:
    """A PDF of ``pages`` flowchart pages, cycling through the pages of ``truth_paths`` (node ids made
    unique, page labels ``<code>-1`` … ``<code>-N``, links between pages dropped)."""
    truths = [json.loads(p.read_text(encoding="utf-8")) for p in truth_paths]
    source_pages = [(t, pg) for t in truths for pg in t["pages"]
                    if any(n["page_index"] == pg["index"] for n in t["nodes"])]
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    new_pages: list[dict[str, Any]] = []
    for k in range(pages):
        t, pg = source_pages[k % len(source_pages)]
        label = f"{code}-{k + 1}"
        ids = {n["id"]: f"p{k + 1}_{n['id']}" for n in t["nodes"] if n["page_index"] == pg["index"]}
        new_pages.append({**pg, "index": k + 1, "label": label})
        for n in t["nodes"]:
            if n["id"] in ids:
                nodes.append({**n, "id": ids[n["id"]], "page": label, "page_index": k + 1})
        edges += [{**e, "from": ids[e["from"]], "to": ids[e["to"]], "page": label}
                  for e in t["edges"] if e["from"] in ids and e["to"] in ids]
    first = truths[0]
    truth = {**first, "guideline": {**first["guideline"], "short": code, "name": f"Long synthetic guideline {code}"},
             "document": {**first["document"], "page_count": pages}, "pages": new_pages, "nodes": nodes,
             "edges": edges, "page_links": []}
    render(truth, style or style_named(DEFAULT_STYLE), out)
    return out


def reference_versions(guidelines_dir: Path) -> list[list[Path]]:
    """The truth files of each reference guideline (``<dir>/<CODE>/<version>/truth.json``), oldest first."""

    def key(p: Path) -> list[int]:
        return [int(x) for x in re.findall(r"\d+", p.parent.name)][::-1]

    return [sorted(g.glob("*/truth.json"), key=key) for g in sorted(guidelines_dir.iterdir()) if g.is_dir()
            and any(g.glob("*/truth.json"))]


def synthetic_set(guidelines_dir: Path, count: int, out_dir: Path, prefix: str = "XS", start: int = 0
                  ) -> list[tuple[str, list[Path]]]:
    """``count`` synthetic guidelines, cycling through the reference ones from the ``start``-th (in name order),
    each with all its versions: (code, PDFs oldest first) per guideline, the PDFs of one code in
    ``out_dir/<code>/``."""
    refs = reference_versions(guidelines_dir)
    out = []
    for i in range(count):
        code = f"{prefix}{i:03d}"
        out.append((code, [synthetic_guideline(t, code, out_dir / code) for t in refs[(start + i) % len(refs)]]))
    return out
