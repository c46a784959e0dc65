"""Export a loaded guideline version to FHIR, write it, validate it, and diff it against the version before."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dkg.constraints.vocabulary import load_vocabulary
from dkg.errors import ExportError
from dkg.fhir import jvm
from dkg.fhir.checks import check_bundle
from dkg.fhir.export import Export, action_diff, build_export
from dkg.fhir.mapping import load_mapping
from dkg.graph.model import VersionState
from dkg.settings import Settings
from dkg.storage import atomic_files


def attribute_types() -> dict[str, str | None]:
    return {a: s.get("type") for a, s in load_vocabulary().attributes.items()}


def version_state(settings: Settings, code: str, version: str | None = None) -> VersionState:
    """The graph's current version of ``code``, or a version loaded before.

    Raises:
        ExportError: the guideline or version was never loaded.
    """
    from dkg.graph import loader

    state = loader.current_state(settings, code) if version is None else loader.snapshot(settings, code, version)
    if state is None:
        loaded = [str(v["version"]) for v in loader.versions(settings, code)]
        what = code if version is None else f"{code} {version}"
        raise ExportError(f"{what} is not loaded (loaded versions of {code}: {loaded or 'none'})")
    return state


def previous_version(settings: Settings, code: str, version: str) -> str | None:
    """The version loaded just before ``version`` (None when it is the first)."""
    from dkg.graph import loader

    names = [str(v["version"]) for v in loader.versions(settings, code)]
    names = list(dict.fromkeys(names))
    if version not in names:
        return None
    i = names.index(version)
    return names[i - 1] if i > 0 else None


def export(settings: Settings, code: str, version: str | None = None) -> Export:
    return build_export(version_state(settings, code, version), load_mapping(), attribute_types())


def file_stem(ex: Export) -> str:
    b = ex.bundle
    version = next(e["resource"]["version"] for e in b["entry"])
    def part(s: str) -> str:
        return "".join(ch if ch.isascii() and (ch.isalnum() or ch in ".-_") else "-" for ch in s).strip(".-")

    return f"{part(ex.code)}-{part(str(version))}"


def write(ex: Export, out_dir: Path) -> tuple[Path, Path]:
    """``<CODE>-<VERSION>.bundle.json`` and the library's ``.cql`` in ``cql/<CODE>-<VERSION>/`` (both or
    neither is written)."""
    stem = file_stem(ex)
    bundle = out_dir / f"{stem}.bundle.json"
    cql = out_dir / "cql" / stem / f"{ex.library_name}.cql"
    with atomic_files([bundle, cql]) as (tb, tc):
        tb.write_text(json.dumps(ex.bundle, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        tc.write_text(ex.cql, encoding="utf-8")
    return bundle, cql


@dataclass
class Validation:
    bundle: str
    seconds: float = 0.0
    hapi_version: str = ""
    translator_version: str = ""
    hapi_errors: list[str] = field(default_factory=list)
    hapi_warnings: int = 0
    resources_checked: int = 0
    cql_errors: list[str] = field(default_factory=list)
    cql_warnings: int = 0
    checks: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.hapi_errors or self.cql_errors or self.checks)

    def summary(self) -> str:
        return (f"{Path(self.bundle).name}: HAPI {self.hapi_version} {len(self.hapi_errors)} errors, "
                f"{self.hapi_warnings} warnings on {self.resources_checked} resources; CQL-to-ELM "
                f"{self.translator_version} {len(self.cql_errors)} errors; {len(self.checks)} profile/reference "
                f"problems ({self.seconds:.1f} s)")


def validate(settings: Settings, bundle: Path, cql: Path, *, hapi: bool = True) -> Validation:
    """Python checks, the CQL translator and (``hapi``) HAPI's validator on one exported Bundle."""
    t0 = time.monotonic()
    v = Validation(str(bundle))
    try:
        data = json.loads(bundle.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExportError(f"{bundle}: not a readable JSON Bundle ({exc})") from exc
    v.checks = check_bundle(data)
    tr = jvm.translate_cql(settings, [cql])
    v.translator_version = str(tr.get("translator", ""))
    for lib in tr.get("libraries", []):
        for e in lib.get("errors", []):
            line = f"{Path(lib.get('file', '')).name}:{e.get('line')}:{e.get('column')} {e.get('message')}"
            if e.get("severity") == "error":
                v.cql_errors.append(line)
            else:
                v.cql_warnings += 1
    if hapi:
        res = jvm.validate_fhir(settings, [bundle])
        v.hapi_version = str(res.get("validator", ""))
        for f in res.get("files", []):
            v.resources_checked += 1
            for i in f.get("issues", []):
                if i.get("severity") in ("error", "fatal"):
                    v.hapi_errors.append(f"{f.get('resource')} {i.get('location')}: {i.get('message')}")
                elif i.get("severity") == "warning":
                    v.hapi_warnings += 1
    v.seconds = time.monotonic() - t0
    return v


def diff_against_previous(settings: Settings, ex: Export, code: str, version: str) -> dict[str, Any] | None:
    """Which PlanDefinition actions the version added, removed or changed against the one before."""
    prev = previous_version(settings, code, version)
    if prev is None:
        return None
    old = build_export(version_state(settings, code, prev), load_mapping(), attribute_types())
    return {"from": prev, "to": version, **action_diff(old.bundle, ex.bundle)}
