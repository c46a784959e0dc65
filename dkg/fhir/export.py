"""A guideline version as a FHIR R4 collection Bundle in the CPG-on-FHIR shape.

- one PlanDefinition per flowchart page (CPG recommendation definition, ``eca-rule``): its actions nest
  as the page's arrows do; a decision box is an action with an ``applicability`` condition naming a CQL
  ``define`` (``text/cql-identifier``); sibling branches that no patient can satisfy together get
  ``selectionBehavior: exactly-one`` (``any`` when the constraints overlap); a chain of steps is a list of
  sibling actions joined by ``relatedAction`` (``after-end``); a box that leads to another page points
  (``definitionCanonical``) to that page's PlanDefinition;
- one PlanDefinition for the guideline version (CPG strategy definition, ``workflow-definition``) whose
  actions point to the page PlanDefinitions;
- one ActivityDefinition per recommended action box (its text, page, footnotes as ``documentation``);
- one Library (``logic-library``) with the CQL (:mod:`dkg.fhir.cql`).

Ids and canonical URLs come from the guideline code, the page and the box uid, never from the version, so
a new version's Bundle diffs cleanly against the old one (:func:`action_diff`).
"""

from __future__ import annotations

import base64
import html
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from dkg.constraints.models import AnyOf, items_from_json
from dkg.fhir.cql import CqlBuilder, decision_define, define_bodies, library_name
from dkg.fhir.mapping import FhirMapping, slug
from dkg.graph.model import BoxState, EdgeState, VersionState, typed_properties

CPG = "http://hl7.org/fhir/uv/cpg/StructureDefinition"
PD_TYPE = "http://terminology.hl7.org/CodeSystem/plan-definition-type"
PUBLISHER = "dkg (Decision Knowledge Graph), generated from the guideline's flowcharts"


@dataclass
class Export:
    """One version's Bundle and what went into it."""

    code: str
    bundle: dict[str, Any]
    cql: str
    library_name: str
    units: dict[str, str | None]
    decisions: dict[str, str] = field(default_factory=dict)
    """decision box uid → its CQL define."""

    def resources(self) -> list[dict[str, Any]]:
        return [e["resource"] for e in self.bundle["entry"]]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for r in self.resources():
            out[r["resourceType"]] += 1
        out["actions"] = sum(len(list(walk_actions(r.get("action", [])))) for r in self.resources()
                             if r["resourceType"] == "PlanDefinition")
        out["defines"] = len(self.decisions)
        return dict(out)


def walk_actions(actions: list[dict[str, Any]]) -> Any:
    for a in actions:
        yield a
        yield from walk_actions(a.get("action", []))


def _text(s: str, n: int = 250) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _footnotes(box: BoxState) -> list[str]:
    """What the box's text adds to its plain text: the footnotes the parser resolved into it."""
    extra = box.text[len(box.textPlain):].strip() if box.text.startswith(box.textPlain) else ""
    if extra.startswith("(") and extra.endswith(")"):
        extra = extra[1:-1]
    return [p.strip() for p in extra.split(") (") if p.strip()]


def _disjoint(a: BoxState, b: BoxState) -> bool:
    """No patient satisfies both boxes' constraints (checked on attributes both constrain, outside OR-groups)."""
    pa, _ = typed_properties([i for i in items_from_json(json.loads(a.constraints)) if not isinstance(i, AnyOf)])
    pb, _ = typed_properties([i for i in items_from_json(json.loads(b.constraints)) if not isinstance(i, AnyOf)])
    for key, va in pa.items():
        vb = pb.get(key)
        if isinstance(va, list) and isinstance(vb, list) and not set(va) & set(vb) and not key.endswith("Not"):
            return True
    bases = {k.removesuffix(s) for k in pa for s in ("Min", "Max", "Above", "Below") if k.endswith(s)}
    for base in bases:
        lo_a, hi_a = _interval(pa, base)
        lo_b, hi_b = _interval(pb, base)
        if lo_b is None and hi_b is None:
            continue
        if _before(hi_a, lo_b) or _before(hi_b, lo_a):
            return True
    return False


def _interval(p: dict[str, Any], base: str) -> tuple[tuple[float, bool] | None, tuple[float, bool] | None]:
    lo = (p[base + "Min"], True) if base + "Min" in p else (p[base + "Above"], False) if base + "Above" in p else None
    hi = (p[base + "Max"], True) if base + "Max" in p else (p[base + "Below"], False) if base + "Below" in p else None
    return lo, hi


