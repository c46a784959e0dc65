"""Open-vocabulary comparisons: what is constrained and how, for attributes no list names."""

from __future__ import annotations

from pathlib import Path

import pytest

from dkg.constraints.comparisons import (
    BETWEEN,
    EQ,
    GT,
    GTEQ,
    IN,
    LT,
    LTEQ,
    PLUS_MINUS,
    find_comparisons,
    ordinal_value,
)
from dkg.constraints.criteria_eval import evaluate_criteria, gold_comparisons, read_brat
from dkg.errors import ConstraintError

LCT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "external" / "leaf-clinical-trials"


def one(text: str) -> tuple[str | None, str, tuple[str, ...], str | None, str]:
    found = find_comparisons(text)
    assert len(found) == 1, (text, found)
    c = found[0]
    return c.attr, c.op, c.values, c.unit, c.kind


@pytest.mark.parametrize(("text", "expected"), [
    # numbers, ranges and comparisons with any head
    ("Deauville 1–3", ("Deauville", BETWEEN, ("1", "3"), None, "measure")),
    ("ECOG 0~2", ("ECOG", BETWEEN, ("0", "2"), None, "measure")),
    ("age 18 to 59 years", ("age", BETWEEN, ("18", "59"), "years", "age")),
    ("≥ 60 years", ("age", GTEQ, ("60",), "years", "age")),
    ("aged 65 or older", ("age", GTEQ, ("65",), None, "age")),
    ("age less than 65", ("age", LT, ("65",), None, "age")),
    ("CrCl < 30 mL/min", ("CrCl", LT, ("30",), "mL/min", "measure")),
    ("Hb ≥ 10 g/dL", ("Hb", GTEQ, ("10",), "g/dL", "measure")),
    ("Body mass index between 18 and 30 kg/m2", ("Body mass index", BETWEEN, ("18", "30"), "kg/m2", "measure")),
    ("Gleason ≥ 8", ("Gleason", GTEQ, ("8",), None, "measure")),
    ("PSA more than 20 ng/mL", ("PSA", GT, ("20",), "ng/mL", "measure")),
    ("LVEF no more than 40%", ("LVEF", LTEQ, ("40",), "%", "measure")),
    ("resting blood pressure > 140/90", ("resting blood pressure", GT, ("140", "90"), None, "measure")),
    # ordinal scales
    ("stage IIB", ("stage", EQ, ("IIB",), None, "stage")),
    ("Ann Arbor stage III–IV", ("Ann Arbor stage", BETWEEN, ("III", "IV"), None, "stage")),
    ("stage III or IV", ("stage", IN, ("III", "IV"), None, "stage")),
    ("NYHA class III-IV", ("NYHA class", BETWEEN, ("III", "IV"), None, "stage")),
    ("Child-Pugh class A or B", ("Child-Pugh class", IN, ("A", "B"), None, "stage")),
    ("T3 or T4", ("T category", IN, ("T3", "T4"), None, "stage")),
    ("ECOG performance status 0 or 1", ("ECOG performance status", IN, ("0", "1"), None, "measure")),
])
def test_a_comparison_names_its_attribute_operator_and_values(text: str, expected: tuple[object, ...]) -> None:
    assert one(text) == expected


def test_coordinated_bounds_share_the_attribute() -> None:
    found = find_comparisons("BMI < 18.5 or ≥ 30 kg/m2")
    assert [(c.attr, c.op, c.values) for c in found] == [("BMI", LT, ("18.5",)), ("BMI", GTEQ, ("30",))]
    found = find_comparisons("Patients must be ≥ 3 and ≤ 18 years of age.")
    assert [(c.attr, c.op, c.values) for c in found] == [("age", GTEQ, ("3",)), ("age", LTEQ, ("18",))]


def test_the_attribute_after_the_value_is_found_when_none_precedes() -> None:
    found = find_comparisons("Hypertension (≥140 mmHg systolic and/or ≥90 mmHg diastolic)")
    assert [c.attr for c in found] == ["systolic", "diastolic"]


def test_abbreviations_stay_with_the_name_so_either_spelling_names_the_attribute() -> None:
    c = find_comparisons("creatinine clearance (CrCl) < 30 mL/min")[0]
    assert c.attr == "creatinine clearance (CrCl)"


