"""A risk group that a footnote defines by a named risk index's categories ("Lower-risk …: <index> very low, low or
intermediate with a score ≤ 3.5"), read from a question that gives the index's category (no services).

The toy guideline and its index ("SRS-R") are made up for this test; nothing in the code names either."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from dkg.constraints.qualifiers import index_categories
from dkg.graph.model import BoxState, EdgeState, VersionState
from dkg.qa.reader import Reader
from dkg.qa.termdefs import share_index, split_definitions
from tests.unit.toy_guidelines import toy_reader

_NOTE = ("Lower-risk smouldering disease: SRS-R very low, low or intermediate with a score ≤ 4.5. Higher-risk "
         "smouldering disease: SRS-R intermediate with a score > 4.5, high or very high.")
_BOXES: list[tuple[str, str, str, list[dict[str, Any]]]] = [
    ("start", "Smouldering plasmacytic disease, newly diagnosed", "", []),
    ("lo", "Lower-risk smouldering disease", _NOTE, [{"attr": "risk_group", "op": "=", "value": "lower"}]),
    ("hi", "Higher-risk smouldering disease", _NOTE, [{"attr": "risk_group", "op": "=", "value": "higher"}]),
    ("obs", "Observation with laboratory review every 3 months", "", []),
    ("trial", "Clinical trial or early therapy", "", []),
]


def _toy() -> VersionState:
    boxes = {f"SM:{k}": BoxState(f"SM:{k}", "SM-1", f"{t} ({note})" if note else t, t,
                                 "treatment" if not c else "condition", json.dumps(c)) for k, t, note, c in _BOXES}
    edges = {EdgeState(f"SM:{a}", f"SM:{b}", "ARROW", "") for a, b in (
        ("start", "lo"), ("start", "hi"), ("lo", "obs"), ("hi", "trial"))}
    return VersionState("SM", "Smouldering Plasmacytic Disease", "1", "sha", boxes, edges)


@pytest.fixture(scope="module")
def rd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    yield from toy_reader(tmp_path_factory, _toy(), (("risk group", "lower", None), ("risk group", "higher", None)))


def test_an_index_and_its_categories_are_one_attribute() -> None:
    said = [(c.attr, c.op, c.values) for c in index_categories("XYZ-R very low, low or intermediate; QRI high-risk")]
    assert said == [("XYZ-R risk", "IN", ("very_low", "low", "intermediate")), ("QRI risk", "EQ", ("high",))]
    assert index_categories("LDH high, albumin low") == []  # a laboratory value is not an index
    assert index_categories("PD-L1 low or high") == []  # an expression level of a protein


def test_a_list_of_categories_names_its_index_in_each_criterion() -> None:
    (lower, higher) = split_definitions(_NOTE)
    assert lower.any_of
    assert lower.criteria == ("SRS-R very low", "SRS-R low", "SRS-R intermediate with SRS-R score ≤ 4.5")
    assert higher.criteria[1:] == ("SRS-R high", "SRS-R very high")
    assert share_index(("creatinine clearance < 60 mL/min", "low")) == ("creatinine clearance < 60 mL/min", "low")


@pytest.mark.parametrize(("question", "group"), [
    ("Smouldering plasmacytic disease, SRS-R low. What next?", "lower"),
    ("Smouldering plasmacytic disease, SRS-R very high, 58 years old. What next?", "higher"),
    ("Smouldering plasmacytic disease, SRS-R very low. Next step?", "lower"),
])
def test_the_index_category_a_question_gives_places_the_patient(rd: Reader, question: str, group: str) -> None:
    r = rd.read(question)
    assert r.facts.get("risk_group") == group, (r.facts, [(s.attr, s.rule) for s in r.sources])


def test_an_intermediate_category_needs_the_score(rd: Reader) -> None:
    r = rd.read("Smouldering plasmacytic disease, SRS-R intermediate. What next?")
    assert "risk_group" not in r.facts  # intermediate is lower or higher by the score, which was not given


def test_no_response_to_a_line_of_treatment_is_a_condition_of_its_own() -> None:
    from dkg.constraints.qualifiers import find_qualifiers

    said = [(c.attr, c.values) for c in find_qualifiers(
        "Lower-risk smouldering disease with anaemia not responding, or unlikely to respond, to first-line therapy")]
    assert ("response to first-line therapy", ("no",)) in said  # not only the risk group
    assert [(c.attr, c.values) for c in find_qualifiers("Disease refractory to second-line treatment")] == \
        [("response to second-line treatment", ("no",))]
    assert find_qualifiers("Response to first-line therapy assessed at week 12") == []