def _before(hi: tuple[float, bool] | None, lo: tuple[float, bool] | None) -> bool:
    """An interval ending at ``hi`` lies wholly below one starting at ``lo``."""
    if hi is None or lo is None:
        return False
    return hi[0] < lo[0] or (hi[0] == lo[0] and not (hi[1] and lo[1]))


class BundleBuilder:
    def __init__(self, state: VersionState, mapping: FhirMapping, types: dict[str, str | None]) -> None:
        self.s = state
        self.m = mapping
        self.cql = CqlBuilder(state, mapping, types)
        self.base = mapping.base
        self.code = slug(state.code)
        self.arrows: dict[str, list[EdgeState]] = defaultdict(list)
        self.links: dict[str, list[EdgeState]] = defaultdict(list)
        self.incoming: dict[str, int] = defaultdict(int)
        for e in sorted(state.edges, key=lambda e: (e.head, e.tail, e.type, e.label)):
            if e.head not in state.boxes or e.tail not in state.boxes:
                continue
            if e.type == "ARROW" and state.boxes[e.head].page == state.boxes[e.tail].page:
                self.arrows[e.head].append(e)
                self.incoming[e.tail] += 1
            else:
                self.links[e.head].append(e)
        self.pages = sorted({b.page for b in state.boxes.values()}, key=_page_key)
        self.used_ids: dict[str, int] = defaultdict(int)

    # ids and canonicals ----------------------------------------------------------------------
    def box_key(self, box: BoxState) -> str:
        return slug(box.uid.split(":", 1)[-1].replace("'", "p"))

    def pd_id(self, page: str) -> str:
        return f"dkg-{self.code}-{slug(page)}".lower()[:64]

    def canonical(self, rtype: str, rid: str) -> str:
        return f"{self.base}/{rtype}/{rid}"

    def versioned(self, rtype: str, rid: str) -> str:
        return f"{self.canonical(rtype, rid)}|{self.s.version}"

    def ad_id(self, box: BoxState) -> str:
        return f"dkg-{self.code}-{self.box_key(box)}".lower()[:64]

    def lib_id(self) -> str:
        return f"dkg-{self.code}-logic".lower()

    def _common(self, rtype: str, rid: str, name: str, title: str, description: str) -> dict[str, Any]:
        div = f'<div xmlns="http://www.w3.org/1999/xhtml"><p>{html.escape(title)}</p></div>'
        return {"resourceType": rtype, "id": rid, "text": {"status": "generated", "div": div},
                "url": self.canonical(rtype, rid), "version": self.s.version,
                "name": name, "title": title, "status": "active", "experimental": False,
                "publisher": PUBLISHER, "description": description}

    def citation(self, page: str | None = None, box: BoxState | None = None) -> dict[str, Any]:
        where = f", page {page}" if page else ""
        where += f", box {box.uid}" if box else ""
        label = f"{self.s.name or self.s.code} ({self.s.code}) version {self.s.version}{where}"
        return {"type": "citation", "label": f"{self.s.code} {self.s.version}" + (f" {page}" if page else ""),
                "display": label, "citation": label}

    # resources --------------------------------------------------------------------------------
    def activity(self, box: BoxState) -> dict[str, Any]:
        rid = self.ad_id(box)
        ad = self._common("ActivityDefinition", rid, _computable(f"{self.s.code} {self.box_key(box)}"),
                          _text(box.textPlain, 200), _text(box.text, 4000))
        ad["relatedArtifact"] = [self.citation(box.page, box)] + [
            {"type": "documentation", "display": _text(f, 1000)} for f in _footnotes(box)]
        return ad

    def action(self, box: BoxState, label: str, path: frozenset[str]) -> list[dict[str, Any]]:
        """The actions for ``box`` and the chain of single steps after it (siblings, ``relatedAction``)."""
        key = self.box_key(box)
        self.used_ids[key] += 1
        aid = key if self.used_ids[key] == 1 else f"{key}-{self.used_ids[key]}"
        title = _text(box.textPlain, 200)
        act: dict[str, Any] = {"id": aid, "title": (f"{label}: " if label else "") + title,
                               "description": _text(box.text, 2000)}
        notes = _footnotes(box)
        if notes:
            act["documentation"] = [{"type": "documentation", "display": _text(n, 1000)} for n in notes]
        if box.constraints != "[]":
            act["condition"] = [{"kind": "applicability",
                                 "expression": {"language": self.m.condition_language,
                                                "expression": decision_define(box)}}]
        if box.kind == "action":
            act["definitionCanonical"] = self.versioned("ActivityDefinition", self.ad_id(box))
        nexts = [e for e in self.arrows.get(box.uid, []) if e.tail not in path]
        links = self.links.get(box.uid, [])
        here = path | {box.uid}
        chain: list[dict[str, Any]] = [act]
        children: list[list[dict[str, Any]]] = []
        for e in nexts:
            children.append(self.action(self.s.boxes[e.tail], e.label, here))
        pages_linked: set[str] = set()
        for e in links:
            tgt = self.s.boxes[e.tail]
            if tgt.page in pages_linked:
                continue
            pages_linked.add(tgt.page)
            self.used_ids[f"{key}-to-{slug(tgt.page)}"] += 1
            lid = f"{key}-to-{slug(tgt.page)}"
            n = self.used_ids[lid]
            children.append([{"id": lid if n == 1 else f"{lid}-{n}", "title": f"Continue on {tgt.page}",
                              "description": _text(tgt.textPlain, 500),
                              "definitionCanonical": self.versioned("PlanDefinition", self.pd_id(tgt.page))}])
        if len(children) == 1 and not (children[0][0].get("condition")):
            nxt = children[0]
            nxt[0]["relatedAction"] = [{"actionId": aid, "relationship": "after-end"}]
            return chain + nxt
        if children:
            act["action"] = [self._group(c) for c in children]
            conds = [self.s.boxes.get(e.tail) for e in nexts]
            if len(children) > 1:
                act["groupingBehavior"] = "logical-group"
                exclusive = (len(conds) == len(children) and all(c is not None and c.constraints != "[]"
                                                                 for c in conds)
                             and all(_disjoint(a, b) for i, a in enumerate(conds) for b in conds[i + 1:]
                                     if a is not None and b is not None))
                act["selectionBehavior"] = "exactly-one" if exclusive else "any"
        return chain

    def _group(self, seq: list[dict[str, Any]]) -> dict[str, Any]:
        if len(seq) == 1:
            return seq[0]
        head = seq[0]
        return {"id": f"{head['id']}-steps", "title": head["title"], "groupingBehavior": "sentence-group",
                "action": seq}

    def page_plan(self, page: str) -> dict[str, Any]:
        boxes = sorted((b for b in self.s.boxes.values() if b.page == page),
                       key=lambda b: (b.column, b.uid))
        roots = [b for b in boxes if self.incoming.get(b.uid, 0) == 0]
        actions: list[dict[str, Any]] = []
        for r in roots or boxes[:1]:
            actions.append(self._group(self.action(r, "", frozenset())))
        for b in boxes:  # boxes reachable only through a cycle: an entry of their own
            if self.used_ids[self.box_key(b)] == 0:
                actions.append(self._group(self.action(b, "", frozenset())))
        pid = self.pd_id(page)
        pd = self._common("PlanDefinition", pid, _computable(f"{self.s.code} {page}"),
                          f"{self.s.name or self.s.code} {self.s.version}: {page}",
                          f"The decisions and recommended steps of flowchart page {page} of "
                          f"{self.s.name or self.s.code} version {self.s.version}.")
        pd["meta"] = {"profile": [f"{CPG}/cpg-recommendationdefinition"]}
        pd["type"] = {"coding": [{"system": PD_TYPE, "code": "eca-rule", "display": "ECA Rule"}]}
        pd["relatedArtifact"] = [self.citation(page)]
        pd["library"] = [self.versioned("Library", self.lib_id())]
        pd["action"] = actions
        return pd

    def strategy(self) -> dict[str, Any]:
        rid = f"dkg-{self.code}".lower()
        pd = self._common("PlanDefinition", rid, _computable(self.s.code),
                          f"{self.s.name or self.s.code} {self.s.version}",
                          f"{self.s.name or self.s.code} version {self.s.version}: its flowchart pages, each a "
                          "PlanDefinition of decisions and recommended steps.")
        pd["meta"] = {"profile": [f"{CPG}/cpg-strategydefinition"]}
        pd["type"] = {"coding": [{"system": PD_TYPE, "code": "workflow-definition", "display": "Workflow Definition"}]}
        pd["relatedArtifact"] = [self.citation()]
        pd["library"] = [self.versioned("Library", self.lib_id())]
        pd["action"] = [{"id": slug(p), "title": f"Page {p}",
                         "description": f"Flowchart page {p} of {self.s.name or self.s.code}",
                         "code": [{"coding": [{"system": f"{self.base}/CodeSystem/dkg-page", "code": p}]}],
                         "definitionCanonical": self.versioned("PlanDefinition", self.pd_id(p))}
                        for p in self.pages]
        return pd

    def library(self, cql: str) -> dict[str, Any]:
        rid = self.lib_id()
        lib = self._common("Library", rid, library_name(self.s.code), f"{self.s.name or self.s.code} logic",
                           f"The patient conditions of every decision in {self.s.name or self.s.code} "
                           f"{self.s.version}, in CQL.")
        lib["type"] = {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/library-type",
                                   "code": "logic-library"}]}
        lib["relatedArtifact"] = [self.citation(),
                                  {"type": "depends-on", "display": "FHIRHelpers 4.0.1",
                                   "resource": "http://hl7.org/fhir/Library/FHIRHelpers|4.0.1"}]
        lib["content"] = [{"contentType": "text/cql", "data": base64.b64encode(cql.encode()).decode()}]
        return lib

    def build(self) -> Export:
        plans = [self.strategy()] + [self.page_plan(p) for p in self.pages]
        acts = [self.activity(b) for b in sorted(self.s.boxes.values(), key=lambda b: b.uid) if b.kind == "action"]
        cql = self.cql.build()
        resources = plans + acts + [self.library(cql)]
        bundle = {"resourceType": "Bundle", "id": f"dkg-{self.code}-{slug(self.s.version)}".lower()[:64],
                  "type": "collection",
                  "entry": [{"fullUrl": r["url"], "resource": r} for r in resources]}
        decisions = {b.uid: decision_define(b) for b in self.cql.decisions}
        return Export(self.s.code, bundle, cql, library_name(self.s.code), self.cql.units(), decisions)