@pytest.mark.parametrize(("text", "kind"), [
    ("for at least 3 months before randomisation", "temporal"),
    ("diagnosed at least 6 months prior to screening", "temporal"),
    ("at least 2 episodes of pneumonia", "count"),
    ("more than 3 previous concussions", "count"),
    ("at least 1 measurable lesion", "count"),
    ("prednisone ≥ 10 mg/day", "dose"),
    ("symptoms present for at least a 4-week period", None),  # "4-week" modifies a noun: no value at all
])
def test_time_windows_doses_and_counts_are_not_patient_bounds(text: str, kind: str | None) -> None:
    assert find_comparisons(text) == []
    assert [c.kind for c in find_comparisons(text, keep_all=True)] == ([kind] if kind else [])


def test_a_rate_or_a_measured_count_is_a_patient_bound() -> None:
    assert one("smoke at least 5 cigarettes per day")[1:3] == (GTEQ, ("5",))
    assert one("life expectancy of less than 6 months")[0] == "life expectancy"
    assert one("Birthweight < 1500 g")[4] == "measure"  # grams of a body are a measure, not a dose


def test_texts_that_state_no_patient_property_give_nothing() -> None:
    for text in ("Consider clinical trial", "See BONE-2", "Type 2 diabetes mellitus", "Repeat imaging",
                 "NCCN Guidelines Version 2.2023"):
        assert find_comparisons(text) == [], text


def test_roman_and_arabic_values_have_one_spelling() -> None:
    assert ordinal_value("IV") == ordinal_value("4") == "4"
    assert ordinal_value("IIIb") == ordinal_value("3B") == "3B"
    assert ordinal_value("Ⅲ") == "3"
    assert ordinal_value("B") == "B"


def test_the_scorer_reads_brat_and_matches_operator_values_and_name(tmp_path: Path) -> None:
    (tmp_path / "t1.txt").write_text("Inclusion:\n-  Age ≥ 18 years\n-  ECOG performance status 0-1\n"
                                     "-  stage III or IV\n-  Hb > 9 g/dL\n", encoding="utf-8")
    # gold: age ≥ 18; ECOG BETWEEN 0,1 (Value2 first, as annotators write it); stage EQ III, IV;
    # the Hb bound is annotated LT, so our GT is a false positive and the gold a miss
    text = (tmp_path / "t1.txt").read_text(encoding="utf-8")

    def span(s: str) -> str:
        i = text.index(s)
        return f"{i} {i + len(s)}\t{s}"

    (tmp_path / "t1.ann").write_text("\n".join([
        f"T1\tAge {span('Age')}", f"T2\tEq-Comparison {span('≥ 18 years')}", f"T3\tEq-Operator {span('≥')}",
        f"T4\tEq-Value {span('18')}", "E1\tAge:T1 Numeric-Filter:E2", "E2\tEq-Comparison:T2 Operator:T3 Value:T4",
        "A1\tEq-Operator-Value T3 GTEQ",
        f"T5\tObservation {span('ECOG performance status')}", f"T6\tObservation-Name {span('ECOG')}",
        f"T7\tEq-Comparison {span('0-1')}", f"T8\tEq-Value {text.index('0-1')} {text.index('0-1') + 1}\t0",
        f"T9\tEq-Value {text.index('0-1') + 2} {text.index('0-1') + 3}\t1",
        f"T10\tEq-Operator {text.index('0-1') + 1} {text.index('0-1') + 2}\t-",
        "E3\tObservation:T5 Name:T6 Numeric-Filter:E4", "E4\tEq-Comparison:T7 Value:T9 Value2:T8 Operator:T10",
        "A2\tEq-Operator-Value T10 BETWEEN",
        f"T11\tCondition {span('stage')}", f"T12\tCondition-Name {span('stage')}",
        f"T13\tEq-Comparison {span('III or IV')}", f"T14\tEq-Value {span('III')}",
        f"T15\tEq-Value {text.index('IV')} {text.index('IV') + 2}\tIV",
        "E5\tCondition:T11 Name:T12 Stage:E6", "E6\tEq-Comparison:T13 Value:T14 Value2:T15",
        f"T16\tObservation {span('Hb')}", f"T17\tObservation-Name {span('Hb')}",
        f"T18\tEq-Comparison {span('> 9 g/dL')}", f"T19\tEq-Operator {span('>')}", f"T20\tEq-Value {span('9')}",
        "E7\tObservation:T16 Name:T17 Numeric-Filter:E8", "E8\tEq-Comparison:T18 Operator:T19 Value:T20",
        "A3\tEq-Operator-Value T19 LT",
    ]) + "\n", encoding="utf-8")
    assert len(read_brat(tmp_path / "t1.ann").events) == 8
    gold = gold_comparisons(tmp_path / "t1.txt")
    assert [(g.type, g.op, g.values) for g in gold] == [
        ("Age", GTEQ, ("18",)), ("Observation", BETWEEN, ("1", "0")), ("Stage", EQ, ("III", "IV")),
        ("Observation", LT, ("9",))]
    report = evaluate_criteria(tmp_path)
    assert report.value_op.as_dict()["tp"] == 3 and report.value_op.n_pred == 4 and report.value_op.n_gold == 4
    assert report.end_to_end.as_dict()["tp"] == 3
    assert [g.op for g in report.misses] == [LT]
    assert report.as_json()["by_type"]["Stage"]["value_op"]["recall"] == 1.0


