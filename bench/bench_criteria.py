"""Open-vocabulary comparisons on the LCT corpus: held-out batches against the development part."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Row

LCT = Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "leaf-clinical-trials"
DEVELOPMENT = ["training", *(f"batch{i}" for i in range(1, 6))]
HELD_OUT = [f"batch{i}" for i in range(6, 11)]


def _score(folders: list[str]) -> tuple[dict[str, object], float]:
    from dkg.constraints.criteria_eval import evaluate_criteria

    with tempfile.TemporaryDirectory() as tmp:
        for f in folders:
            os.symlink(LCT / f, Path(tmp) / f)
        t0 = time.perf_counter()
        report = evaluate_criteria(Path(tmp))
        seconds = time.perf_counter() - t0
    return report.as_json(), seconds


def run() -> list[Row]:
    """value/operator and end-to-end F1 on batches 6-10 (not read while developing) vs. training + 1-5."""
    if not LCT.is_dir():
        print("LCT corpus not found; skipping", file=sys.stderr)
        return []
    dev, _ = _score(DEVELOPMENT)
    held, seconds = _score(HELD_OUT)
    print("LCT development:", json.dumps(dev), file=sys.stderr)
    print("LCT held out:   ", json.dumps(held), file=sys.stderr)
    rows = []
    for level in ("value_op", "end_to_end"):
        h, d = held[level], dev[level]
        assert isinstance(h, dict) and isinstance(d, dict)
        rows.append(Row(f"LCT 6-10 {level} F1", float(h["f1"]), "training + batches 1-5 F1", float(d["f1"]), ""))
    lines = held["lines"]
    assert isinstance(lines, int)
    rows.append(Row("LCT criterion lines/s", lines / seconds, "1 line per ms", 1000.0, "/s"))
    return rows
