"""Shared helpers for the PDF tests: reference documents and generated variants."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

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


def drawn_text(text: str, font: str, size: int = 40, width: int = 170, height: int = 60) -> np.ndarray:
    """``text`` drawn black on white in one of reportlab's bundled fonts, as a greyscale array (glyph tests)."""
    import reportlab
    from PIL import Image, ImageDraw, ImageFont

    face = ImageFont.truetype(os.path.join(os.path.dirname(reportlab.__file__), "fonts", font), size)
    img = Image.new("L", (width, height), 255)
    ImageDraw.Draw(img).text((5, 5), text, font=face, fill=0)
    return np.asarray(img)
