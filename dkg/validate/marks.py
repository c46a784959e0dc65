"""The mark a passed gate leaves beside a CSV, and the check loaders make before reading one."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from dkg.errors import GraphLoadError

SUFFIX = ".validated.json"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mark_validated(csv_path: Path, suite: str) -> Path:
    """Record that the gate passed this exact file (by its hash), beside it."""
    mark = csv_path.with_name(csv_path.name + SUFFIX)
    mark.write_text(json.dumps({"sha256": _sha(csv_path), "suite": suite}), encoding="utf-8")
    return mark


def require_validated(csv_path: Path) -> None:
    """Refuse a CSV that the Great Expectations gate has not passed (or that changed since).

    Raises:
        GraphLoadError: missing file, no validation mark, or a file that differs from what was validated.
    """
    mark = csv_path.with_name(csv_path.name + SUFFIX)
    if not csv_path.exists():
        raise GraphLoadError(f"{csv_path}: no such file (was it quarantined by the GX gate?)")
    if not mark.exists():
        raise GraphLoadError(f"{csv_path}: not validated by the Great Expectations gate; run `dkg extract` first")
    if json.loads(mark.read_text(encoding="utf-8")).get("sha256") != _sha(csv_path):
        raise GraphLoadError(f"{csv_path}: changed after validation; validate it again before loading")
