"""Constraint extraction against the real CoreNLP server, and the Great Expectations gate."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from dkg.constraints.evaluate import score_constraints
from dkg.constraints.extract import extract, prepare
from dkg.constraints.models import items_to_json
from dkg.constraints.parse import ParseCache, parse_texts
from dkg.constraints.table import box_texts, build_rows, read_edges, write_rows
from dkg.constraints.vocabulary import load_vocabulary
from dkg.errors import ConstraintError, DataValidationError, ServiceUnavailableError
from dkg.pdf import ingest_pdf
from dkg.pdf.evaluate import load_truth
from dkg.pdf.export import write_outputs
from dkg.settings import Settings, load_settings
from dkg.validate import validate_constraint_csv
from tests.pdf_support import reference_pdfs, truth_of

pytestmark = pytest.mark.services
V = load_vocabulary()


def _extract(settings: Settings, text: str, cache: ParseCache) -> list[dict[str, object]]:
    parse = parse_texts(settings, [prepare(V, text)], cache)[0]
    return items_to_json(extract(V, text, parse))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> ParseCache:
    return ParseCache(tmp_path_factory.mktemp("cache") / "parse.sqlite")


@pytest.mark.parametrize(("text", "want"), [
    ("without comorbidities of diabetes and liver", [{"attr": "comorbidities", "op": "=", "value": "none"}]),
    ("adult patients should be less than 65 years of age and without substantial comorbidities",
     [{"attr": "age", "op": "<", "value": 65, "unit": "years"}, {"attr": "comorbidities", "op": "=", "value": "none"}]),
    ("no substantial comorbidities", [{"attr": "comorbidities", "op": "=", "value": "none"}]),
    ("Ph-negative ALL", [{"attr": "ph_status", "op": "=", "value": "negative"}]),
    ("not a candidate for surgery", [{"attr": "resectable", "op": "=", "value": "no"}]),
    ("aged 15 to 39", [{"attr": "age", "op": ">=", "value": 15, "unit": "years"},
                       {"attr": "age", "op": "<=", "value": 39, "unit": "years"}]),
    ("≥ 65 y or substantial comorbid conditions",
     [{"any_of": [{"attr": "age", "op": ">=", "value": 65, "unit": "years"},
                  {"attr": "comorbidities", "op": "=", "value": "substantial"}]}]),
    ("Persistent or rising MRD", [{"attr": "mrd", "op": "in", "value": ["positive", "rising"]}]),
    ("Stage II or stage III", [{"attr": "stage", "op": "in", "value": ["II", "III"]}]),
    ("Clinical stage III or IV", [{"attr": "stage", "op": "in", "value": ["III", "IV"]}]),
    ("No evidence of metastatic disease", [{"attr": "metastatic", "op": "=", "value": "no"}]),
    ("Not eligible for surgery", [{"attr": "resectable", "op": "=", "value": "no"}]),
    ("Pediatric patients (<18 years)", [{"attr": "age", "op": "<", "value": 18, "unit": "years"}]),
    ("Intermediate-risk or poor-risk disease", [{"attr": "risk_group", "op": "in", "value": ["intermediate", "poor"]}]),
    ("High-grade or dedifferentiated chondrosarcoma",
     [{"attr": "grade", "op": "=", "value": "high"}, {"attr": "histology", "op": "=", "value": "chondrosarcoma"}]),
])
def test_negation_coordination_and_symbols(services: Settings, cache: ParseCache, text: str,
                                           want: list[dict[str, object]]) -> None:
    got = _extract(services, text, cache)
    key = lambda items: sorted(json.dumps(i, sort_keys=True) for i in items)  # noqa: E731
    assert key(got) == key(want)


@pytest.mark.slow
def test_reference_documents_meet_the_targets(services: Settings, tmp_path: Path) -> None:
    cache = ParseCache(tmp_path / "parse.sqlite")
    for pdf in reference_pdfs():
        out = tmp_path / pdf.stem
        write_outputs(ingest_pdf(pdf), out)
        rows = read_edges(out / "edges.csv")
        built = build_rows(rows, box_texts(rows, out / "graph.json"), V,
                           lambda t: parse_texts(services, [t], cache)[0])
        csv_path = write_rows(built, out / "constraints.csv")
        scores = score_constraints(csv_path, load_truth(truth_of(pdf)))
        assert scores.overall.f1 >= 0.95, (pdf.name, scores)
        assert scores.box_exact >= 0.90, (pdf.name, scores)
        validate_constraint_csv(csv_path, out, V, tmp_path / "quarantine", (len(rows), len(rows)))
    # an unchanged guideline is not parsed again
    before = cache.misses
    pdf = reference_pdfs()[0]
    rows = read_edges(tmp_path / pdf.stem / "edges.csv")
    build_rows(rows, box_texts(rows, None), V, lambda t: parse_texts(services, [t], cache)[0])
    assert cache.misses == before


def test_unparseable_sentence_gives_no_constraint(services: Settings, cache: ParseCache) -> None:
    assert _extract(services, "!!! ??? ;;; ---", cache) == []


def test_corenlp_down_is_a_transient_error_with_a_clear_message(tmp_path: Path) -> None:
    dead = load_settings(state_dir=tmp_path, corenlp_port=1, corenlp_timeout_ms=2000)
    with pytest.raises(ServiceUnavailableError, match=r"CoreNLP at http://127.0.0.1:1 failed to parse"):
        parse_texts(dead, ["Ph+ ALL"], None)


def _good_csv(services: Settings, tmp_path: Path) -> Path:
    pdf = next(p for p in reference_pdfs() if p.stem == "KID-1.2023")
    write_outputs(ingest_pdf(pdf), tmp_path)
    rows = read_edges(tmp_path / "edges.csv")
    cache = ParseCache(tmp_path / "parse.sqlite")
    built = build_rows(rows, box_texts(rows, tmp_path / "graph.json"), V,
                       lambda t: parse_texts(services, [t], cache)[0])
    return write_rows(built, tmp_path / "constraints.csv")


def test_gate_passes_a_good_csv_and_builds_data_docs(services: Settings, tmp_path: Path) -> None:
    path = _good_csv(services, tmp_path)
    report = validate_constraint_csv(path, tmp_path, V, tmp_path / "quarantine", (36, 45))
    assert report.success and report.evaluated >= 15 and report.failed == []
    assert report.data_docs is not None and Path(report.data_docs).exists()
    assert path.exists()


def _mutate(path: Path, fn: object) -> None:
    rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    rows = fn(rows)  # type: ignore[operator]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_age_out_of_range_is_quarantined_naming_the_row(services: Settings, tmp_path: Path) -> None:
    path = _good_csv(services, tmp_path)

    def bad_age(rows: list[dict[str, str]]) -> list[dict[str, str]]:
        rows[3]["tail_constraints"] = json.dumps([{"attr": "age", "op": "<", "value": 500, "unit": "years"}])
        return rows

    _mutate(path, bad_age)
    with pytest.raises(DataValidationError) as info:
        validate_constraint_csv(path, tmp_path, V, tmp_path / "quarantine", (36, 45))
    msg = str(info.value)
    assert "_gx_tail_values_in_range" in msg and "row 5" in msg and "quarantined to" in msg
    assert not path.exists()
    q = Path(info.value.quarantined or "")
    assert (q / "constraints.csv").exists() and (q / "validation_result.json").exists()


def test_unknown_attribute_and_duplicates_fail(services: Settings, tmp_path: Path) -> None:
    path = _good_csv(services, tmp_path)

    def bad(rows: list[dict[str, str]]) -> list[dict[str, str]]:
        rows[0]["head_constraints"] = json.dumps([{"attr": "shoe_size", "op": "=", "value": "42"}])
        return [*rows, rows[1]]

    _mutate(path, bad)
    with pytest.raises(DataValidationError, match=r"_gx_head_vocabulary_ok.*|.*ExpectCompoundColumnsToBeUnique"):
        validate_constraint_csv(path, tmp_path, V, tmp_path / "quarantine", None)


def test_missing_column_is_quarantined(services: Settings, tmp_path: Path) -> None:
    path = _good_csv(services, tmp_path)
    _mutate(path, lambda rows: [{k: v for k, v in r.items() if k != "tail_constraints"} for r in rows])
    with pytest.raises(DataValidationError, match=r"expect_table_columns_to_match_set"):
        validate_constraint_csv(path, tmp_path, V, tmp_path / "quarantine", None)


def test_empty_and_non_utf8_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(DataValidationError, match=r"empty\.csv: unreadable CSV"):
        validate_constraint_csv(empty, tmp_path, V, tmp_path / "q", None)
    assert not empty.exists()
    latin = tmp_path / "latin.csv"
    latin.write_bytes("head,tail\nPatient \xe2ge,x\n".encode("latin-1"))
    with pytest.raises(DataValidationError, match=r"latin\.csv: unreadable CSV"):
        validate_constraint_csv(latin, tmp_path, V, tmp_path / "q", None)
    edges = tmp_path / "edges.csv"
    edges.write_bytes("head,tail\n\xe2\n".encode("latin-1"))
    with pytest.raises(ConstraintError, match=r"edges\.csv: line 2 is not UTF-8"):
        read_edges(edges)
    shutil.rmtree(tmp_path / "q")
