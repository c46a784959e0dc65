"""Flow: one guideline source through every stage, each a subflow with its own retries in the UI.

ingest → extract constraints → GX gate → load/update the DKG → refresh and validate the QA dataset →
retrain the text-to-Cypher model (skipped when the dataset did not change; promoted only if not
worse) → refresh the web guideline's RAG index when the guideline has a web table of contents.
"""

from __future__ import annotations

from prefect import flow
from pydantic import BaseModel

from dkg.qa.build import QABuildResult
from flows.build_dkg import BuildResult, build_dkg
from flows.build_qa_dataset import build_qa_dataset
from flows.ingest_web_guideline import WebIngestResult, ingest_web_guideline
from flows.train_text2cypher import TrainReport, train_text2cypher


class PipelineResult(BaseModel):
    graph: BuildResult
    qa: QABuildResult | None
    model: TrainReport | None
    web: WebIngestResult | None


@flow(name="guideline-pipeline", flow_run_name="pipeline-{source}")
def guideline_pipeline(source: str, web_toc: str | None = None, qa: bool = True, retrain: bool = True,
                       model_size: str = "small") -> PipelineResult:
    """Run every stage for one guideline PDF (path or URL).

    Args:
        source: the guideline PDF.
        web_toc: the guideline's web table of contents, when it has one (its RAG index is refreshed).
        qa: refresh and validate the QA dataset after the graph changed.
        retrain: retrain the model when the dataset version changed.
        model_size: ``small`` or ``paper``.
    """
    graph = build_dkg(source)
    dataset = build_qa_dataset() if qa else None
    model = train_text2cypher(size=model_size) if qa and retrain else None
    web = ingest_web_guideline(web_toc) if web_toc else None
    return PipelineResult(graph=graph, qa=dataset, model=model, web=web)


if __name__ == "__main__":
    import sys

    print(guideline_pipeline(sys.argv[1]).model_dump_json(indent=1))
