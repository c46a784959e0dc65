"""Guidelines written by helper sessions that never saw the code (``tests/fixtures/heldout``), drawn in styles the
parser was never developed on, keep the floors measured on them: their constraint CSV passes the GX gate (a
decision no rule can read would stop the chain there) and its constraints score at least the floor, naming-blind.

Measured once at first sight before any change (0.43 / 0.38 / 0.21, every gate failed) and after the classes
were fixed; the floors sit a little under the latest measurement. See bench/first_sight.py for the whole chain.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dkg.constraints.evaluate import score_constraints
from dkg.pdf.stylematrix import build_cell, style_named
from dkg.settings import Settings

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.timeout(600)]
HELD_OUT = Path(__file__).resolve().parents[1] / "fixtures" / "heldout"

# guideline: (held-out matrix style it is drawn in, naming-blind F1 floor, the same with polarity names equated)
FLOORS = {
    "MEL": ("td-oval-curved-filled-grey", 0.62, 0.65),  # measured 0.659 / 0.682
    "THY": ("lr-diamond-straight-filled", 0.60, 0.60),  # measured 0.630 / 0.630
    "MDS": ("td-rounded-elbow-open-courier", 0.36, 0.55),  # measured 0.389 / 0.583
    # written later; at first sight (code c88db2e) the gate stopped it, 0.255; after the classes it showed: 0.450
    "HCC": ("lr-rect-fanout-thick-colour", 0.49, 0.50),  # measured 0.515 / 0.530
    # at first sight (code 80a7c7d) 0.339, the chain stopped at the QA gate; after the classes it showed
    "LUNG": ("td-rounded-fanout-open-thick", 0.48, 0.51),  # measured 0.512 / 0.544
    # at first sight (code 70b5efc) 0.297 (scanned copy 0.083); after the classes it showed
    "PROS": ("lr-oval-elbow-stealth-courier-grey", 0.41, 0.44),  # measured 0.435 / 0.463
    # at first sight (code 1ceebef) 0.275, the GX gate stopped the chain on two decisions no rule read; after those
    # two classes (candidacy, a branch named by its first clause) 0.345; then TNM lists and ranges, ineligible
    "BLAD": ("lr-rounded-diamond-curved-stealth-times", 0.44, 0.47),  # measured 0.470 / 0.504
}

# box texts the parser may lose in a style (BLAD's: a stray character before two box texts, measured at first sight)
UNMATCHED_BOXES = {"BLAD": 2}


@pytest.mark.parametrize("code", sorted(FLOORS))
def test_a_guideline_nobody_here_wrote_passes_the_gate_and_keeps_its_floor(
        code: str, services: Settings, prefect_harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.extract_constraints import extract_constraints
    from flows.ingest_guideline import ingest_guideline

    monkeypatch.setenv("DKG_AUTO_APPROVE_ATTRIBUTES", "1")
    monkeypatch.setenv("DKG_REGISTRY_FILE", str(tmp_path / "registry" / "attributes.json"))
    style, floor, floor_polarity = FLOORS[code]
    pdf, truth_path = build_cell(HELD_OUT / code / "truth.json", style_named(style), tmp_path / "drawn", False)
    assert style_named(style).held_out
    ingested = ingest_guideline(str(pdf), str(tmp_path / "out"))
    extracted = extract_constraints(ingested.edges_csv, str(tmp_path / "out"))  # raises when the gate fails
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    strict = score_constraints(Path(extracted.constraints_csv), truth, naming_blind=True)
    polar = score_constraints(Path(extracted.constraints_csv), truth, naming_blind=True, polarity_blind=True)
    assert strict.boxes_matched >= strict.boxes - UNMATCHED_BOXES.get(code, 1), strict
    assert strict.overall.f1 >= floor, (code, strict.overall, strict.per_attribute)
    assert polar.overall.f1 >= floor_polarity, (code, polar.overall)