@pytest.mark.parametrize(("text", "expected"), [
    # a bound word before the attribute, an age stated with no operator, a rating with a number
    ("a minimum life expectancy of 12 weeks", [(GTEQ, ("12",), "measure")]),
    ("maximum BMI of 35 kg/m2", [(LTEQ, ("35",), "measure")]),
    ("an infant age of 6 months", [(EQ, ("6",), "age")]),
    ("Clinical Dementia Rating of 0", [(EQ, ("0",), "stage")]),
    # "or less than" followed by a number is the next comparison's operator, not a phrase after the value
    ("age > 21 or less than 2", [(GT, ("21",), "age"), (LT, ("2",), "age")]),
    # a ratio at the end of a sentence keeps both numbers
    ("have a resting blood pressure of > 140/90.", [(GT, ("140", "90"), "measure")]),
    # a duration that is the measured quantity, not a time window
    ("Confirmed onset-to-alarm time ≤ 4 hours at dispatch", [(LTEQ, ("4",), "measure")]),
    # negative bounds, spaced thousands, powers of ten
    ("BMD T-score ≤ -2.5 and > -4.0 at the lumbar spine", [(LTEQ, ("-2.5",), "measure"), (GT, ("-4.0",), "measure")]),
    ("Platelet count below 100 000/µL", [(LT, ("100 000",), "measure")]),
    ("HCV RNA ≥ 10^4 IU/mL at screening", [(GTEQ, ("10^4",), "measure")]),
    # tolerances
    ("Corrected age 40 ± 2 weeks", [(PLUS_MINUS, ("40", "2"), "measure")]),
    ("Body weight stable (± 3 kg)", [(PLUS_MINUS, ("3",), "measure")]),
    # a performance status with one value and no operator; a physical status range
    ("ECOG performance status 0", [(EQ, ("0",), "measure")]),
    ("Clinical Dementia Rating (CDR) global score of 0.5", [(EQ, ("0.5",), "measure")]),  # not a grade 0
    ("ASA physical status I-III", [(BETWEEN, ("I", "III"), "stage")]),
    # g/day of something that is not a drug; the second bound of a pair split by population
    ("Alcohol consumption > 20 g/day for women or > 30 g/day for men",
     [(GT, ("20",), "measure"), (GT, ("30",), "measure")]),
    # two bounds joined by "to" stay two bounds
    ("Healthy adults ≥ 18 years to < 50 years of age", [(GTEQ, ("18",), "age"), (LT, ("50",), "age")]),
    # long prose criteria (a third helper set)
    ("Baseline blood glucose under 50 mg/dL or over 400 mg/dL", [(LT, ("50",), "measure"), (GT, ("400",), "measure")]),
    ("Plasma HIV-1 RNA < 50 copies/mL for at least 12 months", [(LT, ("50",), "measure")]),
    ("ECOG performance status 0 or 1, and LVEF > 50%", [(IN, ("0", "1"), "measure"), (GT, ("50",), "measure")]),
    ("a systolic blood pressure drop of 20 mm Hg or more", [(GTEQ, ("20",), "measure")]),
    ("Patients must be > 12 months and ≤ 21 years of age", [(GT, ("12",), "age"), (LTEQ, ("21",), "age")]),
    ("maximum serum creatinine 0.6 mg/dL", [(LTEQ, ("0.6",), "measure")]),
    ("follicular lymphoma grade 1 to 3a", [(BETWEEN, ("1", "3a"), "stage")]),
    ("gait speed less than 0.8 m/s over a 4-meter course", [(LT, ("0.8",), "measure")]),
])
def test_more_ways_of_writing_a_bound(text: str, expected: list[tuple[object, ...]]) -> None:
    assert [(c.op, c.values, c.kind) for c in find_comparisons(text)] == expected


