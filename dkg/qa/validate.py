"""Check the QA dataset against the graph: GX schema suite, every query run read-only, stale items.

An item is **valid** when its ``QUERY``, run read-only on the current graph (literals lifted into
parameters), returns exactly ``Expected_Node`` and its ``ANSWER`` equals the returned boxes'
content. After a guideline update, an item whose answer differs on the new graph is **stale**;
:func:`regenerate` rewrites stale items from the facts they state (or drops those that no longer
have an answer) and adds the questions the new version's new paths call for.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import neo4j
import pandas as pd
from neo4j.exceptions import Neo4jError, ServiceUnavailable
from pydantic import BaseModel, Field

from dkg.errors import DataValidationError, ServiceUnavailableError
from dkg.qa import cypher
from dkg.qa.config import QAConfig
from dkg.qa.dataset import QTYPES, GuidelineView, QAItem, expected_answer
from dkg.services.neo4j import open_driver
from dkg.settings import Settings
from dkg.validate.gx_run import data_docs, run_suite

SUITE = "qa_dataset"
QUERY_TIMEOUT_S = 10.0


class ItemResult(BaseModel):
    """What one item's query returned."""

    id: str
    rows: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None


def run_query(session: neo4j.Session, query: str, timeout: float = QUERY_TIMEOUT_S) -> list[dict[str, Any]]:
    """Run dataset Cypher read-only, with its literals as parameters and a timeout."""
    text, params = cypher.parameterize(query)

    def work(tx: neo4j.ManagedTransaction) -> list[dict[str, Any]]:
        return [r.data() for r in tx.run(text, params)]

    return session.execute_read(neo4j.unit_of_work(timeout=timeout)(work))


QUERY_THREADS = 2
"""Sessions that run the dataset's queries side by side: Neo4j spreads them over its cores (1.3x on two)."""


def run_items(settings: Settings, items: Sequence[QAItem]) -> dict[str, ItemResult]:
    """Run every item's query; errors are kept per item, not raised. Items that share a query (the same
    facts asked in other words: ~60 % of a generated dataset) share one run of it.

    Raises:
        ServiceUnavailableError: Neo4j does not answer.
    """
    queries = list(dict.fromkeys(it.QUERY for it in items))

    def work(driver: neo4j.Driver, chunk: Sequence[str]) -> list[tuple[str, list[dict[str, Any]], str | None]]:
        out: list[tuple[str, list[dict[str, Any]], str | None]] = []
        with driver.session(database=settings.neo4j_database, default_access_mode=neo4j.READ_ACCESS) as session:
            for q in chunk:
                try:
                    out.append((q, run_query(session, q), None))
                except Neo4jError as e:
                    out.append((q, [], f"{e.code}: {e.message}"))
        return out

    threads = max(1, min(QUERY_THREADS, len(queries)))
    try:
        with open_driver(settings) as driver, ThreadPoolExecutor(threads, thread_name_prefix="qa-query") as pool:
            parts = list(pool.map(lambda chunk: work(driver, chunk), [queries[i::threads] for i in range(threads)]))
    except (ServiceUnavailable, OSError) as e:
        raise ServiceUnavailableError(f"Neo4j at {settings.bolt_uri} is not answering") from e
    by_query = {q: (rows, err) for part in parts for q, rows, err in part}
    return {it.id: ItemResult(id=it.id, rows=[dict(r) for r in by_query[it.QUERY][0]], error=by_query[it.QUERY][1])
            for it in items}


def answer_from_rows(item: QAItem, rows: Sequence[Mapping[str, Any]], conf: QAConfig) -> str:
    """The answer a query's rows give, in the dataset's form."""
    if item.type == "not_covered" or not rows:
        return conf.not_covered_answer
    content = " | ".join(str(r["text"]) for r in sorted(rows, key=lambda r: str(r["uid"])))
    if item.type == "advisable":
        yes = any(bool(r.get("advisable")) for r in rows)
        return ("Yes. Recommended: " if yes else "No. Recommended instead: ") + content
    return content


class Failure(BaseModel):
    id: str
    type: str
    guideline: str
    question: str
    reason: str


class ValidationReport(BaseModel):
    """Outcome of checking a dataset on the current graph."""

    items: int
    valid: int
    failures: list[Failure]
    by_type: dict[str, dict[str, int]]
    by_guideline: dict[str, dict[str, int]]
    schema_ok: bool
    schema_failed: list[str]
    data_docs: str | None
    seconds: float

    @property
    def success(self) -> bool:
        return self.schema_ok and not self.failures


