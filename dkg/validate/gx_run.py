"""Run one GX Core 1.x suite on a pandas frame in a file-backed project, with Data Docs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd


def run_suite(gx_root: Path, source: str, asset_name: str, build_suite: Callable[[Any], Any], name: str,
              frame: pd.DataFrame, result_format: str) -> Any:
    """Validate ``frame`` with the suite ``build_suite(gx)`` returns (checkpoint ``<name>_checkpoint``, Data Docs
    updated); the validation result. The project lives in ``gx_root``; GX needs its context before a suite."""
    import great_expectations as gx  # slow import (5–7 s): only when validating
    from great_expectations.checkpoint.actions import UpdateDataDocsAction

    gx_root.mkdir(parents=True, exist_ok=True)
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="file", project_root_dir=str(gx_root))
    context.variables.progress_bars = ProgressBarsConfig(globally=False)  # logs, not terminal bars, in flow runs
    data = context.data_sources.add_or_update_pandas(name=source)
    asset = next((a for a in data.assets if a.name == asset_name), None) or data.add_dataframe_asset(name=asset_name)
    batch_def = next((b for b in asset.batch_definitions if b.name == "whole"), None) or \
        asset.add_batch_definition_whole_dataframe("whole")
    saved = context.suites.add_or_update(build_suite(gx))
    vdef = context.validation_definitions.add_or_update(gx.ValidationDefinition(name=name, data=batch_def,
                                                                                suite=saved))
    checkpoint = context.checkpoints.add_or_update(gx.Checkpoint(
        name=f"{name.removesuffix('_gate')}_checkpoint", validation_definitions=[vdef],
        actions=[UpdateDataDocsAction(name="update_data_docs")], result_format={"result_format": result_format}))
    run = checkpoint.run(batch_parameters={"dataframe": frame})
    return next(iter(run.run_results.values()))


def data_docs(gx_root: Path) -> str | None:
    """The Data Docs index of the project, when it was built."""
    docs = gx_root / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html"
    return str(docs) if docs.exists() else None
