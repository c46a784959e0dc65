"""Shared helpers for the PDF tests: reference documents and generated variants."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DKG_SHARED_DIR", ROOT.parent / "shared"))
REFERENCE = SHARED / "reference" / "guidelines"


def reference_pdfs() -> list[Path]:
    """Every reference guideline PDF (two versions of ALL, KID, BONE).

    Raises:
        FileNotFoundError: the shared data is not beside the checkout (set DKG_SHARED_DIR).
    """
    pdfs = sorted(REFERENCE.glob("*/*/*.pdf"))
    if not pdfs:
        raise FileNotFoundError(f"no reference PDFs under {REFERENCE}: put shared/ beside the checkout "
                                "or set DKG_SHARED_DIR")
    return pdfs


def truth_of(pdf: Path) -> Path:
    """The truth.json beside a reference PDF."""
    return pdf.parent / "truth.json"
