"""The offline validators, each in its own JVM (HAPI FHIR and the CQL tooling clash on dependencies).

- ``FhirValidate``: HAPI FHIR's instance validator with the R4 structures and validation resources;
- ``CqlTool translate``: the CQL-to-ELM translator (FHIR 4.0.1 model info, FHIRHelpers 4.0.1), its error
  list read by us (its own command line exits 0 on failure);
- ``CqlTool evaluate``: the CQL engine with the R4 model resolver, on patients' resources in memory.

Jars come from Maven Central through a bundled POM (resolved once into the local Maven repository, as
the Neo4j launcher is); the launchers are compiled once into ``<state>/fhir``.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from dkg.errors import ExportError
from dkg.services import java
from dkg.settings import Settings

HAPI_VERSION = "8.8.0"
CQL_VERSION = "3.29.0"


def _tool(settings: Settings, pom: str, prop: str, version: str, source: str,
          props: tuple[str, ...] = ()) -> list[str]:
    java.java_major_version(settings.java_cmd)
    base = settings.state_path / "fhir"
    cp = java.resolve_classpath(settings.maven_cmd, pom, {prop: version}, base / f"maven-{pom.split('-')[0]}")
    classes = java.compile_launcher(settings.java_cmd, source, cp, base / "launcher")
    return [settings.java_cmd, "-Xmx1g", *props, "-cp", ":".join([str(classes), *map(str, cp)]),
            source.removesuffix(".java")]


def _run(cmd: list[str], out: Path, what: str, timeout_s: float) -> dict[str, Any]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=timeout_s)
    if proc.returncode != 0 or not out.exists():
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
        raise ExportError(f"{what} failed (exit {proc.returncode}): {tail[:800]}")
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def validate_fhir(settings: Settings, files: list[Path], timeout_s: float = 900) -> dict[str, Any]:
    """HAPI's issues for each file (and each Bundle entry): ``{"validator", "files": [{file, resource,
    issues, errors}]}``."""
    # The CPG profiles cannot be loaded offline: HAPI reports them as unknown (a warning with this setting)
    # and dkg.fhir.checks checks their rules instead.
    cmd = _tool(settings, "fhir-validator-pom.xml", "hapi.version", HAPI_VERSION, "FhirValidate.java",
                ("-Ddkg.fhir.errorForUnknownProfiles=false",))
    with tempfile.TemporaryDirectory(prefix="dkg-fhirval-") as tmp:
        out = Path(tmp) / "out.json"
        return _run([*cmd, str(out), *map(str, files)], out, "the HAPI FHIR validator", timeout_s)


def translate_cql(settings: Settings, libraries: list[Path], timeout_s: float = 600) -> dict[str, Any]:
    """The translator's errors per library (ELM JSON written beside each ``.cql``)."""
    cmd = _tool(settings, "cql-pom.xml", "cql.version", CQL_VERSION, "CqlTool.java")
    with tempfile.TemporaryDirectory(prefix="dkg-cql-") as tmp:
        out = Path(tmp) / "out.json"
        folder = libraries[0].parent if libraries else Path(tmp)
        return _run([*cmd, "translate", str(out), str(folder), *map(str, libraries)], out,
                    "the CQL-to-ELM translator", timeout_s)


def evaluate_cql(settings: Settings, library: Path, patients: list[dict[str, Any]], at: str,
                 defines: list[str] | None = None, timeout_s: float = 900) -> dict[str, dict[str, Any]]:
    """Each patient's define values: ``{patient id: {define: value}}`` (CQL engine, context Patient).

    ``patients`` are collection Bundles, one Patient each; ``at`` the evaluation date-time (ISO).
    """
    cmd = _tool(settings, "cql-pom.xml", "cql.version", CQL_VERSION, "CqlTool.java")
    with tempfile.TemporaryDirectory(prefix="dkg-cqleval-") as tmp:
        out = Path(tmp) / "out.json"
        pfile = Path(tmp) / "patients.json"
        pfile.write_text(json.dumps(patients), encoding="utf-8")
        data = _run([*cmd, "evaluate", str(out), str(library), str(pfile), at, *(defines or [])], out,
                    "the CQL engine", timeout_s)
        results: dict[str, dict[str, Any]] = data.get("results", {})
        return results
