"""Where the QA dataset lives: JSONL + manifest in the state folder, and Hugging Face exports.

``<state>/qa/current/items.jsonl`` is the working copy; ``manifest.json`` beside it names the
guideline versions it was built from. Each build is also exported as a ``datasets.DatasetDict``
(train / validation / test) under ``<state>/qa/datasets/<dataset version>/``, the dataset version
being the guideline versions plus a hash of the items, so a model can name the data it saw.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from dkg.errors import DataValidationError
from dkg.qa.dataset import DatasetSummary, QAItem, summarize
from dkg.storage import atomic_dir, atomic_files


class Manifest(BaseModel):
    """What a saved dataset was built from."""

    dataset_version: str
    guideline_versions: dict[str, str]
    built_at: float
    summary: DatasetSummary
    export: str | None = None
    graph_fingerprint: str | None = None
    """Digest of the graph versions, generator code and configuration the dataset was checked against."""
    generator: str | None = None
    """Digest of the generator's code and configuration that wrote the items (a new generator: a fresh build)."""


def dataset_version(items: Sequence[QAItem]) -> str:
    """``ALL-2.2022+BONE-2.2023+KID-2.2023.<hash>``: the guideline versions and a content hash."""
    versions = sorted({(it.guideline, it.version) for it in items if it.guideline})
    h = hashlib.sha256()
    for it in sorted(items, key=lambda i: i.id):
        h.update(it.model_dump_json(exclude={"DKG_response"}).encode())
    tag = "+".join(f"{c}-{v}" for c, v in versions) or "empty"
    return re.sub(r"[^\w.+-]", "_", tag) + "." + h.hexdigest()[:10]


def save(items: Sequence[QAItem], folder: Path, graph_fingerprint: str | None = None,
         generator: str | None = None) -> Manifest:
    """Write the items and their manifest (atomically: a temp file, then a rename)."""
    manifest = Manifest(dataset_version=dataset_version(items),
                        guideline_versions={it.guideline: it.version for it in items if it.guideline},
                        built_at=time.time(), summary=summarize(items), graph_fingerprint=graph_fingerprint,
                        generator=generator)
    with atomic_files([folder / "items.jsonl", folder / "manifest.json"]) as (tmp_items, tmp_manifest):
        with open(tmp_items, "w", encoding="utf-8") as fh:
            for it in items:
                fh.write(it.model_dump_json() + "\n")
        tmp_manifest.write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    return manifest


def load(folder: Path) -> list[QAItem] | None:
    """The saved items, or None when there are none.

    Raises:
        DataValidationError: a line is not a valid item (names the file and line).
    """
    path = folder / "items.jsonl"
    if not path.exists():
        return None
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(QAItem.model_validate_json(line))
            except ValidationError as e:
                raise DataValidationError(f"{path}: line {n} is not a QA item: {e.errors()[0]['msg']}", None,
                                          None) from e
    return out


def load_manifest(folder: Path) -> Manifest | None:
    path = folder / "manifest.json"
    return Manifest.model_validate_json(path.read_text(encoding="utf-8")) if path.exists() else None


COLUMNS = ["id", "QUESTION", "ANSWER", "QUERY", "Expected_Node", "DKG_response", "type", "guideline", "version",
           "split", "template", "decision", "facts", "phrase", "advisable"]


def export_hf(items: Sequence[QAItem], root: Path, version: str) -> Path:
    """Save a ``datasets.DatasetDict`` (one split per ``split``) under ``root/version``."""
    from datasets import Dataset, DatasetDict, Features, Value, disable_progress_bars
    from datasets import Sequence as HFSequence

    disable_progress_bars()

    features = Features({c: Value("string") for c in COLUMNS if c not in ("Expected_Node", "DKG_response",
                                                                           "advisable")}
                        | {"Expected_Node": HFSequence(Value("string")), "DKG_response": HFSequence(Value("string")),
                           "advisable": Value("bool")})
    splits: dict[str, list[dict[str, Any]]] = {"train": [], "validation": [], "test": []}
    for it in items:
        d = it.model_dump()
        d["DKG_response"] = d["DKG_response"] or []
        splits[it.split].append({c: d[c] for c in COLUMNS})
    # an empty split still gets its columns (from_list of [] would carry none)
    dd = DatasetDict({k: Dataset.from_list(v, features=features) if v else
                      Dataset.from_dict({c: [] for c in features}, features=features) for k, v in splits.items()})
    target = root / version
    with atomic_dir(target) as tmp:
        dd.save_to_disk(str(tmp))
        (tmp / "dkg_manifest.json").write_text(json.dumps({"dataset_version": version, "items": len(items)}),
                                               encoding="utf-8")
    return target


def load_hf(path: Path) -> Any:
    """Load an exported DatasetDict."""
    from datasets import load_from_disk

    return load_from_disk(str(path))
