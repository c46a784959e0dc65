"""A guideline version as the graph should hold it, built from a validated constraint CSV."""

from __future__ import annotations

import csv
import difflib
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dkg.constraints.models import AnyOf, Constraint, Item, items_from_json
from dkg.errors import GraphLoadError
from dkg.validate.marks import require_validated


def row(item: BoxState | EdgeState) -> dict[str, str]:
    """The fields of a box or an edge as a query parameter row (``dataclasses.asdict`` without its deep
    copy: the fields are strings; 30x faster on a 10,000-box load)."""
    return dict(vars(item))


@dataclass(frozen=True)
class BoxState:
    """Static content of one box, and its constraints (JSON, "[]" when none)."""

    uid: str
    page: str
    text: str
    textPlain: str
    kind: str
    constraints: str
    column: str = ""
    """The column header above the box on its page (its phase of care), "" when none."""


@dataclass(frozen=True)
class EdgeState:
    """An arrow (ARROW) or a page link (LINKS_TO) between two boxes."""

    head: str
    tail: str
    type: str
    label: str


@dataclass
class VersionState:
    """Everything one guideline version puts in the graph."""

    code: str
    name: str | None
    version: str
    sha256: str
    boxes: dict[str, BoxState]
    edges: set[EdgeState]

    def to_json(self) -> str:
        """A snapshot, kept on the Version node so any version can be restored."""
        return json.dumps({"code": self.code, "name": self.name, "version": self.version, "sha256": self.sha256,
                           "boxes": [row(b) for b in self.boxes.values()],
                           "edges": sorted([row(e) for e in self.edges],
                                           key=lambda e: (e["head"], e["tail"], e["type"]))})

    @staticmethod
    def from_json(text: str) -> VersionState:
        """Read a snapshot back."""
        d = json.loads(text)
        boxes = {b["uid"]: BoxState(**b) for b in d["boxes"]}
        return VersionState(d["code"], d.get("name"), d["version"], d["sha256"], boxes,
                            {EdgeState(**e) for e in d["edges"]})


def skeleton(text: str) -> str:
    """A box's text without the values that a new version may change (numbers, comparisons)."""
    t = text.lower()
    t = re.sub(r"\d+(?:\.\d+)?", "#", t)
    t = re.sub(r"less than|younger than|under|below|more than|older than|over|above|at least|or older|or more|[<>≤≥]",
               "~", t)
    return re.sub(r"\s+", " ", t).strip()


