"""Flow: a loaded guideline version → FHIR R4 Bundle (CPG PlanDefinitions, ActivityDefinitions, CQL Library),
validated offline (HAPI, CQL-to-ELM, CPG/reference checks)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from pydantic import BaseModel

from dkg.settings import load_settings
from tasks.common import rename_run
from tasks.fhir import export_task, validate_task


class FhirExportResult(BaseModel):
    guideline: str
    version: str
    bundle: str
    counts: dict[str, int]
    validation: str | None
    actions_changed: int | None


@flow(name="export-fhir", flow_run_name="export-fhir {code}")
def export_fhir(code: str, version: str | None = None, out_dir: str | None = None,
                validate: bool = True) -> FhirExportResult:
    """Export one guideline version (default: the current one) and validate it.

    Args:
        code: the guideline code.
        version: a loaded version (default: the current one).
        out_dir: folder for the Bundle (default: ``<state>/fhir/exports``).
        validate: run the validators (a failure fails the run).
    """
    folder = Path(out_dir) if out_dir else load_settings().state_path / "fhir" / "exports"
    done = export_task(code, version, folder)
    rename_run(f"export-fhir {code} {done['version']}", [f"guideline:{code}"])
    checked = validate_task(done["bundle"], done["cql"]) if validate else None
    diff = done["diff"]
    return FhirExportResult(guideline=code, version=done["version"], bundle=done["bundle"], counts=done["counts"],
                            validation=checked["summary"] if checked else None,
                            actions_changed=(len(diff["changed"]) + len(diff["added"]) + len(diff["removed"]))
                            if diff else None)


if __name__ == "__main__":
    import sys

    print(export_fhir(sys.argv[1]).model_dump_json(indent=1))
