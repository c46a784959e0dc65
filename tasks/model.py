"""Model tasks: examples from the saved DatasetDict, training with per-epoch logs, evaluation, promotion."""

from __future__ import annotations

from pathlib import Path

from prefect import get_run_logger, task
from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact

from dkg.errors import ModelError
from dkg.graph.loader import current_states
from dkg.qa import registry
from dkg.qa.answer import Answerer
from dkg.qa.dataset import QAItem
from dkg.qa.evaluate import EvalRecord, Metrics, evaluate_baseline, evaluate_dkg, table
from dkg.qa.facts import Linker, linker_for
from dkg.qa.model import EpochLog, Seq2Seq, Target, TrainResult, load_size, train
from dkg.qa.training import curves_svg, examples, items_from_export
from dkg.settings import load_settings
from tasks.common import retry_transient


@task(name="read-dataset-splits")
def splits_task(export: str) -> dict[str, list[QAItem]]:
    """train / validation / test items from the saved DatasetDict."""
    return items_from_export(Path(export))


@task(name="fresh-training-splits", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=retry_transient)
def fresh_splits_task() -> dict[str, list[QAItem]]:
    """train / validation / test items of a fresh generation from the current graph.

    The maintained dataset (kept valid across guideline versions by regenerating stale items) is what
    clinicians' questions are checked against; a model trained on it did worse than one trained on a
    fresh generation of the same graph (42/55 against 55/55 hand-written questions), so training uses
    a fresh generation.
    """
    from dkg.qa.build import generate, graph_views

    out: dict[str, list[QAItem]] = {"train": [], "validation": [], "test": []}
    for item in generate(graph_views(load_settings())):
        out[item.split].append(item)
    return out


@task(name="build-linker", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=retry_transient)
def linker_task() -> Linker:
    """Treatments of every loaded guideline, for linking questions to them."""
    settings = load_settings()
    return linker_for(current_states(settings))


@task(name="train-model", task_run_name="train-{target}-{size}")
def train_task(splits: dict[str, list[QAItem]], linker: Linker, size: str, target: Target, out: Path,
               dataset_version: str, epochs: int | None = None, max_train_items: int | None = None) -> TrainResult:
    """Train tokenizer and model; the loss of each epoch goes to the run's log."""
    logger = get_run_logger()
    spec = load_size(size, epochs=epochs, max_train_items=max_train_items)

    def on_epoch(e: EpochLog) -> None:
        logger.info("%s epoch %d: train loss %.4f, validation loss %.4f (%.1f s)", target, e.epoch, e.train_loss,
                    e.val_loss, e.seconds)

    return train(examples(splits["train"], linker, target), examples(splits["validation"], linker, target), spec,
                 out, target, dataset_version, on_epoch=on_epoch)


@task(name="evaluate-with-dkg", retries=2, retry_delay_seconds=[5, 15], retry_condition_fn=retry_transient)
def evaluate_dkg_task(model_dir: Path, items: list[QAItem]) -> tuple[Metrics, list[EvalRecord]]:
    """Table 2, column (a): questions answered through the checked Cypher on Neo4j."""
    return evaluate_dkg(Answerer(load_settings(), Seq2Seq(model_dir)), items)


@task(name="evaluate-without-dkg")
def evaluate_baseline_task(model_dir: Path, items: list[QAItem]) -> Metrics:
    """Table 2, column (b): the same-size transformer writing the answer itself."""
    return evaluate_baseline(Seq2Seq(model_dir), items)


@task(name="evaluate-promoted-model", retries=2, retry_delay_seconds=[5, 15], retry_condition_fn=retry_transient)
def evaluate_current_task(items: list[QAItem]) -> tuple[float | None, dict[str, bool]]:
    """Accuracy of the model promoted now on the same test split, and which items it got right (None and
    nothing when there is none)."""
    settings = load_settings()
    try:
        folder = registry.promoted_model_dir(settings)
        metrics, records = evaluate_dkg(Answerer(settings, Seq2Seq(folder)), items)
        return metrics.accuracy, {r.id: r.correct for r in records}
    except ModelError as e:
        get_run_logger().warning("no usable promoted model: %s", e)
        return None, {}


@task(name="publish-model-report")
def publish_task(with_dkg: Metrics, without: Metrics | None, decision: str, promoted: bool,
                 histories: dict[str, list[EpochLog]], run_dir: Path) -> None:
    """The metric table beside the paper's, the promotion decision, and the training curves."""
    create_table_artifact(key="text2cypher-metrics", table=table(with_dkg, without),
                          description=f"test split, {with_dkg.n} questions")
    create_markdown_artifact(key="text2cypher-promotion",
                             markdown=f"# {'Promoted' if promoted else 'Not promoted'}\n\n{decision}\n\n"
                                      f"run: `{run_dir}`")
    svg = curves_svg(histories, run_dir / "curves.svg")
    create_link_artifact(key="text2cypher-curves", link=svg.resolve().as_uri(),
                         link_text="training and validation loss per epoch (SVG)")
    rows = [{"model": name, "epoch": e.epoch, "train_loss": e.train_loss, "val_loss": e.val_loss,
             "seconds": e.seconds} for name, hist in histories.items() for e in hist]
    create_table_artifact(key="text2cypher-curves-table", table=rows, description="loss per epoch")
