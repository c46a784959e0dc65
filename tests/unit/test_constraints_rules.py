"""Constraint rules that need no parser: normalisation, numbers, keywords, simplification, forms."""

from __future__ import annotations

import json

from dkg.constraints.extract import extract, normalise, numeric_constraints, simplify_or
from dkg.constraints.models import AnyOf, Constraint, items_from_json, items_to_json
from dkg.constraints.table import paper_form
from dkg.constraints.vocabulary import load_vocabulary

V = load_vocabulary()


def _c(attr: str, op: str, value: object, unit: str | None = None) -> Constraint:
    return Constraint(attr=attr, op=op, value=value, unit=unit)  # type: ignore[arg-type]


def test_words_become_symbols() -> None:
    assert normalise("65 years or older") == "≥ 65 years"
    assert normalise("aged 15–39") == "aged 15 to 39"
    assert normalise("poor/intermediate risk") == "poor or intermediate risk"
    assert normalise("Stage II–III") == "Stage II or Stage III"
    assert normalise("age >= 60") == "age ≥ 60"


def test_numbers_become_bounds() -> None:
    assert numeric_constraints(V, "less than 65 years of age") == [_c("age", "<", 65, "years")]
    assert numeric_constraints(V, "aged 15 to 39") == [_c("age", ">=", 15, "years"), _c("age", "<=", 39, "years")]
    assert numeric_constraints(V, "≥ 65 y") == [_c("age", ">=", 65, "years")]
    assert numeric_constraints(V, "ECOG PS 0 to 2") == [_c("performance_status", "<=", 2, "ECOG")]
    assert numeric_constraints(V, "KPS ≥80%") == [_c("performance_status", ">=", 80, "KPS%")]
    assert numeric_constraints(V, "<90% necrosis") == []  # a share of something, not an attribute
    assert numeric_constraints(V, "≤4 cm") == []


def test_or_of_one_attribute_becomes_in_and_shared_parts_factor_out() -> None:
    ph = _c("ph_status", "=", "positive")
    assert simplify_or([[_c("stage", "=", "II")], [_c("stage", "=", "III")]]) == [_c("stage", "in", ["II", "III"])]
    assert simplify_or([[ph, _c("grade", "=", "high")], [ph]]) == [ph, _c("grade", "=", "high")]
    out = simplify_or([[_c("age", ">=", 65, "years")], [_c("comorbidities", "=", "substantial")]])
    assert isinstance(out[0], AnyOf) and len(out[0].alternatives) == 2
    assert simplify_or([[], [ph]]) == [ph]  # an alternative that states nothing is dropped


def test_json_round_trip_and_paper_form() -> None:
    data = [{"attr": "ph_status", "op": "=", "value": "positive"},
            {"any_of": [{"attr": "age", "op": ">=", "value": 65, "unit": "years"},
                        {"attr": "comorbidities", "op": "=", "value": "substantial"}]}]
    items = items_from_json(data)
    assert items_to_json(items) == data
    assert paper_form(items) == "ph_status=positive, (age>=65 OR comorbidities=substantial)"
    assert paper_form([]) == "NULL"


def test_footnote_defining_an_age_group_adds_the_bound() -> None:
    note = 'In this guideline "adults" are patients aged 40 years or older; younger patients follow the AYA pathway.'
    got = extract(V, "Ph+ ALL, adults less than 65 years", None, [("adults", note)])
    assert {i.key() for i in got} >= {_c("age", ">=", 40, "years").key(), _c("age", "<", 65, "years").key()}


def test_action_boxes_carry_no_constraints_without_a_parse() -> None:
    assert extract(V, "Consider allogeneic HCT if not previously transplanted", None) == []
    assert json.dumps(items_to_json(extract(V, "MRD negative", None))) == \
        '[{"attr": "mrd", "op": "=", "value": "negative"}]'
