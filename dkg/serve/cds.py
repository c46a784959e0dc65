"""A CDS Hooks 2.0 service over the graph: ``GET /cds-services`` and ``POST /cds-services/dkg-next-step``
(hook ``patient-view``).

The EHR sends the patient's Patient, Conditions and Observations as prefetch (templates in the discovery
answer; the attribute → FHIR table is ``conf/fhir.yaml``); the facts read from them go through the same
query as ``dkg match``, and each decision that holds becomes a card: the next box as the summary, the
guideline, version, page and box as the source, the facts used and the facts still missing in the detail,
``warning`` when a fact the next choice needs is missing. Without prefetch the service reads the FHIR
server the request names; without either it answers 412.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import httpx

from dkg.constraints.models import AnyOf, items_from_json
from dkg.constraints.vocabulary import load_vocabulary
from dkg.fhir.mapping import load_mapping
from dkg.graph.model import VersionState
from dkg.settings import Settings

SERVICE_ID = "dkg-next-step"
HOOK = "patient-view"
CARD_NS = uuid.UUID("6f1c1d8e-8a4e-4d53-9a57-3c0f4a2b1e77")


class CdsRequestError(Exception):
    """A request the service cannot answer; ``status`` is the HTTP status to give."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _types() -> dict[str, str | None]:
    return {a: s.get("type") for a, s in load_vocabulary().attributes.items()}


def discovery() -> dict[str, Any]:
    """The discovery document: one service, with prefetch templates for what the attributes need."""
    mapping = load_mapping()
    codes: list[str] = []
    for attr, t in sorted(_types().items()):
        m = mapping.for_attr(attr, t)
        codes += [f"{c.system}|{c.code}" for c in m.all_codes()]
    return {"services": [{
        "hook": HOOK, "id": SERVICE_ID, "title": "Guideline next step (dkg)",
        "description": "The next step the loaded clinical practice guidelines recommend for this patient, "
                       "from the decision knowledge graph, with the guideline, version, page and box it comes "
                       "from and the facts it used or still needs.",
        "prefetch": {
            "patient": "Patient/{{context.patientId}}",
            "conditions": "Condition?patient={{context.patientId}}",
            "observations": "Observation?patient={{context.patientId}}&code=" + ",".join(dict.fromkeys(codes)),
        },
        "usageRequirements": "Observations coded as in dkg's attribute table (docs/reference/fhir.md).",
    }]}


def _entries(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, dict):
        return []
    if value.get("resourceType") == "Bundle":
        return [e["resource"] for e in value.get("entry", []) or [] if isinstance(e, dict)
                and isinstance(e.get("resource"), dict)]
    return [value] if value.get("resourceType") else []


def _fetch(server: str, auth: dict[str, Any] | None, patient_id: str) -> dict[str, Any]:
    headers = {"Accept": "application/fhir+json"}
    if auth and auth.get("access_token"):
        headers["Authorization"] = f"Bearer {auth['access_token']}"
    base = server.rstrip("/")
    out: dict[str, Any] = {}
    try:
        with httpx.Client(timeout=10.0, headers=headers) as client:
            for key, path in (("patient", f"Patient/{patient_id}"), ("conditions", f"Condition?patient={patient_id}"),
                              ("observations", f"Observation?patient={patient_id}")):
                r = client.get(f"{base}/{path}")
                r.raise_for_status()
                out[key] = r.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise CdsRequestError(502, f"could not read the patient from fhirServer {base}: {exc}") from exc
    return out


