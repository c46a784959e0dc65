"""`dkg ingest --explain PAGE`: the picture of what the parser saw agrees with what it parsed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from dkg.pdf import parse_page
from dkg.pdf.explain import GREEN, RED, explain_page
from dkg_cli.main import app
from tests.pdf_support import SHARED

KID = SHARED / "reference" / "guidelines" / "KID" / "2.2023" / "KID-2.2023.pdf"
VA_DOD = SHARED / "data" / "external" / "va-dod-lbp-cpg-2022" / "va-department_of_defense.pdf"


def _pixels(png: Path, colour: tuple[int, int, int]) -> int:
    img = np.asarray(Image.open(png).convert("RGB")).astype(int)
    return int((np.abs(img - np.array(colour)).sum(axis=2) < 30).sum())


def test_the_picture_shows_what_the_page_parsed_to(tmp_path: Path) -> None:
    e = explain_page(KID, 1, tmp_path / "p1.png")
    parsed = parse_page(KID, 1)
    assert [b.id for b in e.page.boxes] == [b.id for b in parsed.boxes]
    assert [(a.source, a.target) for a in e.page.arrows] == [(a.source, a.target) for a in parsed.arrows]
    assert e.path == "vector" and e.heads >= len(parsed.arrows) and len(parsed.links) == 3
    assert _pixels(e.png, GREEN) > 200 * len(parsed.arrows) / 9  # the arrows are drawn
    assert _pixels(e.png, RED) > 0  # and the heads
    # a page with no arrows draws none
    assert explain_page(VA_DOD, 12, tmp_path / "text.png").page.arrows == []
    assert _pixels(tmp_path / "text.png", GREEN) == 0


def test_the_cli_finds_a_page_by_its_label(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ingest", str(KID), "--explain", "KID-3", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "explain-KID-3.png").exists() and "KID-3" in result.output
    missing = CliRunner().invoke(app, ["ingest", str(KID), "--explain", "KID-9", "--out", str(tmp_path)])
    assert missing.exit_code != 0 and "no page labelled 'KID-9'" in str(missing.exception)


@pytest.mark.slow
def test_a_scanned_page_is_explained_on_its_own_geometry(tmp_path: Path) -> None:
    e = explain_page(VA_DOD, 18, tmp_path / "p18.png")
    assert e.path == "ocr" and len(e.page.boxes) >= 13 and len(e.page.arrows) >= 14
    with Image.open(e.png) as img:
        assert img.width > 600
