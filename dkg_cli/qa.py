"""`dkg qa …` (the QA dataset and the text-to-Cypher model) and `dkg ask`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from dkg.errors import DkgError
from dkg.settings import load_settings
from dkg_cli.app import app
from dkg_cli.env import configure_prefect
from dkg_cli.output import out, print_answer, print_table2

qa_app = typer.Typer(help="The CPG-QA dataset generated from the graph.", no_args_is_help=True)
app.add_typer(qa_app, name="qa")


def _qa_print(result: object, as_json: bool) -> None:
    from dkg.qa.build import QABuildResult

    assert isinstance(result, QABuildResult)
    if as_json:
        print(result.model_dump_json())
        return
    table = Table("", "count")
    for k, v in {**{f"type {k}": v for k, v in result.by_type.items()},
                 **{f"split {k}": v for k, v in result.by_split.items()},
                 **{f"guideline {k}": v for k, v in result.by_guideline.items()}}.items():
        table.add_row(k, str(v))
    out.print(table)
    leak = result.leakage
    out.print(f"{result.items} items, {result.valid} valid on the graph, {result.stale} stale "
              f"({result.regenerated} regenerated, {result.dropped} dropped, {result.added} added); "
              f"dataset {result.dataset_version} exported to {result.export}")
    if result.changes:
        out.print(f"changes: {result.changes}")
    out.print(f"leakage: shared decisions {leak.shared_decisions}, shared templates {leak.shared_templates}, "
              f"identical questions {leak.identical_questions}, max trigram Jaccard {leak.max_trigram_jaccard}")


@qa_app.command("build")
def qa_build_cmd(
    fresh: Annotated[bool, typer.Option("--fresh", help="Generate every item anew instead of refreshing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object as the last line.")] = False,
) -> None:
    """Generate (or refresh) and validate the QA dataset for every loaded guideline."""
    configure_prefect(load_settings())
    from flows.build_qa_dataset import build_qa_dataset

    _qa_print(build_qa_dataset(fresh=fresh), as_json)


@qa_app.command("validate")
def qa_validate_cmd(
    regenerate: Annotated[bool, typer.Option("--regenerate/--report-only",
                                             help="Rewrite stale items, or only report them.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object as the last line.")] = False,
) -> None:
    """Run every saved item's query on the current graph; report (and regenerate) stale items."""
    configure_prefect(load_settings())
    from flows.validate_qa_dataset import validate_qa_dataset

    _qa_print(validate_qa_dataset(regenerate=regenerate), as_json)


@qa_app.command("train")
def qa_train_cmd(
    size: Annotated[str, typer.Option("--size", help="small (quick) or paper (~19M parameters).")] = "small",
    baseline: Annotated[bool, typer.Option("--baseline/--no-baseline",
                                           help="Also train the paper's baseline without the DKG.")] = True,
    force: Annotated[bool, typer.Option("--force", help="Train even if the dataset has not changed.")] = False,
    epochs: Annotated[int | None, typer.Option("--epochs", help="Override the maximum epochs.")] = None,
    max_train_items: Annotated[int | None, typer.Option("--max-train-items",
                                                        help="Train on a sample of this many items.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object as the last line.")] = False,
) -> None:
    """Train the text-to-Cypher model on the saved dataset, evaluate it, promote it if not worse."""
    configure_prefect(load_settings())
    from flows.train_text2cypher import train_text2cypher

    report = train_text2cypher(size=size, with_baseline=baseline, force=force, epochs=epochs,
                               max_train_items=max_train_items)
    if as_json:
        print(report.model_dump_json())
        return
    out.print(report.reason)
    if report.with_dkg:
        from dkg.qa.evaluate import table

        print_table2(table(report.with_dkg, report.without_dkg))


def _answerer(model: Path | None) -> object:
    from dkg.qa import registry
    from dkg.qa.answer import Answerer
    from dkg.qa.model import Seq2Seq

    settings = load_settings()
    return Answerer(settings, Seq2Seq(model or registry.promoted_model_dir(settings)))


def _ask_served(question: str) -> dict[str, Any] | None:
    """The answer of a running `dkg serve`, or None when none is up (then the CLI answers itself)."""
    from dkg.serve.client import post_json, served_url

    settings = load_settings()
    url = served_url(settings)
    if url is None:
        return None
    return post_json(settings, url + "/v1/ask", {"question": question})


@app.command("ask")
def ask_cmd(
    question: Annotated[str, typer.Argument(help="A clinical question in English.")],
    model: Annotated[Path | None, typer.Option("--model", help="A model folder (default: the promoted one).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Answer a question from the graph: the answer, the Cypher that found it and the evidence.

    When a `dkg serve` of this state folder is up (or DKG_SERVE_URL names one), the question goes to it:
    the model is loaded there already. Otherwise the model is loaded here."""
    served = _ask_served(question) if model is None else None
    if served is None:
        from dkg.qa.answer import Answer, Answerer

        try:
            answerer = _answerer(model)
        except DkgError as exc:
            answer = Answer(question=question, status="rejected", answer=f"Not answered: {exc}.", message=str(exc))
        else:
            assert isinstance(answerer, Answerer)
            answer = answerer.ask(question)
        if as_json:
            print(answer.model_dump_json(exclude={"question"}))
            return
        served = answer.model_dump(mode="json", exclude={"question"})
    if as_json:
        print(json.dumps(served))
        return
    print_answer(served)

