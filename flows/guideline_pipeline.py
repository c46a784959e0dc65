"""Flow: one guideline source through every stage, each a subflow with its own retries in the UI.

ingest → extract constraints → GX gate → load/update the DKG (build-dkg) → refresh and validate the
QA dataset → retrain the text-to-Cypher model (skipped when the dataset did not change; promoted only
if not worse) → refresh the web guideline's RAG index when the guideline has a web table of contents → export the
version as a FHIR Bundle (export-fhir).
Every stage is safe to re-run: an unchanged PDF is not parsed or loaded again, an unchanged graph
does not re-validate the dataset, an unchanged dataset does not retrain.
"""

from __future__ import annotations

from prefect import flow
from pydantic import BaseModel

from dkg.qa.build import QABuildResult
from flows.build_dkg import BuildResult, build_dkg
from flows.build_qa_dataset import build_qa_dataset
from flows.export_fhir import FhirExportResult, export_fhir
from flows.ingest_guideline import source_label
from flows.ingest_web_guideline import WebIngestResult, ingest_web_guideline
from flows.train_text2cypher import TrainReport, train_text2cypher
from tasks.common import rename_run


class DownstreamResult(BaseModel):
    """The QA dataset and the model after the graph changed."""

    qa: QABuildResult
    model: TrainReport | None


class PipelineResult(BaseModel):
    graph: BuildResult
    qa: QABuildResult | None
    model: TrainReport | None
    web: WebIngestResult | None
    fhir: FhirExportResult | None = None


@flow(name="refresh-qa-and-model", flow_run_name="refresh-qa-and-model")
def refresh_qa_and_model(retrain: bool = True, model_size: str = "small", with_baseline: bool = True,
                         epochs: int | None = None, max_train_items: int | None = None,
                         training_data: str = "fresh") -> DownstreamResult:
    """After the graph changed: bring the QA dataset up to date, then retrain when its version changed.

    Args:
        retrain: retrain the text-to-Cypher model when the dataset version changed.
        model_size: ``small`` or ``paper`` (conf/model.yaml).
        with_baseline: also train the no-DKG baseline (Table 2, column b).
        epochs: override the size's number of epochs.
        max_train_items: train on a sample of this many items.
        training_data: ``fresh`` (a new generation from the graph) or ``maintained`` (the dataset just
            brought up to date; no second generation), see train-text2cypher.
    """
    dataset = build_qa_dataset()
    model = train_text2cypher(size=model_size, with_baseline=with_baseline, epochs=epochs,
                              max_train_items=max_train_items, training_data=training_data) if retrain else None
    return DownstreamResult(qa=dataset, model=model)


def _pipeline_run_name() -> str:
    from prefect.runtime import flow_run

    return f"pipeline {source_label(str(flow_run.parameters.get('source', '')))}"


@flow(name="guideline-pipeline", flow_run_name=_pipeline_run_name)
def guideline_pipeline(source: str, web_toc: str | None = None, qa: bool = True, retrain: bool = True,
                       model_size: str = "small", with_baseline: bool = True, epochs: int | None = None,
                       max_train_items: int | None = None, force: bool = False,
                       training_data: str = "fresh", fhir: bool = True,
                       fhir_validate: bool = False) -> PipelineResult:
    """Run every stage for one guideline PDF (path or URL).

    Args:
        source: the guideline PDF.
        web_toc: the guideline's web table of contents, when it has one (its RAG index is refreshed).
        qa: refresh and validate the QA dataset after the graph changed.
        retrain: retrain the model when the dataset version changed.
        model_size: ``small`` or ``paper``.
        with_baseline: also train the no-DKG baseline.
        epochs: override the size's number of epochs.
        max_train_items: train on a sample of this many items.
        force: extract and load the PDF even when the graph already holds it.
        training_data: ``fresh`` or ``maintained``, see train-text2cypher.
        fhir: export the loaded version as a FHIR Bundle (export-fhir) after the load.
        fhir_validate: also run the offline validators on it (HAPI, CQL-to-ELM; two JVMs, about 20 s).
    """
    graph = build_dkg(source, force=force)
    rename_run(f"pipeline {graph.guideline} {graph.version}", [f"guideline:{graph.guideline}"])
    down = refresh_qa_and_model(retrain=retrain, model_size=model_size, with_baseline=with_baseline, epochs=epochs,
                                max_train_items=max_train_items, training_data=training_data) if qa else None
    web = ingest_web_guideline(web_toc) if web_toc else None
    exported = export_fhir(graph.guideline, validate=fhir_validate) if fhir and graph.guideline else None
    return PipelineResult(graph=graph, qa=down.qa if down else None, model=down.model if down else None, web=web,
                          fhir=exported)


if __name__ == "__main__":
    import sys

    print(guideline_pipeline(sys.argv[1]).model_dump_json(indent=1))
