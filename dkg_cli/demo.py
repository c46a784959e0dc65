"""`dkg demo`: the main job on the bundled sample guidelines."""

from __future__ import annotations

import os
import time
from pathlib import Path

import typer
from rich.table import Table

from dkg.settings import load_settings
from dkg_cli.app import app
from dkg_cli.env import configure_prefect
from dkg_cli.ingest import run_ingest
from dkg_cli.output import err, out, print_answer, service_table


def _samples() -> list[Path]:
    root = Path(os.environ.get("DKG_SAMPLES_DIR", Path(__file__).resolve().parents[1].parent / "shared/reference"))
    return sorted(root.glob("guidelines/*/*/*.pdf")) or sorted(root.glob("**/*.pdf"))


@app.command("demo")
def demo_cmd() -> None:
    """The main job on the bundled samples: start services, then run the pipeline flows."""
    settings = load_settings()
    configure_prefect(settings)
    t0 = time.monotonic()
    with err.status("starting services…") as spinner:
        from dkg.services import services_up

        statuses = services_up(settings, progress=lambda msg: spinner.update(msg))
    out.print(service_table(statuses))
    from flows.healthcheck import healthcheck

    report = healthcheck()
    out.print(f"health-check flow: {'[green]healthy[/]' if report.healthy else '[red]unhealthy[/]'}")
    if not report.healthy:
        raise typer.Exit(1)
    from flows.build_dkg import load_dkg
    from flows.extract_constraints import extract_constraints

    table = Table("guideline", "version", "pages", "boxes", "arrows", "edges", "GX gate", "graph",
                  "changed", "added", "removed")
    for pdf in _samples():
        res = run_ingest(str(pdf), settings.state_path / "runs" / "demo" / pdf.stem)
        ext = extract_constraints(res.edges_csv)  # type: ignore[attr-defined]
        built = load_dkg(ext.constraints_csv)
        table.add_row(str(res.guideline), str(res.version), str(res.pages),  # type: ignore[attr-defined]
                      str(res.boxes), str(res.arrows), str(res.edges),  # type: ignore[attr-defined]
                      f"{ext.expectations} passed", "loaded" if built.loaded else "unchanged",
                      str(built.changed), str(built.added), str(built.removed))
    out.print(table)
    _demo_questions()
    out.print("try: .venv/bin/dkg ask \"45 y/o with Ph-negative ALL in CR, MRD negative: next step?\" ; "
              ".venv/bin/dkg graph diff ALL 1.2022 2.2022 ; make ui")
    out.print(f"demo finished in {time.monotonic() - t0:.1f} s")
    out.print("next: make serve   → the clinician page and the HTTP API on http://127.0.0.1:8080/ (API docs: /docs)")


def _demo_questions() -> None:
    """The rest of the chain: QA dataset and model (skipped when up to date), then two test questions answered."""
    from dkg.qa import registry, store
    from dkg.qa.answer import Answerer
    from dkg.qa.model import Seq2Seq
    from flows.guideline_pipeline import refresh_qa_and_model

    with err.status("QA dataset and text-to-Cypher model (first run: a few minutes)…"):
        down = refresh_qa_and_model(with_baseline=False)
    qa, model = down.qa, down.model
    out.print(f"QA dataset {qa.dataset_version}: {qa.valid}/{qa.items} queries return their expected node"
              + (" (unchanged)" if qa.skipped else ""))
    if model is not None:
        acc = f", test accuracy {model.with_dkg.accuracy:.3f}" if model.with_dkg else ""
        out.print(f"model: {model.reason}{acc}")
    settings = load_settings()
    items = store.load(settings.qa_path / "current") or []
    picks = [next((i for i in items if i.split == "test" and i.type == t), None) for t in ("next_step", "advisable")]
    answerer = Answerer(settings, Seq2Seq(registry.promoted_model_dir(settings)))
    for item in (p for p in picks if p is not None):
        out.print(f"\nQ: {item.QUESTION}", highlight=False, markup=False)
        print_answer(answerer.ask(item.QUESTION).model_dump(mode="json", exclude={"question"}))