@pytest.mark.parametrize("text", [
    "time since diagnosis < 6 months", "At least 5 years since last menstrual period",
    "≥ 1 documented relapse within the prior year", "More than 2 prior lines of systemic therapy",
    "Study ID VAC-2021-004", "norepinephrine ≥ 0.1 µg/kg/min", "bipolar I or II disorder",
    "aspirin at doses greater than 325 mg per day", "triptans on 10 or more days per month",
])
def test_no_patient_bound_is_read_from(text: str) -> None:
    assert find_comparisons(text) == []


def test_an_eq_written_as_a_range_is_scored_as_between(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("-  ASA grade 1- 4\n-  grade 2 or 4\n", encoding="utf-8")
    text = (tmp_path / "r.txt").read_text(encoding="utf-8")
    a, b = text.index("1- 4"), text.index("2 or 4")
    (tmp_path / "r.ann").write_text("\n".join([
        f"T1\tObservation {text.index('ASA')} {text.index('ASA') + 3}\tASA",
        f"T2\tEq-Comparison {a} {a + 4}\t1- 4", f"T3\tEq-Value {a} {a + 1}\t1", f"T4\tEq-Value {a + 3} {a + 4}\t4",
        "E1\tObservation:T1 Numeric-Filter:E2", "E2\tEq-Comparison:T2 Value:T3 Value2:T4",
        # a gold EQ over two values that are a set, not a range: a BETWEEN prediction does not match it
        f"T5\tObservation {text.index('grade 2')} {text.index('grade 2') + 5}\tgrade",
        f"T6\tEq-Comparison {b} {b + 6}\t2 or 4", f"T7\tEq-Value {b} {b + 1}\t2", f"T8\tEq-Value {b + 5} {b + 6}\t4",
        "E3\tObservation:T5 Numeric-Filter:E4", "E4\tEq-Comparison:T6 Value:T7 Value2:T8",
    ]) + "\n", encoding="utf-8")
    report = evaluate_criteria(tmp_path)
    assert report.value_op.tp_gold == 2  # BETWEEN 1..4 for the range; IN {2, 4} for the set
    (tmp_path / "r.txt").write_text("-  ASA grade 1- 4\n-  grade 2 to 4\n", encoding="utf-8")
    assert evaluate_criteria(tmp_path).value_op.tp_gold == 1  # now predicted BETWEEN 2..4: not the gold set {2, 4}


def test_a_folder_without_annotations_is_refused_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(ConstraintError, match=str(tmp_path)):
        evaluate_criteria(tmp_path)
    (tmp_path / "x.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "x.ann").write_text("T1\tAge nonsense\n", encoding="utf-8")
    with pytest.raises(ConstraintError, match=r"x\.ann: line 1"):
        evaluate_criteria(tmp_path)


@pytest.mark.skipif(not LCT.is_dir(), reason="the LCT corpus is in ../shared/data/external")
def test_lct_batches_kept_out_of_development_stay_above_their_floor() -> None:
    """Batches 6-10 were never read while the rules were written (only their totals were printed): measured 0.824 /
    0.755 F1 at first, 0.853 / 0.794 after the classes of error found in training/, batches 1-5 and three sets
    helpers wrote (tests/fixtures/lct-h1..h3) were fixed."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for i in range(6, 11):
            os.symlink(LCT / f"batch{i}", Path(tmp) / f"batch{i}")
        report = evaluate_criteria(Path(tmp)).as_json()
    assert report["value_op"]["f1"] >= 0.85, report["value_op"]
    assert report["end_to_end"]["f1"] >= 0.78, report["end_to_end"]
    assert report["by_type"]["Age"]["value_op"]["f1"] >= 0.90


@pytest.mark.parametrize(("folder", "value_op", "end_to_end"), [
    # 40 trials each, annotated in the LCT scheme by helpers who never saw this code. lct-h1 (plain): first
    # measured 0.949 / 0.907 F1, then 0.988 / 0.944; lct-h2 (messy registry text): 0.933 / 0.888, then 0.983 / 0.926;
    # lct-h3 (long prose): 0.909 / 0.806, then 0.939 / 0.836
    ("lct-h1", 0.95, 0.90), ("lct-h2", 0.95, 0.90), ("lct-h3", 0.92, 0.80),
])
def test_criteria_written_by_someone_else_stay_above_their_floor(folder: str, value_op: float,
                                                                 end_to_end: float) -> None:
    report = evaluate_criteria(Path(__file__).resolve().parents[1] / "fixtures" / folder).as_json()
    assert report["value_op"]["f1"] >= value_op, report["value_op"]
    assert report["end_to_end"]["f1"] >= end_to_end, report["end_to_end"]
    assert report["lines"] >= 400
