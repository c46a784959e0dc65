"""Box text read from scans (issue 43): the classes behind the VA/DoD box-text errors, each on a drawing of its own."""

from __future__ import annotations

import os

import numpy as np
import pytest


def _font(size: int) -> object:
    import reportlab
    from PIL import ImageFont

    return ImageFont.truetype(os.path.join(os.path.dirname(reportlab.__file__), "fonts", "Vera.ttf"), size)


def test_text_touching_a_hexagons_outline_is_inside_the_mask() -> None:
    """A line of text touching the outline joins the hole's edge, and the hole runs around its letters; the mask
    still holds them (the hole's convex hull), and the corners beyond the slanted sides stay outside."""
    from PIL import Image, ImageDraw

    from dkg.pdf.ocr import _clean_binary, find_outlines
    from dkg.pdf.ocr_words import inside_outline

    img = Image.new("L", (700, 400), 255)
    draw = ImageDraw.Draw(img)
    draw.polygon([(60, 40), (440, 40), (480, 100), (440, 160), (60, 160), (20, 100)], outline=0, width=3)
    draw.text((110, 37), "serious conditions", font=_font(32), fill=0)  # the capitals' tops on the line
    gray = np.asarray(img).copy()
    (box, _, contour), = [f for f in find_outlines(_clean_binary(gray), 200 / 72) if f[0][2] > 300]
    x, y, w, h = box
    mask = inside_outline(contour, box)
    ink = np.zeros_like(gray, dtype=bool)
    ink[y + 6:80, 105:420] = gray[y + 6:80, 105:420] < 128  # the letters, below the line they touch
    assert ink.sum() > 1000
    assert (mask[ink[y:y + h, x:x + w]] > 0).mean() > 0.97
    assert mask[3, 3] == 0 and mask[h - 4, w - 4] == 0


def test_a_bulleted_list_is_joined_as_items() -> None:
    from dkg.pdf.text import join_lines

    assert join_lines(["Evaluate:", "• Duration of symptoms", "• Red flags", "▪ Risk factors"]) == \
        "Evaluate: Duration of symptoms; Red flags; Risk factors"
    assert join_lines(["Advise about self-care", "• Discuss options"]) == "Advise about self-care; Discuss options"
    assert join_lines(["Stage I-II", "non-bulky"]) == "Stage I-II non-bulky"  # no bullet, no semicolon


def test_a_lower_case_ocr_word_beside_a_descender_is_no_marker() -> None:
    from dkg.pdf.text import Glyph, find_superscripts

    key = (0, 0, 1, 1, 1)
    # OCR word boxes: "Consider" (capital to baseline), "a" (x-height to baseline), "multidisciplinary" (to its
    # descenders), and a raised marker "b" level with the capitals' tops
    words = [Glyph("Consider", 0, 10.0, 40, 20.0, 11.0, key), Glyph("a", 43, 13.0, 47, 20.0, 7.7, key),
             Glyph("multidisciplinary", 50, 10.0, 120, 22.5, 13.8, key), Glyph("b", 121, 9.0, 124, 15.0, 6.6, key)]
    assert find_superscripts(words) == {3}


@pytest.mark.parametrize(("text", "mark_kept"), [("CPG", False), ("why", True)])
def test_a_mark_before_a_closing_parenthesis_is_kept_only_on_the_baseline(text: str, mark_kept: bool) -> None:
    from PIL import Image, ImageDraw

    from dkg.pdf.ocr_words import _MARK_BEFORE_CLOSE, _sits_on_baseline

    img = Image.new("L", (200, 60), 255)
    draw = ImageDraw.Draw(img)
    draw.text((5, 10), text, font=_font(30), fill=0)
    end = 5 + draw.textlength(text, font=_font(30))
    if mark_kept:
        draw.text((end, 10), "?", font=_font(30), fill=0)  # a question mark on the line
        end += draw.textlength("?", font=_font(30))
    else:
        draw.text((end + 1, 6), "a", font=_font(16), fill=0)  # a footnote letter above it
        end += 12
    draw.text((end + 1, 10), ")", font=_font(30), fill=0)
    m = _MARK_BEFORE_CLOSE.search(text + "?)")
    assert m is not None and m.group(2) == ")"
    assert _sits_on_baseline(np.asarray(img), 0, 0, 200, 60, from_end=1) is mark_kept


@pytest.mark.parametrize("font", ["Vera.ttf", "VeraBd.ttf"])
def test_a_less_or_equal_sign_read_as_less_than_is_told_by_its_bar(font: str) -> None:
    from dkg.pdf.ocr_words import _has_underbar
    from tests.pdf_support import drawn_text

    def barred(text: str) -> bool:
        return _has_underbar(drawn_text(text, font), 0, 0, 170, 60, 1 if text.startswith("(") else 0)

    assert barred("≤4") and barred("(≤ 4") and barred("≥70")
    assert not any(barred(t) for t in ("<4", "(< 4", ">70"))


def test_a_box_word_read_without_confidence_is_kept_when_the_page_has_it() -> None:
    from dkg.pdf.ocr_words import known_words
    from dkg.pdf.text import Glyph

    def word(text: str) -> Glyph:
        return Glyph(text, 0, 0, 10, 10, 10.0)

    doubtful = [word("surveillance?"), word("Auris"), word("ae"), word("(preferred);")]
    confident = [word("Active"), word("surveillance"), word("(preferred)"), word("ae")]
    assert [g.text for g in known_words(doubtful, confident)] == ["surveillance?", "(preferred);"]


@pytest.mark.parametrize(("text", "strokes"), [("II", 2), ("III,", 3), ("I,", 1), ("I.", 1), ("II)", 2), ("IV", 0)])
def test_the_strokes_of_a_roman_numeral_are_counted_on_the_image(text: str, strokes: int) -> None:
    from PIL import Image, ImageDraw

    from dkg.pdf.ocr_words import _stroke_count

    img = Image.new("L", (200, 60), 255)
    draw = ImageDraw.Draw(img)
    draw.text((5, 8), text + " T1a", font=_font(36), fill=0)
    image = np.asarray(img)
    rows = np.flatnonzero((image[:, :12] < 128).any(axis=1))  # the first stroke's height: Tesseract's word box
    top, height = int(rows[0]), int(rows[-1] - rows[0] + 1)
    assert _stroke_count(image, 4, top, 10, height) == strokes  # a word box that ends after the first stroke


def test_a_hole_read_as_one_repeated_letter_or_gibberish_is_no_box() -> None:
    from dkg.pdf.ocr_words import _words_of_a_box, holds_text
    from dkg.pdf.text import Glyph

    def words(*pairs: tuple[str, float]) -> list[tuple[Glyph, float]]:
        return [(Glyph(t, 0, 0, 10, 10, 10.0), c) for t, c in pairs]

    assert not holds_text(words(("eee", 80)))
    assert holds_text(words(("Surveillance", 90)))
    # a reading after a rejected standard one: two words of three letters read with confidence, or one long word
    # covering the ink; not gibberish read with little confidence
    assert _words_of_a_box(words(("Surveillance", 91)), cover=0.95)
    assert not _words_of_a_box(words(("poe", 80)), cover=0.95)
    assert not _words_of_a_box(words(("Pay", 40), ("?", 20), ("one", 50), ("ie", 30)), cover=0.95)
    assert _words_of_a_box(words(("Less", 88), ("than", 90), ("CR", 85)), cover=0.5)
