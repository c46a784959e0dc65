"""Same answers from both formalisms: synthetic patients, their facts as FHIR resources, the exported CQL
evaluated by the CQL engine, against the decisions ``dkg match`` finds in Neo4j for the same facts."""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dkg.constraints.models import AnyOf, Constraint, items_from_json
from dkg.fhir.export import Export
from dkg.fhir.mapping import FhirMapping
from dkg.graph.model import VersionState

EVAL_DATE = dt.date(2026, 1, 1)


def _values_for(attr: str, state: VersionState, vocab: dict[str, dict[str, Any]]) -> list[Any]:
    """Values worth trying for ``attr``: every value or bound a constraint names, the numbers beside each
    bound, and the vocabulary's other values."""
    spec = vocab.get(attr, {})
    named: list[Any] = []
    for b in state.boxes.values():
        for c in _members(b.constraints):
            if c.attr != attr:
                continue
            vals = c.value if isinstance(c.value, list) else [c.value]
            for v in vals:
                if isinstance(v, int | float) and not isinstance(v, bool):
                    named += [v - 1, v, v + 1]
                else:
                    named.append(str(v))
    if spec.get("type") == "number":
        lo, hi = spec.get("min", 0), spec.get("max", 100)
        nums = sorted({int(v) for v in named if isinstance(v, int | float) and lo <= v <= hi})
        return nums or [lo, hi]
    return sorted(set(named) | {str(v) for v in spec.get("values", [])})


def _members(constraints: str) -> list[Constraint]:
    out: list[Constraint] = []
    for item in items_from_json(json.loads(constraints)):
        out += [c for alt in item.alternatives for c in alt] if isinstance(item, AnyOf) else [item]
    return out


def _satisfy(c: Constraint) -> Any:
    v = c.value
    if isinstance(v, list):
        return str(v[0])
    if isinstance(v, str):
        return v
    return {"<": v - 1, "<=": v, ">": v + 1, ">=": v, "=": v}.get(c.op, v)


def synthetic_patients(state: VersionState, vocab: dict[str, dict[str, Any]], n: int,
                       seed: int = 7) -> list[dict[str, Any]]:
    """``n`` patients' facts over the attributes the guideline's decisions use: half start from one
    decision's constraints made true, then every attribute is drawn from the values worth trying or left
    out (missing facts are part of the test)."""
    rng = random.Random(f"{state.code}|{state.version}|{seed}")
    decisions = [b for b in sorted(state.boxes.values(), key=lambda b: b.uid) if b.constraints != "[]"]
    attrs = sorted({c.attr for b in decisions for c in _members(b.constraints)})
    choices = {a: _values_for(a, state, vocab) for a in attrs}
    out: list[dict[str, Any]] = []
    for i in range(n):
        facts: dict[str, Any] = {}
        for a in attrs:
            if rng.random() < 0.8 and choices[a]:
                facts[a] = rng.choice(choices[a])
        if i % 2 == 0 and decisions:
            box = rng.choice(decisions)
            for item in items_from_json(json.loads(box.constraints)):
                members = list(rng.choice(item.alternatives)) if isinstance(item, AnyOf) else [item]
                for c in members:
                    facts[c.attr] = _satisfy(c)
        out.append(facts)
    return out


def patient_bundle(pid: str, facts: dict[str, Any], mapping: FhirMapping, types: dict[str, str | None],
                   units: dict[str, str | None], at: dt.date = EVAL_DATE) -> dict[str, Any]:
    """A collection Bundle of one patient's resources."""
    res = mapping.patient_resources(pid, facts, types, units, at)
    return {"resourceType": "Bundle", "id": f"{pid}-record", "type": "collection",
            "entry": [{"fullUrl": f"urn:uuid:{pid}-{i}", "resource": r} for i, r in enumerate(res)]}


@dataclass
class Agreement:
    code: str
    version: str
    patients: int = 0
    agree: int = 0
    decisions_true: int = 0
    disagreements: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.agree / self.patients if self.patients else 0.0


def compare(state: VersionState, export: Export, facts: list[dict[str, Any]],
            cql_results: dict[str, dict[str, Any]],
            match: Callable[[dict[str, Any]], set[str]]) -> Agreement:
    """Decisions true in CQL against decisions ``match`` (``dkg match`` on the graph) finds, per patient."""
    by_define = {d: uid for uid, d in export.decisions.items()}
    out = Agreement(state.code, state.version)
    for i, f in enumerate(facts):
        pid = f"p{i}"
        values = cql_results.get(pid, {"__error__": "no result"})
        if "__error__" in values:
            out.patients += 1
            out.disagreements.append({"patient": pid, "facts": f, "error": values["__error__"]})
            continue
        cql_true = {by_define[d] for d, v in values.items() if d in by_define and v is True}
        graph_true = match(f)
        out.patients += 1
        out.decisions_true += len(cql_true)
        if cql_true == graph_true:
            out.agree += 1
        else:
            out.disagreements.append({"patient": pid, "facts": f, "cql_only": sorted(cql_true - graph_true),
                                      "graph_only": sorted(graph_true - cql_true)})
    return out