def _computable(text: str) -> str:
    """A name that satisfies the shareable-artifact rule: starts upper-case, letters, digits and '_'."""
    core = "".join(ch if ch.isascii() and ch.isalnum() else "_" for ch in text)
    core = "_".join(p for p in core.split("_") if p)
    return ("DKG_" + core)[:254]


def _page_key(page: str) -> tuple[str, int, str]:
    head, _, num = page.rpartition("-")
    return (head, int(num), page) if num.isdigit() else (page, 0, page)


def build_export(state: VersionState, mapping: FhirMapping, types: dict[str, str | None]) -> Export:
    """The Bundle, CQL and define map for one guideline version."""
    return BundleBuilder(state, mapping, types).build()


def action_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, list[str]]:
    """PlanDefinition actions added, removed and changed between two Bundles of one guideline (by action id).

    An action changed when its own fields changed or the CQL of the define its condition names did (a new
    version that only moves a threshold changes the condition's logic, not the action's text).
    """

    def index(bundle: dict[str, Any]) -> dict[str, str]:
        version = bundle_version(bundle)
        logic: dict[str, str] = {}
        for e in bundle.get("entry", []):
            r = e["resource"]
            if r["resourceType"] == "Library":
                for c in r.get("content", []):
                    if c.get("contentType") == "text/cql":
                        logic.update(define_bodies(base64.b64decode(c["data"]).decode("utf-8")))
        out: dict[str, str] = {}
        for e in bundle.get("entry", []):
            r = e["resource"]
            if r["resourceType"] != "PlanDefinition":
                continue
            for a in walk_actions(r.get("action", [])):
                flat = {k: v for k, v in a.items() if k != "action"}
                flat["logic"] = [logic.get(str(c.get("expression", {}).get("expression")), "")
                                 for c in a.get("condition", [])]
                out[f"{r['id']}#{a['id']}"] = json.dumps(flat, sort_keys=True).replace(f"|{version}", "|")
        return out

    a, b = index(old), index(new)
    return {"added": sorted(set(b) - set(a)), "removed": sorted(set(a) - set(b)),
            "changed": sorted(k for k in set(a) & set(b) if a[k] != b[k])}


def bundle_version(bundle: dict[str, Any]) -> str:
    for e in bundle.get("entry", []):
        v = e["resource"].get("version")
        if v:
            return str(v)
    return ""
