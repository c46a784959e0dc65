"""Shared helpers for the PDF tests: reference documents and generated variants."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference" / "guidelines"


def reference_pdfs() -> list[Path]:
    """Every reference guideline PDF (two versions of ALL, KID, BONE)."""
    return sorted(REFERENCE.glob("*/*/*.pdf"))


def truth_of(pdf: Path) -> Path:
    """The truth.json beside a reference PDF."""
    return pdf.parent / "truth.json"
