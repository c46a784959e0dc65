"""The CPG-QA dataset: generated from the graph, every query checked on Neo4j, stale items after v2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dkg.constraints.parse import ParseCache
from dkg.graph import loader
from dkg.qa import store
from dkg.qa.build import graph_views
from dkg.qa.dataset import expected_answer, load_config
from dkg.qa.validate import run_items
from dkg.settings import Settings
from tests.integration.test_graph import _load, _validated_csv, _wipe
from tests.pdf_support import reference_pdfs

pytestmark = [pytest.mark.services, pytest.mark.slow]
CODES = ["ALL", "KID", "BONE"]


@pytest.fixture(scope="module")
def csvs(services: Settings, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("qa")
    cache = ParseCache(tmp / "parse.sqlite")
    return {pdf.stem: _validated_csv(services, pdf, tmp / pdf.stem, cache) for pdf in reference_pdfs()}


@pytest.fixture()
def qa_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("DKG_QA_DIR", str(tmp_path / "qa"))
    yield tmp_path / "qa"


def _only_reference_guidelines(settings: Settings) -> None:
    others = [g["code"] for g in loader.guidelines(settings) if g["code"] not in CODES]
    _wipe(settings, [*CODES, *others])


def test_dataset_from_v1_then_v2_marks_exactly_the_affected_items_stale(
    services: Settings, prefect_harness: None, csvs: dict[str, Path], qa_home: Path
) -> None:
    from flows.build_qa_dataset import build_qa_dataset
    from flows.validate_qa_dataset import validate_qa_dataset

    _only_reference_guidelines(services)
    for stem in ("ALL-1.2022", "KID-1.2023", "BONE-1.2023"):
        _load(services, csvs[stem])

    built = build_qa_dataset(fresh=True)
    assert built.items >= 8300
    assert built.valid == built.items and built.failures == 0 and built.schema_ok
    assert set(built.by_type) == {"next_step", "constraints", "advisable", "not_covered"}
    assert all(n >= 500 for n in built.by_type.values()), built.by_type
    assert set(built.by_split) == {"train", "validation", "test"}
    assert built.leakage.clean, built.leakage
    folder = qa_home / "current"
    items = store.load(folder)
    assert items is not None and len(items) == built.items
    assert all(it.DKG_response == it.Expected_Node for it in items)
    assert {it.version for it in items if it.guideline == "ALL"} == {"1.2022"}
    # the on-disk DatasetDict holds the same items, split as recorded
    dd = store.load_hf(Path(built.export or ""))
    assert {k: len(v) for k, v in dd.items()} == built.by_split
    assert built.dataset_version and built.dataset_version.startswith("ALL-1.2022+BONE-1.2023+KID-1.2023.")

    # an advisable item answers yes or no consistently with its expected node
    adv = [it for it in items if it.type == "advisable"]
    assert {it.advisable for it in adv} == {True, False}
    assert all(it.ANSWER.startswith("Yes") == it.advisable for it in adv)

    # load version 2 of each guideline: the items whose answer changed are what Python says
    for stem in ("ALL-2.2022", "KID-2.2023", "BONE-2.2023"):
        _load(services, csvs[stem])
    views = graph_views(services)
    conf = load_config()
    affected = set()
    for it in items:
        now = expected_answer(it, views, conf)
        if now is None or (sorted(now[0]), now[1]) != (sorted(it.Expected_Node), it.ANSWER):
            affected.add(it.id)
    assert affected, "version 2 changes constraints; some answers must change"
    assert {it.guideline for it in items if it.id in affected} == set(CODES)

    refreshed = validate_qa_dataset(regenerate=True)
    assert set(refreshed.stale_ids) == affected  # Cypher on the graph agrees with the Python rule
    assert refreshed.regenerated + refreshed.dropped == len(affected)
    assert refreshed.added > 0  # each v2 has a new branch
    assert refreshed.valid == refreshed.items and refreshed.failures == 0
    after = {it.id: it for it in store.load(folder) or []}
    assert {it.version for it in after.values() if it.guideline == "ALL"} == {"2.2022"}
    unchanged = [it for it in items if it.id not in affected]
    assert all(after[it.id].ANSWER == it.ANSWER for it in unchanged)
    assert refreshed.dataset_version and refreshed.dataset_version.startswith("ALL-2.2022+BONE-2.2023+KID-2.2023.")

    # a second check on an unchanged graph finds nothing stale and changes nothing
    again = validate_qa_dataset(regenerate=False)
    assert again.stale == 0 and again.items == refreshed.items


def test_every_query_is_read_only_and_parameterised(services: Settings, csvs: dict[str, Path],
                                                    qa_home: Path) -> None:
    from dkg.qa.cypher import parameterize

    q = ("WITH {age: 45, phStatus: 'negative'} AS facts MATCH (p:Path {code: 'ALL'}) "
         "WHERE all(k IN p.catAttrs WHERE facts[k] IN p[k]) RETURN p.uid AS uid")
    text, params = parameterize(q)
    assert "'negative'" not in text and "45" not in text
    assert params == {"p0": 45, "p1": "negative", "p2": "ALL"}
    # a query that would write is refused by the read-only transaction
    from dkg.qa.dataset import QAItem

    bad = QAItem(id="x", QUESTION="delete everything?", ANSWER="-", QUERY="MATCH (n:Box) DETACH DELETE n",
                 Expected_Node=[], type="next_step", guideline="ALL", version="", split="train", template="-")
    before = loader.counts(services, "ALL")
    result = run_items(services, [bad])["x"]
    assert result.error and "write" in result.error.lower()
    assert loader.counts(services, "ALL") == before