def read_version(csv_path: Path,
                 previous: VersionState | Callable[[str], VersionState | None] | None) -> VersionState:
    """Build the desired state of a version from its validated constraint CSV.

    Box identities follow the previous version: a box keeps its uid when its page and text
    skeleton are the same (only constraint values changed), or, failing that, when its text is
    close to an unmatched box of the same page. ``previous`` may be a function of the guideline
    code (e.g. "what the graph holds now"), called once the CSV has named the guideline.
    """
    require_validated(csv_path)
    with open(csv_path, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        raise GraphLoadError(f"{csv_path}: no rows")
    code, version, sha = rows[0]["guideline"], rows[0]["version"], rows[0].get("source_pdf_sha256", "")
    if not code or not version:
        raise GraphLoadError(f"{csv_path}: row 2 has no guideline code or version")
    if callable(previous):
        previous = previous(code)
    local: dict[str, BoxState] = {}
    for r in rows:
        for side in ("head", "tail"):
            bid = r[f"{side}_id"]
            if bid not in local:
                local[bid] = BoxState(uid=bid, page=r[f"{side}_page"], text=r[side], textPlain=r[f"{side}_plain"],
                                      kind=r[f"{side}_kind"], constraints=r[f"{side}_constraints"] or "[]",
                                      column=r.get(f"{side}_column") or "")
    local_edges = [(r["head_id"], r["tail_id"]) for r in rows]
    uids = _assign_uids(code, local, previous, local_edges)
    boxes = {uids[k]: BoxState(uids[k], b.page, b.text, b.textPlain, b.kind, b.constraints, b.column)
             for k, b in local.items()}
    edges = {EdgeState(uids[r["head_id"]], uids[r["tail_id"]], "ARROW" if r["kind"] == "arrow" else "LINKS_TO",
                       r.get("label", "") or "") for r in rows}
    return VersionState(code, _guideline_name(csv_path), version, sha, boxes, edges)


def _guideline_name(csv_path: Path) -> str | None:
    """The guideline's name from the ingestion's ``graph.json`` beside the CSV, when there is one."""
    graph = csv_path.with_name("graph.json")
    try:
        data = json.loads(graph.read_text(encoding="utf-8")) if graph.exists() else {}
        name = data.get("name") or (data.get("info") or {}).get("name")
    except (OSError, ValueError):
        return None
    return str(name) if name else None


def _assign_uids(code: str, local: dict[str, BoxState], previous: VersionState | None,
                 local_edges: list[tuple[str, str]] | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    prev = list(previous.boxes.values()) if previous else []
    taken: set[str] = set()
    by_skel: dict[tuple[str, str], list[str]] = {}
    for b in prev:
        by_skel.setdefault((b.page, skeleton(b.textPlain)), []).append(b.uid)
    for k, b in local.items():
        cands = [u for u in by_skel.get((b.page, skeleton(b.textPlain)), []) if u not in taken]
        if cands:
            out[k] = cands[0]
            taken.add(cands[0])
    for k, b in local.items():
        if k in out:
            continue
        best = None
        for p in prev:
            if p.uid in taken or p.page != b.page:
                continue
            r = difflib.SequenceMatcher(None, p.textPlain.lower(), b.textPlain.lower()).ratio()
            if r >= 0.75 and (best is None or r > best[0]):
                best = (r, p.uid)
        if best:
            out[k] = best[1]
            taken.add(best[1])
    # A box whose wording grew ("… (15–39 years)" → "… (15–39 years) without substantial
    # comorbidities") keeps its identity when it sits between the same neighbours as before.
    if previous is not None and local_edges:
        prev_nb: dict[str, set[str]] = {}
        for e in previous.edges:
            prev_nb.setdefault(e.head, set()).add(e.tail)
            prev_nb.setdefault(e.tail, set()).add(e.head)
        new_nb: dict[str, set[str]] = {}
        for h, t in local_edges:
            new_nb.setdefault(h, set()).add(t)
            new_nb.setdefault(t, set()).add(h)
        for k, b in local.items():
            if k in out:
                continue
            mapped = {out[n] for n in new_nb.get(k, set()) if n in out}
            best = None
            for p in prev:
                if p.uid in taken or p.page != b.page or not (prev_nb.get(p.uid, set()) & mapped):
                    continue
                r = difflib.SequenceMatcher(None, p.textPlain.lower(), b.textPlain.lower()).ratio()
                contained = p.textPlain.lower() in b.textPlain.lower() or b.textPlain.lower() in p.textPlain.lower()
                if (r >= 0.5 or contained) and (best is None or r > best[0]):
                    best = (r, p.uid)
            if best:
                out[k] = best[1]
                taken.add(best[1])
    seen: dict[str, int] = {}
    for k, b in local.items():
        if k in out:
            continue
        base = f"{code}:{b.page}:{hashlib.sha1(b.textPlain.encode()).hexdigest()[:10]}"
        n = seen.get(base, 0)
        seen[base] = n + 1
        uid = base if n == 0 else f"{base}-{n}"
        while uid in taken:
            uid += "'"
        out[k] = uid
        taken.add(uid)
    return out


def _camel(attr: str) -> str:
    head, *rest = attr.split("_")
    return head + "".join(p.title() for p in rest)


SUFFIX = {">=": "Min", "<=": "Max", ">": "Above", "<": "Below"}


def typed_properties(items: list[Item]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Queryable properties of a decision (``ageMin``, ``phStatus`` …) and its OR-alternatives."""
    props: dict[str, Any] = {}
    alts: list[dict[str, Any]] = []
    for i in items:
        if isinstance(i, AnyOf):
            for alt in i.alternatives:
                a: dict[str, Any] = {}
                for c in alt:
                    _put(a, c)
                alts.append(a)
        else:
            _put(props, i)
    return props, alts


def _put(props: dict[str, Any], c: Constraint) -> None:
    key = _camel(c.attr)
    if c.op in SUFFIX and isinstance(c.value, int | float):
        props[key + SUFFIX[c.op]] = c.value
    elif c.op == "=" and isinstance(c.value, int | float):
        props[key + "Min"] = c.value
        props[key + "Max"] = c.value
    elif c.op in ("=", "in"):
        values = c.value if isinstance(c.value, list) else [c.value]
        current = props.get(key)
        props[key] = sorted(set(current) & {str(v) for v in values}) if current else sorted(str(v) for v in values)
    elif c.op == "!=":
        props[key + "Not"] = [str(c.value)]


def decision_rows(boxes: list[BoxState]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows for the decision layer: one per box with constraints (uid, JSON, typed properties),
    and one per OR-alternative of each of them."""
    decisions: list[dict[str, Any]] = []
    alternatives: list[dict[str, Any]] = []
    for b in boxes:
        items = items_from_json(json.loads(b.constraints))
        if not items:
            continue
        props, alts = typed_properties(items)
        decisions.append({"uid": b.uid, "constraints": b.constraints, "props": props})
        alternatives += [{"uid": b.uid, "props": a} for a in alts]
    return decisions, alternatives
