"""Patient attributes ↔ FHIR R4: which resource and code holds each fact (``conf/fhir.yaml``).

Standard codes (LOINC) where ``conf/fhir.yaml`` names one; every other attribute, including those a new
guideline taught the registry, gets a local code in ``<base>/CodeSystem/dkg-attribute`` and its values in
``<base>/CodeSystem/dkg-<attribute>``. The same table writes a patient's facts as resources (synthetic
patients, tests) and reads them back (CDS Hooks prefetch), so both directions agree by construction.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from dkg.errors import ConfigError
from dkg.yamlio import load_yaml

CONF = Path(__file__).resolve().parents[2] / "conf" / "fhir.yaml"
FINAL = ("final", "amended", "corrected")
ValueKind = Literal["age", "quantity", "code", "string"]


@dataclass(frozen=True)
class Coding:
    system: str
    code: str
    display: str

    def to_json(self) -> dict[str, str]:
        return {"system": self.system, "code": self.code, "display": self.display}


@dataclass(frozen=True)
class AttributeMap:
    """Where one attribute lives in FHIR."""

    attr: str
    value: ValueKind
    resource: Literal["Patient", "Observation"]
    codes: dict[str, Coding] = field(default_factory=dict)
    """Observation.code by unit ("" = any unit)."""
    value_system: str = ""
    """The code system of a categorical attribute's values."""

    @property
    def standard(self) -> bool:
        return any(not c.system.startswith("http://dkg") and "/CodeSystem/dkg-" not in c.system
                   for c in self.codes.values())

    def code_for(self, unit: str | None) -> Coding:
        """The Observation.code for a constraint or fact in ``unit`` (the attribute's default otherwise)."""
        if unit and unit in self.codes:
            return self.codes[unit]
        return self.codes.get("") or next(iter(self.codes.values()))

    def all_codes(self) -> list[Coding]:
        return list(dict.fromkeys(self.codes.values()))


def slug(text: str) -> str:
    """A FHIR-id-safe form: letters, digits and '-' only."""
    out = "".join(ch if ch.isalnum() and ch.isascii() else "-" for ch in text)
    return "-".join(p for p in out.split("-") if p)