def check_items(items: Sequence[QAItem], results: Mapping[str, ItemResult],
                conf: QAConfig) -> tuple[list[Failure], dict[str, list[str]]]:
    """Compare each item with what its query returned: (failures, the ``DKG_response`` of each item)."""
    failures = []
    responses: dict[str, list[str]] = {}
    for it in items:
        r = results.get(it.id)
        reason = None
        if r is None:
            reason = "not run"
        elif r.error:
            reason = f"query failed: {r.error}"
        else:
            got = sorted(str(x["uid"]) for x in r.rows)
            responses[it.id] = got
            if got != sorted(it.Expected_Node):
                reason = f"returned {got}, expected {it.Expected_Node}"
            elif answer_from_rows(it, r.rows, conf) != it.ANSWER:
                reason = f"answer differs from the node content: {answer_from_rows(it, r.rows, conf)!r}"
        if reason:
            failures.append(Failure(id=it.id, type=it.type, guideline=it.guideline, question=it.QUESTION[:200],
                                    reason=reason))
    return failures, responses


def _suite(gx: Any, codes: list[str]) -> Any:
    e = gx.expectations
    suite = gx.ExpectationSuite(name=SUITE)
    cols = ["id", "QUESTION", "ANSWER", "QUERY", "Expected_Node", "DKG_response", "type", "guideline", "version",
            "split"]
    suite.add_expectation(e.ExpectTableColumnsToMatchSet(column_set=cols, exact_match=False))
    for col in ("id", "QUESTION", "ANSWER", "QUERY", "type", "split", "Expected_Node"):
        suite.add_expectation(e.ExpectColumnValuesToNotBeNull(column=col))
    suite.add_expectation(e.ExpectColumnValuesToBeUnique(column="id"))
    suite.add_expectation(e.ExpectColumnValuesToBeUnique(column="_gx_question_key"))
    suite.add_expectation(e.ExpectColumnValueLengthsToBeBetween(column="QUESTION", min_value=8, max_value=2000))
    suite.add_expectation(e.ExpectColumnValueLengthsToBeBetween(column="ANSWER", min_value=2))
    suite.add_expectation(e.ExpectColumnValuesToMatchRegex(column="QUERY", regex=r"^(MATCH|WITH) "))
    suite.add_expectation(e.ExpectColumnValuesToNotMatchRegex(
        column="QUERY", regex=r"(?i)\b(CREATE|MERGE|DELETE|DETACH|SET|REMOVE|DROP|LOAD CSV|FOREACH)\b"))
    suite.add_expectation(e.ExpectColumnValuesToBeInSet(column="type", value_set=list(QTYPES)))
    suite.add_expectation(e.ExpectColumnValuesToBeInSet(column="split", value_set=["train", "validation", "test"]))
    suite.add_expectation(e.ExpectColumnValuesToBeInSet(column="guideline", value_set=[*codes, ""]))
    suite.add_expectation(e.ExpectColumnValuesToBeInSet(column="_gx_expected_matches_type", value_set=[True]))
    suite.add_expectation(e.ExpectColumnValuesToBeInSet(column="_gx_response_matches", value_set=[True]))
    for qtype in QTYPES:
        suite.add_expectation(e.ExpectColumnDistinctValuesToContainSet(column="type", value_set=[qtype]))
    return suite


def frame(items: Sequence[QAItem]) -> pd.DataFrame:
    """The dataset as a table (lists as JSON) with the GX helper columns."""
    rows = []
    for it in items:
        d = it.model_dump()
        d["Expected_Node"] = json.dumps(it.Expected_Node)
        d["DKG_response"] = json.dumps(it.DKG_response) if it.DKG_response is not None else None
        d["_gx_question_key"] = " ".join(it.QUESTION.lower().split())
        d["_gx_expected_matches_type"] = (not it.Expected_Node) == (it.type == "not_covered")
        d["_gx_response_matches"] = it.DKG_response is not None and sorted(it.DKG_response) == sorted(it.Expected_Node)
        rows.append(d)
    return pd.DataFrame(rows)


def validate_schema(items: Sequence[QAItem], run_dir: Path, codes: list[str]) -> tuple[bool, list[str], str | None]:
    """Run the GX suite on the dataset: (success, failed expectations, Data Docs path)."""
    gx_root = run_dir / "gx"
    result = run_suite(gx_root, "dkg_qa", "qa", lambda gx: _suite(gx, codes), "qa_dataset_gate", frame(items),
                       "SUMMARY")
    failed = []
    for r in result.results:
        if not r.success:
            cfg = r.expectation_config
            res = r.result or {}
            kwargs = {k: v for k, v in cfg.kwargs.items() if k != "batch_id"} if cfg else {}
            failed.append(f"{cfg.type if cfg else '?'} {kwargs} "
                          f"(unexpected {res.get('unexpected_count', res.get('observed_value'))}, e.g. "
                          f"{list(res.get('partial_unexpected_list') or [])[:2]})")
    return bool(result.success), failed, data_docs(gx_root)


