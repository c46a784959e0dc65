"""Digests that say whether a deterministic step's inputs changed (file bytes, code, config).

The orchestration layer keys its caches on them, so a re-run of an unchanged guideline
does no work and a change to the code or the configuration invalidates what it produced.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@lru_cache(maxsize=64)
def code_digest(*parts: str) -> str:
    """A digest of the source of ``dkg`` sub-packages or modules (``"pdf"``, ``"qa/dataset.py"``)."""
    h = hashlib.sha256()
    for part in parts:
        target = PACKAGE / part
        files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        for f in files:
            h.update(str(f.relative_to(PACKAGE)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def digest(value: Any) -> str:
    """A stable digest of JSON-serialisable data."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]
