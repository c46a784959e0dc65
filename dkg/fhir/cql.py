"""A guideline version's decision constraints as one CQL library (FHIR 4.0.1, FHIRHelpers 4.0.1).

One ``define`` per patient fact the guideline uses (the latest final Observation's value, or the age from
the birth date) and one ``define "Box …"`` per decision: the conjunction of its typed constraints, an
OR-group as a disjunction. CQL's three-valued logic gives a decision on a fact that is not recorded the
value null, so a PlanDefinition condition on it is not met — the graph's rule (``dkg match``: a constraint
on a fact not given does not hold).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass

from dkg.constraints.models import AnyOf, Constraint, items_from_json
from dkg.errors import ExportError
from dkg.fhir.mapping import AttributeMap, FhirMapping, slug
from dkg.graph.model import BoxState, VersionState

FHIR_VERSION = "4.0.1"
CMP = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "=": "=", "!=": "!="}


def library_name(code: str) -> str:
    """A CQL/FHIR computable name: ``DKG_<CODE>`` (letters, digits and '_')."""
    core = re.sub(r"[^A-Za-z0-9]+", "_", code).strip("_") or "X"
    return f"DKG_{core.upper()}"


def decision_define(box: BoxState) -> str:
    """The define that says whether a decision box applies, named after its page and uid."""
    tail = box.uid.split(":", 1)[-1].replace("'", "p")
    return "Box " + re.sub(r"[^A-Za-z0-9 _.-]+", "-", tail.replace(":", " "))


@dataclass(frozen=True)
class FactDef:
    attr: str
    name: str
    amap: AttributeMap
    unit: str | None


def _literal_str(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _number(v: float | int) -> str:
    f = float(v)
    return str(int(f)) if f.is_integer() else repr(f)


class CqlBuilder:
    """Writes the library for one guideline version."""

    def __init__(self, state: VersionState, mapping: FhirMapping, types: dict[str, str | None]) -> None:
        self.state = state
        self.mapping = mapping
        self.types = types
        self.decisions = [b for b in sorted(state.boxes.values(), key=lambda b: b.uid) if b.constraints != "[]"]
        units: dict[str, Counter[str]] = {}
        for b in self.decisions:
            for c in _members(b):
                units.setdefault(c.attr, Counter())[c.unit or ""] += 1
        self.facts: dict[str, FactDef] = {}
        for attr in sorted(units):
            amap = mapping.for_attr(attr, types.get(attr))
            unit = units[attr].most_common(1)[0][0] or None
            name = "Age" if amap.value == "age" else f"Fact {attr}"
            self.facts[attr] = FactDef(attr, name, amap, unit)
        self.codes: dict[tuple[str, str], str] = {}  # (system, code) -> CQL code name
        self.systems: dict[str, str] = {}

    def units(self) -> dict[str, str | None]:
        """The unit each attribute is recorded in (its Observation code follows it)."""
        return {a: f.unit for a, f in self.facts.items()}

    def _system(self, url: str) -> str:
        if url not in self.systems:
            label = "LOINC" if url == "http://loinc.org" else "DKG " + url.rsplit("/", 1)[-1]
            self.systems[url] = label
        return self.systems[url]

    def _code(self, system: str, code: str, name: str) -> str:
        key = (system, code)
        if key not in self.codes:
            self._system(system)
            taken = set(self.codes.values())
            n, cand = 1, name
            while cand in taken:
                n += 1
                cand = f"{name} ({n})"
            self.codes[key] = cand
        return self.codes[key]

    def _value_code(self, f: FactDef, value: str) -> str:
        return self._code(f.amap.value_system, str(value), f"{f.attr} = {value}")

    def _constraint(self, c: Constraint) -> str:
        f = self.facts[c.attr]
        ref = f'"{f.name}"'
        if f.amap.value == "code":
            values = c.value if isinstance(c.value, list) else [c.value]
            eq = [f'{ref} ~ "{self._value_code(f, str(v))}"' for v in values]
            if c.op == "!=":  # '~' is false, not null, on a missing fact: say it is recorded
                return f"({ref} is not null and not ({' or '.join(eq)}))"
            if c.op not in ("=", "in"):
                raise ExportError(f"{self.state.code}: operator {c.op!r} on categorical {c.attr!r}")
            return eq[0] if len(eq) == 1 else "(" + " or ".join(eq) + ")"
        if f.amap.value == "string":
            values = c.value if isinstance(c.value, list) else [c.value]
            eq = [f"{ref} = {_literal_str(str(v))}" for v in values]
            if c.op == "!=":
                return f"not ({' or '.join(eq)})"
            return eq[0] if len(eq) == 1 else "(" + " or ".join(eq) + ")"
        if isinstance(c.value, (list, str)):
            raise ExportError(f"{self.state.code}: numeric {c.attr!r} compared with {c.value!r}")
        return f"{ref} {CMP[c.op]} {_number(c.value)}"

    def condition(self, box: BoxState) -> str:
        parts: list[str] = []
        for item in items_from_json(json.loads(box.constraints)):
            if isinstance(item, AnyOf):
                alts = [" and ".join(self._constraint(c) for c in alt) for alt in item.alternatives]
                parts.append("(" + " or ".join(f"({a})" if len(alt) > 1 else a
                                               for a, alt in zip(alts, item.alternatives, strict=True)) + ")")
            else:
                parts.append(self._constraint(item))
        return "\n  and ".join(parts)

    def _fact_define(self, f: FactDef) -> list[str]:
        if f.amap.value == "age":
            return [f'define "{f.name}":', "  AgeInYears()", ""]
        code = f.amap.code_for(f.unit)
        cname = self._code(code.system, code.code, f"{f.attr} observation")
        obs = f'"{f.name} observation"'
        cast = {"quantity": "FHIR.Quantity", "code": "FHIR.CodeableConcept", "string": "FHIR.string"}[f.amap.value]
        value = f"({obs}.value as {cast})" + (".value" if f.amap.value == "quantity" else "")
        return [
            f"// {f.attr}: the latest final Observation coded {code.system}|{code.code}",
            f"define {obs}:",
            f'  Last([Observation: "{cname}"] O',
            "    where O.status in {'final', 'amended', 'corrected'}",
            "    sort by (effective as FHIR.dateTime))",
            "",
            f'define "{f.name}":',
            f"  {value}",
            "",
        ]

    def build(self) -> str:
        """The library text."""
        body: list[str] = ["context Patient", ""]
        for f in self.facts.values():
            body += self._fact_define(f)
        for b in self.decisions:
            cond = self.condition(b)
            text = " ".join(b.textPlain.split())[:120].replace("*/", "* /")
            body += [f"/* {b.page}: {text} */", f'define "{decision_define(b)}":', f"  {cond}", ""]
        head = [
            f"library {library_name(self.state.code)} version {_literal_str(self.state.version)}",
            "",
            f"using FHIR version '{FHIR_VERSION}'",
            "",
            f"include FHIRHelpers version '{FHIR_VERSION}' called FHIRHelpers",
            "",
        ]
        head += [f'codesystem "{label}": {_literal_str(url)}'
                 for url, label in sorted(self.systems.items(), key=lambda kv: kv[1])]
        head.append("")
        labels = self.systems
        for (system, code), name in sorted(self.codes.items(), key=lambda kv: kv[1]):
            head.append(f'code "{name}": {_literal_str(code)} from "{labels[system]}"')
        head.append("")
        return "\n".join(head + body).rstrip() + "\n"


def _members(box: BoxState) -> list[Constraint]:
    out: list[Constraint] = []
    for item in items_from_json(json.loads(box.constraints)):
        out += [c for alt in item.alternatives for c in alt] if isinstance(item, AnyOf) else [item]
    return out


def define_names(cql: str) -> set[str]:
    """Every ``define "…"`` (or unquoted define) in a library text."""
    return {m.group(1) or m.group(2) for m in re.finditer(r'^define\s+(?:"([^"]+)"|([A-Za-z_]\w*))\s*:',
                                                          cql, re.MULTILINE)}


def define_bodies(cql: str) -> dict[str, str]:
    """Each define's expression text (whitespace collapsed), by name."""
    out: dict[str, str] = {}
    parts = re.split(r'^define\s+(?:"([^"]+)"|([A-Za-z_]\w*))\s*:', cql, flags=re.MULTILINE)
    for i in range(1, len(parts) - 2, 3):
        name = parts[i] or parts[i + 1]
        body = re.sub(r"/\*.*?\*/|//[^\n]*", " ", parts[i + 2], flags=re.DOTALL)
        out[name] = " ".join(body.split())
    return out


__all__ = ["FHIR_VERSION", "CqlBuilder", "decision_define", "define_bodies", "define_names", "library_name", "slug"]