def patient_resources(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The patient id and resources of a hook request (prefetch, else the FHIR server it names).

    Raises:
        CdsRequestError: not a patient-view request, no patient id, or no way to read the patient.
    """
    if body.get("hook") != HOOK:
        raise CdsRequestError(400, f"this service answers the {HOOK!r} hook, not {body.get('hook')!r}")
    if not body.get("hookInstance"):
        raise CdsRequestError(400, "hookInstance is required")
    ctx = body.get("context") or {}
    pid = ctx.get("patientId") if isinstance(ctx, dict) else None
    if not isinstance(pid, str) or not pid:
        raise CdsRequestError(400, "context.patientId is required")
    prefetch = body.get("prefetch")
    if not isinstance(prefetch, dict) or not isinstance(prefetch.get("patient"), dict):
        server = body.get("fhirServer")
        if not isinstance(server, str) or not server:
            raise CdsRequestError(412, "no prefetch with the patient and no fhirServer to read it from: send "
                                       "the prefetch of GET /cds-services, or fhirServer and fhirAuthorization")
        prefetch = _fetch(server, body.get("fhirAuthorization"), pid)
    resources = _entries(prefetch.get("patient"))
    if not resources or resources[0].get("resourceType") != "Patient":
        raise CdsRequestError(400, "prefetch.patient is not a Patient resource")
    if resources[0].get("id") not in (None, pid):
        raise CdsRequestError(400, f"prefetch.patient is Patient/{resources[0].get('id')}, context names {pid}")
    for key in ("conditions", "observations"):
        resources += _entries(prefetch.get(key))
    return pid, resources


def _attrs(constraints: str | None) -> set[str]:
    out: set[str] = set()
    for item in items_from_json(json.loads(constraints or "[]")):
        members = [c for alt in item.alternatives for c in alt] if isinstance(item, AnyOf) else [item]
        out |= {c.attr for c in members}
    return out


def cards_for(settings: Settings, body: dict[str, Any], today: dt.date | None = None) -> dict[str, Any]:
    """The CDS Hooks response for one request: a card per decision that holds for the patient."""
    from dkg.graph import loader

    _pid, resources = patient_resources(body)
    types = _types()
    mapping = load_mapping()
    found = mapping.facts_from_resources(resources, types, today or dt.date.today())
    facts = {a: v for a, (v, _) in found.items()}
    if not facts:
        return {"cards": []}
    rows = loader.match_patient(settings, facts)
    next_needs = _next_needs(settings, rows)
    names = {str(g["code"]): str(g.get("name") or g["code"]) for g in loader.guidelines(settings)}
    cards = []
    for r in rows:
        used = sorted(_attrs(r.get("constraints")))
        missing = sorted(a for a in next_needs.get(str(r["decision"]), set()) if a not in facts)
        nxt = r["next"]
        first = " ".join(str(nxt[0]["text"]).split()) if nxt else "(no next step)"
        summary = first if len(first) <= 139 else first[:138] + "…"
        lines = [f"**Applies:** {' '.join(str(r['condition']).split())} (page {r['page']})", "", "**Next:**"]
        lines += [f"- {' '.join(str(n['text']).split())} (page {n['page']})" for n in nxt]
        lines += ["", "**Facts used:** " + (", ".join(f"{a} = {facts[a]} ({found[a][1]})" for a in used if a in found)
                                          or "none")]
        if missing:
            lines.append("**Facts missing for the next choice:** " + ", ".join(missing))
        label = f"{names.get(str(r['guideline']), r['guideline'])} {r['version']}, page {r['page']}"
        cards.append({
            "uuid": str(uuid.uuid5(CARD_NS, f"{body.get('hookInstance')}|{r['decision']}")),
            "summary": summary,
            "detail": "\n".join(lines),
            "indicator": "warning" if missing else "info",
            "source": {"label": label[:200],
                       "topic": {"system": f"{mapping.base}/CodeSystem/dkg-box", "code": str(r["decision"]),
                                 "display": f"{r['guideline']} {r['version']} {r['page']} box {r['decision']}"}},
        })
    return {"cards": cards}


_STATES: dict[tuple[str, str, str], VersionState | None] = {}


def _state(settings: Settings, code: str, version: str) -> VersionState | None:
    """The guideline's current version (kept while it stays current: a new load has a new version name)."""
    from dkg.graph import loader

    key = (settings.bolt_uri, code, version)
    if key not in _STATES:
        if len(_STATES) > 256:
            _STATES.clear()
        _STATES[key] = loader.current_state(settings, code)
    return _STATES[key]


def _next_needs(settings: Settings, rows: list[dict[str, Any]]) -> dict[str, set[str]]:
    """For each matched decision, the attributes its next decisions (within two steps) constrain."""

    out: dict[str, set[str]] = {}
    states = {str(r["guideline"]): _state(settings, str(r["guideline"]), str(r["version"])) for r in rows}
    successors: dict[str, dict[str, list[str]]] = {}  # per guideline, built once per request
    for code, st in states.items():
        if st is not None:
            for e in st.edges:
                successors.setdefault(code, {}).setdefault(e.head, []).append(e.tail)
    for r in rows:
        st = states.get(str(r["guideline"]))
        if st is None:
            continue
        succ = successors.get(str(r["guideline"]), {})
        frontier = [str(n["uid"]) for n in r["next"]]
        need: set[str] = set()
        for _ in range(2):
            nxt: list[str] = []
            for uid in frontier:
                box = st.boxes.get(uid)
                if box is None:
                    continue
                if box.constraints != "[]":
                    need |= _attrs(box.constraints)
                else:
                    nxt += succ.get(uid, [])
            frontier = nxt
        out[str(r["decision"])] = need
    return out