@dataclass(frozen=True)
class FhirMapping:
    base: str
    table: dict[str, dict[str, Any]]
    condition_language: str = "text/cql"

    def attribute_system(self) -> str:
        return f"{self.base}/CodeSystem/dkg-attribute"

    def value_system(self, attr: str) -> str:
        return f"{self.base}/CodeSystem/dkg-{slug(attr.replace('_', '-')).lower()}"

    def for_attr(self, attr: str, vocab_type: str | None) -> AttributeMap:
        """The attribute's map: from the table, else a local code typed by the vocabulary."""
        spec = self.table.get(attr)
        local = Coding(self.attribute_system(), attr, attr.replace("_", " "))
        if spec is None:
            kind: ValueKind = {"number": "quantity", "category": "code"}.get(vocab_type or "", "string")  # type: ignore[assignment]
            return AttributeMap(attr, kind, "Observation", {"": local}, self.value_system(attr))
        if spec.get("resource") == "Patient":
            return AttributeMap(attr, "age", "Patient", {})
        codes: dict[str, Coding] = {}
        for unit, c in (spec.get("by_unit") or {}).items():
            codes[str(unit)] = Coding(str(c["system"]), str(c["code"]), str(c.get("display", "")))
        if spec.get("code"):
            c = spec["code"]
            codes[""] = Coding(str(c["system"]), str(c["code"]), str(c.get("display", "")))
        if not codes:
            codes[""] = local
        value = spec.get("value", "code")
        if value not in ("quantity", "code", "string"):
            raise ConfigError(f"{CONF}: attribute {attr!r} has value {value!r} (quantity, code or string)")
        return AttributeMap(attr, value, "Observation", codes, self.value_system(attr))

    # --- facts → resources ------------------------------------------------------------------
    def patient_resources(self, pid: str, facts: dict[str, Any], types: dict[str, str | None],
                          units: dict[str, str | None], at: dt.date) -> list[dict[str, Any]]:
        """A Patient and one final Observation per fact, as an EHR would hold them at date ``at``.

        ``age`` becomes a birth date that gives that whole number of years at ``at``.
        """
        patient: dict[str, Any] = {"resourceType": "Patient", "id": pid, "active": True,
                                   "name": [{"family": "Synthetic", "given": [pid]}]}
        out = [patient]
        for attr, value in sorted(facts.items()):
            if value is None:
                continue
            m = self.for_attr(attr, types.get(attr))
            if m.value == "age":
                years = int(float(value))
                born = _years_before(at, years) - dt.timedelta(days=30)
                patient["birthDate"] = born.isoformat()
                continue
            code = m.code_for(units.get(attr))
            obs: dict[str, Any] = {
                "resourceType": "Observation", "id": f"{pid}-{slug(attr)}"[:64], "status": "final",
                "code": {"coding": [code.to_json()], "text": code.display or attr},
                "subject": {"reference": f"Patient/{pid}"},
                "effectiveDateTime": (at - dt.timedelta(days=1)).isoformat(),
            }
            if m.value == "quantity":
                unit = units.get(attr) or ""
                obs["valueQuantity"] = {"value": value, **({"unit": unit} if unit else {})}
            elif m.value == "code":
                obs["valueCodeableConcept"] = {"coding": [{"system": m.value_system, "code": str(value),
                                                           "display": str(value).replace("_", " ")}]}
            else:
                obs["valueString"] = str(value)
            out.append(obs)
        return out

    # --- resources → facts ------------------------------------------------------------------
    def facts_from_resources(self, resources: list[dict[str, Any]], types: dict[str, str | None],
                             at: dt.date) -> dict[str, tuple[Any, str]]:
        """Facts read from a patient's resources: attribute → (value, the resource it came from).

        The latest final/amended/corrected Observation with the attribute's code counts; age is the whole
        years from ``Patient.birthDate`` to ``at``. Values of a categorical attribute are read from the
        attribute's value system (any system when the coding names none that is known).
        """
        out: dict[str, tuple[Any, str]] = {}
        patients = [r for r in resources if r.get("resourceType") == "Patient"]
        for p in patients[:1]:
            born = p.get("birthDate")
            if isinstance(born, str) and len(born) >= 4:
                try:
                    bd = dt.date.fromisoformat(born if len(born) == 10 else f"{born[:4]}-01-01")
                except ValueError:
                    bd = None
                if bd is not None:
                    years = at.year - bd.year - ((at.month, at.day) < (bd.month, bd.day))
                    out["age"] = (years, f"Patient/{p.get('id', '')}")
        observations = [r for r in resources if r.get("resourceType") == "Observation"
                        and r.get("status") in FINAL]
        for attr, vtype in types.items():
            m = self.for_attr(attr, vtype)
            if m.value == "age":
                continue
            wanted = {(c.system, c.code) for c in m.all_codes()}
            hits = [o for o in observations
                    if any((c.get("system"), c.get("code")) in wanted for c in o.get("code", {}).get("coding", []))]
            if not hits:
                continue
            latest = max(hits, key=lambda o: str(o.get("effectiveDateTime") or o.get("issued") or ""))
            value = _observation_value(latest, m)
            if value is not None:
                out[attr] = (value, f"Observation/{latest.get('id', '')}")
        return out


def _observation_value(obs: dict[str, Any], m: AttributeMap) -> Any:
    if m.value == "quantity":
        q = obs.get("valueQuantity") or {}
        v = q.get("value")
        return v if isinstance(v, int | float) and not isinstance(v, bool) else None
    if m.value == "code":
        codings = (obs.get("valueCodeableConcept") or {}).get("coding", [])
        own = [c for c in codings if c.get("system") == m.value_system]
        pick = (own or codings)[:1]
        return str(pick[0]["code"]) if pick and pick[0].get("code") else None
    v = obs.get("valueString")
    return v if isinstance(v, str) else None


def _years_before(at: dt.date, years: int) -> dt.date:
    try:
        return at.replace(year=at.year - years)
    except ValueError:  # 29 February
        return at.replace(year=at.year - years, day=28)


@lru_cache(maxsize=4)
def _read(path: Path, stamp: float) -> dict[str, Any]:
    data = load_yaml(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("attributes"), dict):
        raise ConfigError(f"{path}: expected 'base' and an 'attributes' mapping")
    return data


def load_mapping(path: Path = CONF) -> FhirMapping:
    """The attribute → FHIR table; ``DKG_FHIR_BASE`` overrides the canonical base URL.

    Raises:
        ConfigError: the file is missing or malformed.
    """
    try:
        stamp = path.stat().st_mtime
    except OSError as exc:
        raise ConfigError(f"FHIR mapping {path} is missing") from exc
    data = _read(path, stamp)
    base = os.environ.get("DKG_FHIR_BASE") or str(data.get("base") or "http://dkg.local/fhir")
    language = str(data.get("condition_language") or "text/cql")
    if language not in ("text/cql", "text/cql-identifier"):
        raise ConfigError(f"{path}: condition_language {language!r} (text/cql or text/cql-identifier)")
    return FhirMapping(base.rstrip("/"), dict(data["attributes"]), language)
