"""The GX Core 1.x suite for constraint CSVs, quarantine of failures, and Data Docs.

Checks that need more than one column or a JSON walk are computed as helper columns
(prefixed ``_gx_``) on the frame that GX validates; each still is one named expectation in the
suite, with its failing rows in the result.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from dkg.constraints.vocabulary import Vocabulary
from dkg.errors import DataValidationError
from dkg.validate.gx_run import data_docs, run_suite
from dkg.validate.marks import mark_validated

SUITE = "constraint_csv"
REQUIRED = ["head", "head_constraints", "tail", "tail_constraints", "head_id", "tail_id", "kind",
            "head_page", "tail_page", "head_kind", "tail_kind"]


class GateReport(BaseModel):
    """Outcome of one validation run."""

    success: bool
    csv: str
    rows: int
    evaluated: int
    failed: list[str]
    result_json: str
    data_docs: str | None
    quarantined: str | None = None


def _walk(items: Any) -> Iterator[dict[str, Any]]:
    for i in items if isinstance(items, list) else []:
        if isinstance(i, dict) and "any_of" in i:
            for alt in i["any_of"]:
                yield from _walk(alt if isinstance(alt, list) else [alt])
        elif isinstance(i, dict):
            yield i
        else:
            yield {"attr": None}


def _parse(cell: str) -> Any:
    try:
        return json.loads(cell) if isinstance(cell, str) and cell.strip() else None
    except ValueError:
        return None


def helper_columns(df: pd.DataFrame, vocab: Vocabulary) -> pd.DataFrame:
    """Per-row facts for the suite: known attributes/operators, values in range, decisions constrained."""
    out = df.copy()
    known_attrs = set(vocab.attributes)
    known_ops = set(vocab.operators)

    def ok_vocab(cell: str) -> bool:
        items = _parse(cell)
        if not isinstance(items, list):
            return False
        for c in _walk(items):
            if c.get("attr") not in known_attrs or c.get("op") not in known_ops:
                return False
            allowed = vocab.allowed_values(str(c["attr"]))
            raw = c.get("value")
            values = raw if isinstance(raw, list) else [raw]
            if allowed is not None and not all(str(v) in allowed for v in values):
                return False
        return True

    def ok_range(cell: str) -> bool:
        for c in _walk(_parse(cell) or []):
            spec = vocab.attributes.get(str(c.get("attr")), {})
            if spec.get("type") == "number":
                v = c.get("value")
                lo, hi = spec.get("min", float("-inf")), spec.get("max", float("inf"))
                if not isinstance(v, int | float) or not lo <= v <= hi:
                    return False
        return True

    def unknown(cell: str) -> str:
        return ", ".join(sorted({str(c.get("attr")) for c in _walk(_parse(cell) or [])} - known_attrs))

    def consistent(cell: str) -> bool:
        """No attribute bounded to an empty range by the AND of a box's constraints."""
        bounds: dict[str, tuple[float, float]] = {}
        for c in _parse(cell) or []:
            if not isinstance(c, dict) or "any_of" in c or not isinstance(c.get("value"), int | float):
                continue
            v = float(c["value"])
            lo, hi = {"<": (float("-inf"), v - 1e-9), "<=": (float("-inf"), v), ">": (v + 1e-9, float("inf")),
                      ">=": (v, float("inf")), "=": (v, v)}.get(str(c.get("op")), (float("-inf"), float("inf")))
            old = bounds.get(str(c.get("attr")), (float("-inf"), float("inf")))
            bounds[str(c.get("attr"))] = (max(old[0], lo), min(old[1], hi))
        return all(lo <= hi for lo, hi in bounds.values())

    for side in ("head", "tail"):
        col = out.get(f"{side}_constraints", pd.Series([""] * len(out)))
        out[f"_gx_{side}_vocabulary_ok"] = col.map(ok_vocab)
        out[f"_gx_{side}_values_in_range"] = col.map(ok_range)
        out[f"_gx_{side}_unknown_attributes"] = col.map(unknown)
        out[f"_gx_{side}_ranges_consistent"] = col.map(consistent)
    tail_c = out.get("tail_constraints", pd.Series([""] * len(out)))
    kinds = out.get("tail_kind", pd.Series([""] * len(out)))
    out["_gx_decision_constrained"] = [
        not (k == "decision" and not (_parse(c) or [])) for k, c in zip(kinds, tail_c, strict=True)
    ]
    return out


