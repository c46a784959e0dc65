"""The attribute registry: proposals, decisions, units, and the gate's refusals with clear messages."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from dkg.constraints.comparisons import find_comparisons
from dkg.constraints.qualifiers import find_qualifiers
from dkg.constraints.registry import (
    Registry,
    Where,
    alias_key,
    apply_decision,
    constraints_for,
    convert,
    read_registry,
    snake_name,
    write_registry,
)
from dkg.constraints.table import BoxText, build_rows
from dkg.constraints.vocabulary import base_seed, load_base_vocabulary
from dkg.errors import ConstraintError
from dkg.validate.constraints_gate import helper_columns

WHERE = Where("HL", "1.2024", "HL-3", "p3_b5", "Creatinine clearance ≥ 30 mL/min")


def seed() -> Registry:
    reg = base_seed()
    assert isinstance(reg, Registry)
    return reg


def items(reg: Registry, text: str) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for c in [*find_comparisons(text), *find_qualifiers(text)]:
        found = constraints_for(reg, c, WHERE)
        out += [i.to_json() for i in (found[1] if found else [])]
    return out


def test_the_seed_is_the_vocabulary_approved_with_aliases() -> None:
    reg = seed()
    assert set(reg.approved()) == set(load_base_vocabulary().attributes)
    assert reg.resolve("ECOG PS").name == "performance_status"  # type: ignore[union-attr]
    assert reg.resolve("favorable risk and KPS").name == "performance_status"  # type: ignore[union-attr]
    assert reg.resolve("Deauville score") is None


def test_new_attributes_are_proposed_with_type_unit_range_and_where_first_seen() -> None:
    reg = seed()
    assert items(reg, "Creatinine clearance ≥ 30 mL/min") == [
        {"attr": "creatinine_clearance", "op": ">=", "value": 30, "unit": "mL/min"}]
    assert items(reg, "Deauville score 4–5") == [{"attr": "deauville", "op": ">=", "value": 4},
                                                 {"attr": "deauville", "op": "<=", "value": 5}]
    assert items(reg, "CD20-positive") == [{"attr": "cd20_status", "op": "=", "value": "positive"}]
    assert items(reg, "non-bulky disease") == [{"attr": "bulky", "op": "=", "value": "no"}]
    assert items(reg, "stage IIB") == [{"attr": "stage", "op": "=", "value": "IIB"}]
    crcl = reg.attributes["creatinine_clearance"]
    assert (crcl.type, crcl.unit, crcl.status) == ("number", "mL/min", "proposed")
    assert crcl.min == 0 and crcl.max and crcl.max >= 30
    assert (crcl.first_seen.guideline, crcl.first_seen.page, crcl.first_seen.box) == ("HL", "HL-3", "p3_b5")
    assert reg.attributes["stage"].status == "approved" and reg.attributes["stage"].proposed_values == ["IIB"]
    assert {a.name for a in reg.pending()} == {"creatinine_clearance", "deauville", "cd20_status", "bulky", "stage"}
    # the same attribute in another spelling and unit is one attribute, converted
    assert items(reg, "creatinine clearance (CrCl) below 1.8 L/h") == [
        {"attr": "creatinine_clearance", "op": "<", "value": 30, "unit": "mL/min"}]


def test_a_unit_that_does_not_convert_is_refused_naming_the_box_and_page() -> None:
    reg = seed()
    items(reg, "Creatinine clearance ≥ 30 mL/min")
    with pytest.raises(ConstraintError, match=r"HL 1\.2024 page HL-3 box p3_b5.*'cm' of creatinine_clearance does "
                                              r"not convert"):
        items(reg, "Creatinine clearance < 2 cm")


def test_the_extractor_raises_for_a_box_whose_unit_does_not_convert() -> None:
    rows = [{"guideline": "HL", "version": "1.2024", "kind": "arrow", "head_id": "a", "tail_id": t, "head": "x",
             "tail": text, "head_plain": "Patient with lymphoma", "tail_plain": text, "head_page": "HL-3",
             "tail_page": "HL-3"} for t, text in (("b", "Creatinine clearance ≥ 30 mL/min"),
                                                   ("c", "Creatinine clearance < 2 cm"))]
    boxes = {r["tail_id"]: BoxText(r["tail_id"], r["tail_plain"], ()) for r in rows}
    boxes["a"] = BoxText("a", "Patient with lymphoma", ())
    with pytest.raises(ConstraintError, match="page HL-3 box c"):
        build_rows(rows, boxes, load_base_vocabulary(), lambda _t: None, registry=seed())


def test_units_convert_with_pint_and_refuse_what_does_not() -> None:
    assert convert(10, "g/dL", "g/L") == pytest.approx(100)
    assert convert(1.8, "L/h", "mL/min") == pytest.approx(30)
    assert convert(1, "cm", "mg") is None
    assert convert(1.2, "mg/dL", "µmol/L") is None  # needs a molar mass: not guessed


def test_decisions_rename_merge_reject_and_each_is_a_new_registry_version(tmp_path: Path) -> None:
    path = tmp_path / "attributes.json"
    reg = seed()
    items(reg, "Deauville score 1–3")
    items(reg, "non-bulky")
    items(reg, "CD30-positive")
    write_registry(reg, path)
    v1 = reg.version
    final = apply_decision(reg, ["deauville", "bulky", "cd30_status"],
                           {"action": "approve_with_changes", "rename": {"deauville": "deauville_score"}}, path,
                           "test")
    assert final == ["deauville_score", "bulky", "cd30_status"]
    again = read_registry(path, seed())
    assert again.version == v1 + 1 and {"deauville_score", "bulky", "cd30_status"} <= set(again.approved())
    assert "deauville" in again.attributes["deauville_score"].aliases
    assert (path.parent / "history" / f"attributes-v{again.version:05d}.json").exists()
    with pytest.raises(ConstraintError, match="the types differ"):
        again.merge("deauville_score", "bulky")
    with pytest.raises(ConstraintError, match="exists"):
        again.rename("bulky", "stage")
    with pytest.raises(ConstraintError, match="no attribute named 'nope'"):
        again.rename("nope", "x")
    items(again, "HER2 negative")
    with pytest.raises(ConstraintError, match="her2_status rejected by test"):
        apply_decision(again, ["her2_status"], {"action": "reject"}, path, "test")
    assert read_registry(path, seed()).attributes["her2_status"].status == "rejected"


def test_a_corrupt_registry_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "attributes.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConstraintError, match=str(path)):
        read_registry(path, seed())


def _frame(tail_constraints: list[object]) -> pd.DataFrame:
    return pd.DataFrame([{"head": "h", "tail": "t", "head_id": "a", "tail_id": "b", "kind": "arrow",
                          "head_constraints": "[]", "tail_constraints": json.dumps(tail_constraints),
                          "head_kind": "condition", "tail_kind": "decision"}])


def test_the_gate_names_unapproved_attributes_and_refuses_contradictory_ranges() -> None:
    vocab = load_base_vocabulary()
    unknown = helper_columns(_frame([{"attr": "deauville", "op": ">=", "value": 4}]), vocab)
    assert unknown["_gx_tail_unknown_attributes"].tolist() == ["deauville"]
    assert unknown["_gx_tail_vocabulary_ok"].tolist() == [False]
    contradiction = helper_columns(_frame([{"attr": "age", "op": ">=", "value": 65, "unit": "years"},
                                           {"attr": "age", "op": "<", "value": 40, "unit": "years"}]), vocab)
    assert contradiction["_gx_tail_ranges_consistent"].tolist() == [False]
    fine = helper_columns(_frame([{"attr": "age", "op": ">=", "value": 18, "unit": "years"},
                                  {"attr": "age", "op": "<=", "value": 59, "unit": "years"}]), vocab)
    assert fine["_gx_tail_ranges_consistent"].tolist() == [True]
    assert fine["_gx_tail_unknown_attributes"].tolist() == [""]


@pytest.mark.parametrize(("british", "american"), [
    ("tumour size", "tumor size"), ("oesophageal varices", "esophageal varices"), ("haemoglobin", "hemoglobin"),
    ("anaemia", "anemia"), ("Tumours", "tumors"),
])
def test_british_and_american_spellings_are_one_attribute(british: str, american: str) -> None:
    assert alias_key(british) == alias_key(american)
    assert snake_name(british) == snake_name(american)
