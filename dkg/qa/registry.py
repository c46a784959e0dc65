"""Trained models on disk, versioned, and the one promoted for ``dkg ask``.

``<qa>/models/<run>/`` holds ``cypher/`` (the text-to-Cypher model), optionally ``baseline/``
(the answer-writing model), and ``run.json`` (metrics, dataset version, config, history).
``<qa>/models/promoted.json`` names the run ``dkg ask`` uses.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dkg.errors import ModelError
from dkg.settings import Settings
from dkg.storage import atomic_files


class Promotion(BaseModel):
    """Which run answers questions, and why."""

    run: str
    accuracy: float
    dataset_version: str
    promoted_at: float
    reason: str


def models_root(settings: Settings) -> Path:
    return settings.qa_path / "models"


def new_run_dir(settings: Settings, size: str) -> Path:
    d = models_root(settings) / f"{time.strftime('%Y%m%dT%H%M%S')}-{size}"
    d.mkdir(parents=True, exist_ok=False)
    return d


def write_run(run: Path, info: dict[str, Any]) -> None:
    with atomic_files([run / "run.json"]) as (tmp,):
        tmp.write_text(json.dumps(info, indent=1, default=str), encoding="utf-8")


def read_run(run: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((run / "run.json").read_text(encoding="utf-8")))
    except (OSError, ValueError) as e:
        raise ModelError(f"{run}: no readable run.json ({e})") from e


def promoted(settings: Settings) -> Promotion | None:
    path = models_root(settings) / "promoted.json"
    if not path.exists():
        return None
    try:
        return Promotion.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise ModelError(f"{path} is corrupt ({e})") from e


def promoted_model_dir(settings: Settings) -> Path:
    """The text-to-Cypher model ``dkg ask`` uses.

    Raises:
        ModelError: none promoted yet.
    """
    p = promoted(settings)
    if p is None:
        raise ModelError(f"no promoted model in {models_root(settings)} (run `dkg qa train` first)")
    return Path(p.run) / "cypher"


def decide(new_accuracy: float, current_accuracy: float | None, new_guidelines: Sequence[str] = (),
           known: tuple[int, int, int] | None = None) -> tuple[bool, str]:
    """Promote when there is no current model or the new one is not less accurate.

    When the dataset holds guidelines the promoted model was never trained on (``new_guidelines``), that model
    cannot have learnt their attributes, and the whole test split is no fair comparison. The new model is then
    compared on the test items of the guidelines both know: ``known`` = (items, new model correct, current model
    correct); it is promoted unless it is worse there by more than twice the standard error of the difference
    of two accuracies on those items (sampling noise, not a worse model).
    """
    if current_accuracy is None:
        return True, f"no model was promoted; new accuracy {new_accuracy:.4f}"
    if new_accuracy >= current_accuracy:
        return True, f"new accuracy {new_accuracy:.4f} >= current {current_accuracy:.4f} on the same test split"
    if new_guidelines and known is not None and known[0] > 0:
        n, a, b = known
        pa, pb = a / n, b / n
        noise = 2 * math.sqrt(max(pa * (1 - pa) + pb * (1 - pb), 1.0 / n) / n)
        covers = ", ".join(new_guidelines)
        if pa >= pb - noise:
            return True, (f"the promoted model was trained without {covers}; on the {n} test items of the guidelines "
                          f"both know: new {pa:.4f} vs current {pb:.4f} (within {noise:.4f})")
        return False, (f"kept the current model: on the {n} test items of the guidelines both know the new model is "
                       f"worse ({pa:.4f} < {pb:.4f} - {noise:.4f}), although it covers {covers}")
    return False, f"kept the current model: new accuracy {new_accuracy:.4f} < current {current_accuracy:.4f}"


def guidelines_of(dataset_version: str) -> set[str]:
    """The guideline codes of a dataset version ("ALL-2.2022+KID-2.2023.3f2a…" → {"ALL", "KID"})."""
    head = dataset_version.rsplit(".", 1)[0] if "+" in dataset_version or dataset_version.count(".") > 1 else \
        dataset_version
    return {part.split("-", 1)[0] for part in head.split("+") if part}


def promote(settings: Settings, run: Path, accuracy: float, dataset_version: str, reason: str) -> Promotion:
    p = Promotion(run=str(run), accuracy=accuracy, dataset_version=dataset_version, promoted_at=time.time(),
                  reason=reason)
    path = models_root(settings) / "promoted.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(p.model_dump_json(indent=1), encoding="utf-8")
    tmp.replace(path)
    return p