def _counts(items: Sequence[QAItem], failures: Sequence[Failure], key: str) -> dict[str, dict[str, int]]:
    bad = {f.id for f in failures}
    out: dict[str, dict[str, int]] = {}
    for it in items:
        k = str(getattr(it, key)) or "-"
        c = out.setdefault(k, {"items": 0, "valid": 0})
        c["items"] += 1
        c["valid"] += it.id not in bad
    return dict(sorted(out.items()))


def validate_dataset(settings: Settings, items: Sequence[QAItem], conf: QAConfig, run_dir: Path,
                     codes: list[str], schema: bool = True) -> tuple[list[QAItem], ValidationReport]:
    """Run every query on the current graph, then the GX suite on the result.

    Returns:
        The items with ``DKG_response`` filled from the run, and the report.
    """
    t0 = time.perf_counter()
    results = run_items(settings, items)
    failures, responses = check_items(items, results, conf)
    filled = [it.model_copy(update={"DKG_response": responses.get(it.id)}) for it in items]
    ok, failed, docs = validate_schema(filled, run_dir, codes) if schema else (True, [], None)
    valid = len(items) - len({f.id for f in failures})
    return filled, ValidationReport(items=len(items), valid=valid, failures=failures,
                                    by_type=_counts(items, failures, "type"),
                                    by_guideline=_counts(items, failures, "guideline"), schema_ok=ok,
                                    schema_failed=failed, data_docs=docs, seconds=round(time.perf_counter() - t0, 2))


def require_valid(report: ValidationReport, where: str) -> None:
    """Raise when a dataset did not pass.

    Raises:
        DataValidationError: with the first failing items and expectations.
    """
    if report.success:
        return
    detail = "; ".join(f"{f.id} ({f.type}, {f.guideline or '-'}): {f.reason}" for f in report.failures[:5])
    raise DataValidationError(f"{where}: {len(report.failures)} of {report.items} items failed on the graph"
                              f"{': ' + detail if detail else ''}"
                              f"{'; schema: ' + ' | '.join(report.schema_failed) if report.schema_failed else ''}",
                              report.data_docs, None)


AMBIGUOUS = "names no guideline and is now ambiguous"
"""Why an item that named no guideline was replaced: a newly loaded guideline answers its facts too."""


class StaleReport(BaseModel):
    """Items whose answer changed with a guideline update, and what was done about them."""

    stale: list[str]
    regenerated: int
    dropped: int
    added: int
    by_guideline: dict[str, int]
    reasons: dict[str, int] = Field(default_factory=dict)
    """Why items changed: ``answer changed``, ``no answer any more``, ``names no guideline and is now ambiguous``."""
    replaced: int = 0
    """Items that named no guideline and whose facts now reach another guideline's boxes too: dropped, and
    asked again naming their guideline (among ``added``)."""

    def _dropping(self, ids: Sequence[str], reason: str, replaced: bool) -> StaleReport:
        """This report, with the items ``ids`` dropped too, for ``reason``."""
        if not ids:
            return self
        return self.model_copy(update={
            "stale": sorted({*self.stale, *ids}), "dropped": self.dropped + len(ids),
            "replaced": self.replaced + (len(ids) if replaced else 0),
            "reasons": dict(sorted({**self.reasons, reason: self.reasons.get(reason, 0) + len(ids)}.items()))})

    def with_removed(self, ids: Sequence[str]) -> StaleReport:
        """This report, with the items of guidelines no longer loaded dropped too."""
        return self._dropping(ids, GONE, replaced=False)

    def with_ambiguous(self, ids: Sequence[str]) -> StaleReport:
        """This report, with items found ambiguous at validation dropped too."""
        return self._dropping(ids, AMBIGUOUS, replaced=True)

    def summary(self) -> str:
        """One line for the command line and the logs."""
        if not self.stale and not self.added:
            return "no item changed"
        why = ", ".join(f"{n} {r}" for r, n in sorted(self.reasons.items())) or "none"
        return (f"{len(self.stale)} item(s) changed ({why}): {self.regenerated} regenerated, {self.dropped} dropped, "
                f"{self.replaced} replaced by items naming their guideline; {self.added} new item(s)")


def stale_items(items: Sequence[QAItem], results: Mapping[str, ItemResult], conf: QAConfig) -> list[QAItem]:
    """Items whose query now returns something else than their recorded answer."""
    bad = {f.id for f in check_items(items, results, conf)[0]}
    return [it for it in items if it.id in bad]


