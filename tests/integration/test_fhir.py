"""Every reference guideline version as FHIR, checked by the real offline validators (HAPI FHIR, the CQL-to-ELM
translator), the exported CQL run by the CQL engine against ``dkg match`` on Neo4j, and the CDS Hooks service
answering synthetic patients' requests the same way."""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient

from dkg.constraints.vocabulary import load_vocabulary
from dkg.fhir import jvm, run
from dkg.fhir.cql import define_bodies
from dkg.fhir.equivalence import EVAL_DATE, compare, patient_bundle, synthetic_patients
from dkg.fhir.mapping import load_mapping
from dkg.graph import loader
from dkg.settings import Settings
from tests.pdf_support import reference_pdfs

pytestmark = [pytest.mark.services, pytest.mark.slow]
CODES = ("ALL", "KID", "BONE")
PATIENTS = 250


@pytest.fixture(scope="module")
def graph(services: Settings, prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Both versions of each reference guideline loaded, version 2 current (built only where missing)."""
    from flows.build_dkg import build_dkg

    for pdf in sorted(reference_pdfs(), key=lambda p: (p.stem.split("-")[0], p.stem)):
        code, _, version = pdf.stem.partition("-")
        have = [str(v["version"]) for v in loader.versions(services, code)]
        current = next((str(g["version"]) for g in loader.guidelines(services) if g["code"] == code), None)
        if version in have and (version.startswith("1.") or current == version):
            continue
        build_dkg(str(pdf), str(tmp_path_factory.mktemp("build") / pdf.stem), force=True)
    return services


@pytest.fixture(scope="module")
def exported(graph: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    out = tmp_path_factory.mktemp("fhir")
    files: dict[str, Any] = {}
    for code in CODES:
        for v in dict.fromkeys(str(x["version"]) for x in loader.versions(graph, code)):
            ex = run.export(graph, code, v)
            files[f"{code} {v}"] = (ex, *run.write(ex, out))
    yield {"dir": out, "files": files}


def test_every_version_validates_with_hapi_and_the_cql_translator(graph: Settings, exported: dict[str, Any],
                                                                    tmp_path: Path) -> None:
    files = exported["files"]
    assert {k.split()[0] for k in files} == set(CODES) and len(files) >= 6
    for ex, bundle, _ in files.values():
        from dkg.fhir.checks import check_bundle

        assert check_bundle(json.loads(bundle.read_text())) == [], bundle
        assert ex.counts()["PlanDefinition"] >= 4 and ex.counts()["defines"] >= 15
    # a deliberately broken copy: the validator is not a no-op
    _ex0, bundle0, cql0 = next(iter(files.values()))
    broken = json.loads(bundle0.read_text())
    pd = next(e["resource"] for e in broken["entry"] if e["resource"]["resourceType"] == "PlanDefinition")
    del pd["status"]
    pd["action"][0]["selectionBehavior"] = "whichever"
    bad_bundle = tmp_path / "broken.bundle.json"
    bad_bundle.write_text(json.dumps(broken))
    report = jvm.validate_fhir(graph, [b for _, b, _ in files.values()] + [bad_bundle])
    assert report["validator"].endswith(jvm.HAPI_VERSION)
    by_file: dict[str, int] = {}
    for f in report["files"]:
        by_file[f["file"]] = by_file.get(f["file"], 0) + f["errors"]
    errors = {k: n for k, n in by_file.items() if n and k != str(bad_bundle)}
    assert errors == {}, [i for f in report["files"] for i in f["issues"] if i["severity"] in ("error", "fatal")][:5]
    assert by_file[str(bad_bundle)] >= 2
    # every library compiles; a broken one does not
    bad_cql = tmp_path / "bad" / cql0.name
    bad_cql.parent.mkdir()
    text = cql0.read_text().replace('"Age"', '"No such define"', 1)
    bad_cql.write_text(text.replace("AgeInYears()", "AgeInYears(", 1))
    tr = jvm.translate_cql(graph, [c for _, _, c in files.values()])
    assert [lib["error_count"] for lib in tr["libraries"]] == [0] * len(files), tr["libraries"]
    bad = jvm.translate_cql(graph, [bad_cql])
    assert bad["libraries"][0]["error_count"] > 0


def test_the_cql_engine_reaches_the_same_decisions_as_dkg_match(graph: Settings, exported: dict[str, Any]) -> None:
    vocab = load_vocabulary().attributes
    types = run.attribute_types()
    for code in CODES:
        ex = run.export(graph, code)
        state = run.version_state(graph, code)
        _, _, cql = exported["files"][f"{code} {state.version}"]
        facts = synthetic_patients(state, vocab, PATIENTS)
        bundles = [patient_bundle(f"p{i}", f, load_mapping(), types, ex.units) for i, f in enumerate(facts)]
        at = f"{EVAL_DATE.isoformat()}T00:00:00Z"
        results = jvm.evaluate_cql(graph, cql, bundles, at, list(ex.decisions.values()))

        def match(f: dict[str, Any], code: str = code) -> set[str]:
            return {str(r["decision"]) for r in loader.match_patient(graph, f, code)}

        agreement = compare(state, ex, facts, results, match)
        assert agreement.patients == PATIENTS and agreement.agree == PATIENTS, agreement.disagreements[:3]
        assert agreement.decisions_true >= PATIENTS  # the patients reach decisions, not only none
        # the comparison is not a no-op: one moved threshold in the library is found
        moved = cql.with_name("Moved.cql")
        text = cql.read_text()
        bodies = define_bodies(text)
        target = next(d for d in ex.decisions.values() if '"Age" ' in bodies[d])
        body_at = text.index(f'define "{target}":')
        body_end = text.index("\n\n", body_at)
        mutated = text[:body_at] + text[body_at:body_end].replace('"Age" ', '"Age" + 7 ', 1) + text[body_end:]
        moved.write_text(mutated)
        wrong = compare(state, ex, facts, jvm.evaluate_cql(graph, moved, bundles, at, [target]), match)
        assert wrong.agree < PATIENTS


CARD_SCHEMA = {  # CDS Hooks 2.0: the response and the Card's required fields and types
    "type": "object", "required": ["cards"],
    "properties": {"cards": {"type": "array", "items": {
        "type": "object", "required": ["summary", "indicator", "source"],
        "properties": {
            "uuid": {"type": "string"}, "summary": {"type": "string", "maxLength": 139},
            "detail": {"type": "string"}, "indicator": {"enum": ["info", "warning", "critical"]},
            "source": {"type": "object", "required": ["label"],
                       "properties": {"label": {"type": "string"}, "url": {"type": "string"},
                                      "topic": {"type": "object", "required": ["code"]}}},
            "suggestions": {"type": "array"}, "links": {"type": "array"}}}}}}
DISCOVERY_SCHEMA = {
    "type": "object", "required": ["services"],
    "properties": {"services": {"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["hook", "description", "id"],
        "properties": {"hook": {"type": "string"}, "id": {"type": "string"}, "title": {"type": "string"},
                       "description": {"type": "string"},
                       "prefetch": {"type": "object", "additionalProperties": {"type": "string"}}}}}}}


def _request(pid: str, resources: list[dict[str, Any]], hook_instance: str) -> dict[str, Any]:
    patient = resources[0]
    obs = [r for r in resources if r["resourceType"] == "Observation"]
    return {"hook": "patient-view", "hookInstance": hook_instance,
            "context": {"userId": "Practitioner/example", "patientId": pid},
            "prefetch": {"patient": patient,
                         "conditions": {"resourceType": "Bundle", "type": "searchset", "entry": []},
                         "observations": {"resourceType": "Bundle", "type": "searchset",
                                          "entry": [{"resource": o} for o in obs]}}}


def test_the_cds_hooks_service_gives_the_cards_dkg_match_gives(graph: Settings, tmp_path: Path) -> None:
    from dkg.serve.app import create_app
    from dkg.serve.engine import Engine

    # 600 requests as fast as the test client sends them: no per-client rate limit here
    fast = graph.model_copy(update={"serve_rate": 1e6, "serve_burst": 10**6})
    client = TestClient(create_app(fast, Engine(fast), start=False))
    disc = client.get("/cds-services")
    assert disc.status_code == 200
    jsonschema.validate(disc.json(), DISCOVERY_SCHEMA)
    service = disc.json()["services"][0]
    assert service["hook"] == "patient-view" and "{{context.patientId}}" in service["prefetch"]["patient"]
    assert "http://loinc.org|89247-1" in service["prefetch"]["observations"]

    mapping, types, vocab = load_mapping(), run.attribute_types(), load_vocabulary().attributes
    today = dt.date.today()
    sample: list[dict[str, Any]] = []
    for code in CODES:
        ex = run.export(graph, code)
        state = run.version_state(graph, code)
        facts = synthetic_patients(state, vocab, 200, seed=11)
        warned = 0
        for i, f in enumerate(facts):
            pid = f"{code.lower()}-{i}"
            res = mapping.patient_resources(pid, f, types, ex.units, today)
            sample += res if i == 0 else []
            r = client.post("/cds-services/dkg-next-step", json=_request(pid, res, f"hook-{pid}"))
            assert r.status_code == 200, r.text
            body = r.json()
            jsonschema.validate(body, CARD_SCHEMA)
            got = {c["source"]["topic"]["code"] for c in body["cards"]}
            want = {str(x["decision"]) for x in loader.match_patient(graph, f)}
            assert got == want, (f, got ^ want)
            for c in body["cards"]:
                assert c["source"]["label"].split(",")[0].endswith(tuple(g["version"] for g in
                                                                         loader.guidelines(graph)))
                assert "page" in c["source"]["label"] and "**Facts used:**" in c["detail"]
                warned += c["indicator"] == "warning"
        assert warned > 0  # some patients lack a fact the next choice needs
    # the resources the requests carried are valid FHIR R4 for HAPI
    sample_file = tmp_path / "patient.bundle.json"
    sample_file.write_text(json.dumps({"resourceType": "Bundle", "id": "sample", "type": "collection",
                                       "entry": [{"fullUrl": f"urn:uuid:00000000-0000-0000-0000-{i:012d}",
                                                  "resource": r} for i, r in enumerate(sample)]}))
    checked = jvm.validate_fhir(graph, [sample_file])
    assert sum(f["errors"] for f in checked["files"]) == 0, checked["files"][0]["issues"][:5]


def test_the_cds_hooks_service_refuses_what_it_cannot_answer(graph: Settings) -> None:
    from dkg.serve.app import create_app
    from dkg.serve.engine import Engine

    client = TestClient(create_app(graph, Engine(graph), start=False))
    base = {"hook": "patient-view", "hookInstance": "h1", "context": {"userId": "Practitioner/1", "patientId": "p1"}}
    r = client.post("/cds-services/dkg-next-step", json=base)
    assert r.status_code == 412 and "prefetch" in r.json()["detail"]
    assert client.post("/cds-services/dkg-next-step", json={**base, "hook": "order-select"}).status_code == 400
    assert client.post("/cds-services/other", json=base).status_code == 404
    bad = copy.deepcopy(base)
    bad["prefetch"] = {"patient": {"resourceType": "Patient", "id": "someone-else"}}
    assert client.post("/cds-services/dkg-next-step", json=bad).status_code == 400
    # a patient with nothing the guidelines ask about: no cards
    empty = {**base, "prefetch": {"patient": {"resourceType": "Patient", "id": "p1"}, "observations": None}}
    r = client.post("/cds-services/dkg-next-step", json=empty)
    assert r.status_code == 200 and r.json() == {"cards": []}


def test_the_export_fhir_flow_writes_validates_and_reports_what_changed(graph: Settings, tmp_path: Path) -> None:
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from dkg.errors import ExportError
    from flows.export_fhir import export_fhir

    result = export_fhir("KID", out_dir=str(tmp_path), validate=True)
    state = run.version_state(graph, "KID")
    assert result.version == state.version and Path(result.bundle).name == f"KID-{state.version}.bundle.json"
    assert result.validation is not None and " 0 errors" in result.validation
    assert result.counts["PlanDefinition"] >= 4 and result.actions_changed  # version 1 came before

    wanted = ["fhir-export-kid", "fhir-action-diff-kid", "fhir-validation"]

    async def artifacts() -> dict[str, Any]:
        # filtered by key: unfiltered, the API returns one page, and the session's other tests fill it
        async with get_client() as client:
            found = await client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=wanted)))
            return {a.key: a.data for a in found if a.key}

    found = asyncio.run(artifacts())
    assert "fhir-export-kid" in found and "fhir-action-diff-kid" in found and "fhir-validation" in found
    assert "PlanDefinition/dkg-kid" in str(found["fhir-export-kid"])
    # a version never loaded is a clear error, not a traceback in the run
    with pytest.raises(ExportError, match="not loaded"):
        export_fhir("KID", version="9.9999", out_dir=str(tmp_path), validate=False)