def build_suite(gx: Any, expected_rows: tuple[int, int] | None) -> Any:
    """The expectation suite for constraint CSVs."""
    e = gx.expectations
    suite = gx.ExpectationSuite(name=SUITE)
    suite.add_expectation(e.ExpectTableColumnsToMatchSet(column_set=REQUIRED, exact_match=False))
    for col in ("head", "tail", "head_id", "tail_id"):
        suite.add_expectation(e.ExpectColumnValuesToNotBeNull(column=col))
        suite.add_expectation(e.ExpectColumnValueLengthsToBeBetween(column=col, min_value=1))
    for side in ("head", "tail"):
        suite.add_expectation(e.ExpectColumnValuesToBeJsonParseable(column=f"{side}_constraints"))
        suite.add_expectation(e.ExpectColumnValuesToBeInSet(column=f"_gx_{side}_vocabulary_ok", value_set=[True]))
        suite.add_expectation(e.ExpectColumnValuesToBeInSet(column=f"_gx_{side}_values_in_range", value_set=[True]))
        # attributes the registry has not approved (new ones wait for a data engineer), by name
        suite.add_expectation(e.ExpectColumnValuesToBeInSet(column=f"_gx_{side}_unknown_attributes", value_set=[""]))
        suite.add_expectation(e.ExpectColumnValuesToBeInSet(column=f"_gx_{side}_ranges_consistent", value_set=[True]))
    suite.add_expectation(e.ExpectColumnValuesToBeInSet(column="kind", value_set=["arrow", "page_link"]))
    suite.add_expectation(e.ExpectCompoundColumnsToBeUnique(column_list=["head_id", "tail_id", "kind"]))
    suite.add_expectation(e.ExpectColumnValuesToBeInSet(column="_gx_decision_constrained", value_set=[True]))
    lo, hi = expected_rows if expected_rows else (1, None)
    suite.add_expectation(e.ExpectTableRowCountToBeBetween(min_value=lo, max_value=hi))
    return suite


def _describe(result: Any, df: pd.DataFrame) -> list[str]:
    lines = []
    for r in result.results:
        if r.success:
            continue
        cfg = r.expectation_config
        kwargs = {k: v for k, v in cfg.kwargs.items() if k in ("column", "column_list", "min_value", "max_value")}
        res = r.result or {}
        idx = list(res.get("unexpected_index_list") or [])[:3]
        rows = []
        for i in idx:
            k = i if isinstance(i, int) else None
            if k is not None and k in df.index:
                head, tail = str(df.loc[k].get("head", ""))[:40], str(df.loc[k].get("tail", ""))[:40]
                page = str(df.loc[k].get("tail_page", "") or "")
                where = f" (page {page}, box {df.loc[k].get('tail_id', '')})" if page else ""
                rows.append(f"row {k + 2}{where}: {head!r} → {tail!r}")
        detail = f" first failing rows: {'; '.join(rows)}" if rows else ""
        if str(kwargs.get("column", "")).endswith("_unknown_attributes"):
            names = sorted({n for v in res.get("partial_unexpected_list") or [] for n in str(v).split(", ") if n})
            detail = f" attributes not approved in the registry: {', '.join(names)};" + detail
        observed = f" (observed {res['observed_value']})" if "observed_value" in res else ""
        lines.append(f"{cfg.type} {kwargs}{observed}{detail}")
    return lines


def validate_constraint_csv(csv_path: Path, run_dir: Path, vocab: Vocabulary, quarantine_dir: Path,
                            expected_rows: tuple[int, int] | None = None) -> GateReport:
    """Validate a constraint CSV with GX; on failure quarantine it and raise.

    Args:
        csv_path: the constraint CSV.
        run_dir: run folder; the GX project (and its Data Docs) lives in ``run_dir/gx``.
        vocab: the vocabulary the attributes, operators and ranges come from.
        quarantine_dir: where a failing CSV is moved, with its validation result.
        expected_rows: inclusive row-count range for this document (e.g. around the edge count).

    Raises:
        DataValidationError: the CSV is unreadable or fails the suite (message names the failed
            expectations and the first failing rows); the file is quarantined.
    """
    try:
        df = pd.read_csv(csv_path, dtype=str, keep_default_na=False, encoding="utf-8")
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.EmptyDataError) as e:
        quarantined = _quarantine(csv_path, quarantine_dir, {"error": str(e)})
        raise DataValidationError(f"{csv_path}: unreadable CSV ({type(e).__name__}: {e}); quarantined to "
                                  f"{quarantined}", None, str(quarantined)) from e
    frame = helper_columns(df, vocab)
    gx_root = run_dir / "gx"
    result = run_suite(gx_root, "dkg", "constraints", lambda gx: build_suite(gx, expected_rows),
                       "constraint_csv_gate", frame, "COMPLETE")
    result_path = run_dir / "validation_result.json"
    result_dict: dict[str, Any] = result.to_json_dict()
    result_path.write_text(json.dumps(result_dict, indent=1, default=str), encoding="utf-8")
    failed = _describe(result, df)
    stats = result.statistics
    report = GateReport(success=bool(result.success), csv=str(csv_path), rows=len(df),
                        evaluated=int(stats.get("evaluated_expectations", 0)), failed=failed,
                        result_json=str(result_path), data_docs=data_docs(gx_root))
    if not result.success:
        quarantined = _quarantine(csv_path, quarantine_dir, result_dict)
        raise DataValidationError(
            f"{csv_path}: failed {len(failed)} expectation(s) of suite {SUITE!r}; quarantined to {quarantined}: "
            + " | ".join(failed), str(result_path), str(quarantined))
    mark_validated(csv_path, SUITE)
    return report


def _quarantine(csv_path: Path, quarantine_dir: Path, result: dict[str, Any]) -> Path:
    target = quarantine_dir / f"{csv_path.stem}-{time.strftime('%Y%m%dT%H%M%S')}-{time.monotonic_ns() % 10**6}"
    target.mkdir(parents=True, exist_ok=True)
    if csv_path.exists():
        shutil.move(str(csv_path), target / csv_path.name)
    (target / "validation_result.json").write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    return target