def _rewritten(it: QAItem, views: Mapping[str, GuidelineView], conf: QAConfig) -> tuple[QAItem | None, str]:
    """A stale item as the new graph answers it, or None where it is dropped; and why."""
    if it.type == "not_covered" and not it.guideline:
        # "… breast cancer?" asked when no guideline covered it: a loaded one now does
        return None, "names a disease a loaded guideline now covers"
    exp = expected_answer(it, views, conf)
    if exp is None:
        return None, "no answer any more"
    expected, answer = exp
    if it.guideline and unscoped(it) and (sorted(expected), answer) == (sorted(it.Expected_Node), it.ANSWER):
        # its own guideline still answers as before, so another one (new, or changed) now matches the facts
        # too: the question is ambiguous as written; the fresh dataset asks it again naming the guideline
        return None, AMBIGUOUS
    v = views[it.guideline] if it.guideline else None
    adv = answer.startswith("Yes") if it.type == "advisable" else None
    return it.model_copy(update={"Expected_Node": expected, "ANSWER": answer, "DKG_response": None,
                                 "version": v.state.version if v else it.version, "advisable": adv}), "answer changed"


def regenerate(items: Sequence[QAItem], stale: Sequence[QAItem], views: Mapping[str, GuidelineView],
               fresh: Sequence[QAItem], conf: QAConfig) -> tuple[list[QAItem], StaleReport]:
    """Rewrite stale items for the new graph and add the fresh items the dataset lacks.

    Args:
        items: the current dataset.
        stale: its stale items.
        views: the guidelines as they are now.
        fresh: a newly generated dataset; its questions the old dataset does not hold (new branches,
            new paths into known decisions) are added.
    """
    stale_ids = {s.id for s in stale}
    out: list[QAItem] = []
    dropped = regenerated = replaced = 0
    reasons: dict[str, int] = {}
    for it in items:
        if it.id not in stale_ids:
            v = views.get(it.guideline)
            out.append(it.model_copy(update={"version": v.state.version}) if v else it)
            continue
        rewritten, reason = _rewritten(it, views, conf)
        reasons[reason] = reasons.get(reason, 0) + 1
        if rewritten is None:
            dropped += 1
            replaced += 1 if reason == AMBIGUOUS else 0
        else:
            out.append(rewritten)
            regenerated += 1
    # Every question the generator asks of the new graph that the dataset lacks: new branches, and new paths into
    # decisions it already asked about (a branch added before an existing decision), so that the maintained
    # dataset covers the graph as a fresh one would and retraining sees every way to each decision.
    known = {it.id for it in items}
    have = {" ".join(it.QUESTION.lower().split()) for it in out}
    added = 0
    for f in fresh:
        q = " ".join(f.QUESTION.lower().split())
        if f.id not in known and q not in have:
            out.append(f)
            have.add(q)
            added += 1
    by_g: dict[str, int] = {}
    for s in stale:
        by_g[s.guideline or "-"] = by_g.get(s.guideline or "-", 0) + 1
    return out, StaleReport(stale=sorted(stale_ids), regenerated=regenerated, dropped=dropped, added=added,
                            by_guideline=dict(sorted(by_g.items())), reasons=dict(sorted(reasons.items())),
                            replaced=replaced)


def ambiguous_items(filled: Sequence[QAItem]) -> list[QAItem]:
    """Validated items that name no guideline and whose query returned their boxes and other guidelines' too (or,
    for a disease no guideline covered, the guideline that now covers it), or another guideline's boxes instead
    of theirs (a newly loaded guideline's branch holds for the same facts and goes further)."""
    def elsewhere(it: QAItem) -> bool:
        return bool(it.guideline) and any(str(u).partition(":")[0] != it.guideline for u in it.DKG_response or [])

    return [it for it in filled if unscoped(it) and it.DKG_response is not None
            and (set(it.Expected_Node) < set(it.DKG_response) or elsewhere(it))]


GONE = "its guideline is no longer loaded"


def without_removed(items: Sequence[QAItem], loaded: Iterable[str]) -> tuple[list[QAItem], list[str]]:
    """The items of loaded guidelines (and those naming none), and the ids of the rest: a guideline removed from
    the graph takes its items along, whatever its queries still return (a "not covered" one returns nothing)."""
    codes = set(loaded)
    gone = [it.id for it in items if it.guideline and it.guideline not in codes]
    return [it for it in items if not it.guideline or it.guideline in codes], gone


def unscoped(item: QAItem) -> bool:
    """True for an item whose query searches every guideline (its question names none)."""
    return item.type in ("next_step", "advisable", "not_covered") and "{code:" not in item.QUERY
