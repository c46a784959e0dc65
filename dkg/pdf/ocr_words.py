"""Words read by Tesseract from a scanned page, and each repair of what it misreads (issue 43).

A word is repaired only on evidence from its own glyphs (a bar under a chevron, a mark on the baseline, upright
strokes), the word before it, or the page's other words, never from text a box is expected to hold. A box's
interior is read again another way when its first reading leaves ink unread or doubts a word (``read_box``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from dkg.errors import TransientError
from dkg.pdf import ocr_cache
from dkg.pdf.text import Glyph

_SUPERSCRIPT_JUNK = re.compile(r"(?<=[\w)])[‘’'`®!?*\"”“°#™^]+$")
# Inside a box, a raised footnote marker after punctuation ("imaging;ᵃ", "relapse,ᵇ") comes out as a mark or "TM".
_MARK_AFTER_PUNCT = re.compile(r"(?<=[;,:.)])(?:[*'‘’`\"”“|™®°^]+|TM)$")
_MARK_BEFORE_CLOSE = re.compile(r"(?<=\w)([?*'‘’`°^™®]+)([)\]]+)$")
_DASHES = {"–", "—", "-"}
_ROMAN_WITH_L = re.compile(r"([(]?)([IlVX]{2,5})([,.;:)]*)")
_ROMAN_CONTEXT = {"stage", "stages", "grade", "grades", "class", "phase", "type", "tier", "level", "group", "line",
                  "cycle", "arm", "part", "step", "and", "or", "to"}


def _roman_numeral(text: str, before: str) -> str:
    """A Roman numeral whose I was read as l ("Stage Il", "II-Ill", "Ill"): I again, where the context says so.

    A part changes when it is made of I, l, V and X only, with an l and an I, V or X. "Il" is no English word and
    always changes; a longer one ("Ill") only after a word that takes a numeral (stage, grade, class …) or in a
    dash compound whose every part is a numeral ("II-Ill")."""
    parts = re.split(r"([-–—/])", text)
    romanish = [bool(_ROMAN_WITH_L.fullmatch(p)) or bool(re.fullmatch(r"[(]?[IVX]+[,.;:)]*", p))
                for p in parts[::2]]
    if not any(romanish):
        return text
    context = before.lower().strip("(,;:") in _ROMAN_CONTEXT or (len(romanish) > 1 and all(romanish))
    out = []
    for i, p in enumerate(parts):
        m = _ROMAN_WITH_L.fullmatch(p) if i % 2 == 0 else None
        if m and "l" in m.group(2) and re.search("[IVX]", m.group(2)) and (m.group(2) == "Il" or context):
            p = m.group(1) + m.group(2).replace("l", "I") + m.group(3)
        out.append(p)
    return "".join(out)


_NOISE = re.compile(r"^[|_\-~—–=:;.,'‘’`\"”“!*°#®™^<>«»→/\\()\[\]{}]+$")  # arrows and rules read as text


def _glyph_runs(crop: np.ndarray) -> list[tuple[int, int]]:
    """Column spans of the inked runs of a binary word image, left to right."""
    cols = [bool(v) for v in np.asarray(crop.any(axis=0)).ravel()]
    runs: list[tuple[int, int]] = []
    start = None
    for i, on in enumerate([*cols, False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            runs.append((start, i - 1))
            start = None
    return runs


def _ink(gray: np.ndarray) -> np.ndarray:
    """Ink of a word image: anything well darker than the paper, for grey print and thin strokes alike."""
    if gray.size == 0:
        return np.zeros(gray.shape, bool)
    return np.asarray(gray < max(128, min(200, (int(gray.min()) + 255) // 2 + 20)))


def _glyph_at(image: np.ndarray, x: int, y: int, w: int, h: int, skip: int) -> tuple[np.ndarray, int, int] | None:
    """The ink of a word's glyph after ``skip`` others (an opening parenthesis), with its top and bottom rows;
    None when the word has no such glyph or it is too narrow to judge."""
    crop = _ink(np.asarray(image[max(0, y):y + h, max(0, x):x + w]))  # thin grey diagonals are ink
    runs = _glyph_runs(crop)
    if len(runs) <= skip:
        return None
    a, b = runs[skip]
    glyph = crop[:, a:b + 1]
    rows = np.flatnonzero(glyph.any(axis=1))
    if rows.size == 0 or b - a < 3:
        return None
    return glyph, int(rows[0]), int(rows[-1])


def _bar_under(glyph: np.ndarray, top: int, bottom: int) -> float:
    """Share of the glyph's width inked in its lowest eighth."""
    height = bottom - top + 1
    return float(glyph[bottom - max(1, height // 8):bottom + 1].any(axis=0).mean())


def _first_is_greater_equal(image: np.ndarray, x: int, y: int, w: int, h: int, skip: int) -> bool:
    """Whether the glyph read as "2" at the start of a number is "≥": a chevron over a bar, whose lower arm comes
    back to the left edge at mid-height, where a "2" has no ink (its stroke runs from the top right down to the
    bottom left). ``skip`` glyphs before it (an opening parenthesis) are passed over."""
    found = _glyph_at(image, x, y, w, h, skip)
    if found is None:
        return False
    glyph, top, bottom = found
    height = bottom - top + 1
    left = glyph[top:bottom + 1, : max(1, glyph.shape[1] // 4)]
    band = left[int(0.42 * height):int(0.68 * height)]
    return bool(band.any()) and _bar_under(glyph, top, bottom) >= 0.5


def _has_underbar(image: np.ndarray, x: int, y: int, w: int, h: int, skip: int) -> bool:
    """Whether the glyph read as "<" or ">" before a number has a bar under its chevron ("≤4 cm" read as "<4 cm"):
    its lowest rows are inked across most of its width, where a bare chevron ends in a point."""
    found = _glyph_at(image, x, y, w, h, skip)
    return found is not None and _bar_under(*found) >= 0.6


def _stroke_count(image: np.ndarray, x: int, y: int, w: int, h: int) -> int:
    """Thin upright strokes of a word read as Roman ones ("I", "II"), counted on the image from the word's left
    edge up to the next space (the word's box can end after its first stroke)."""
    crop = _ink(np.asarray(image[max(0, y):y + h, max(0, x):x + w + h]))
    runs = _glyph_runs(crop)
    count, end, tall = 0, None, 0
    for a, b in runs:
        if end is not None and a - end > 0.35 * h:
            break  # a space: the next word
        rows = np.flatnonzero(crop[:, a:b + 1].any(axis=1))
        tall = tall or int(rows[-1] - rows[0] + 1)
        if rows[-1] - rows[0] + 1 < 0.7 * tall:
            break  # punctuation after the numeral (",", ".")
        if b - a + 1 > 0.3 * h:
            return 0  # a wider glyph: not a stroke of a numeral
        if crop[rows[0]:rows[-1] + 1, a:b + 1].mean() < 0.7:
            break  # a curve (a closing parenthesis), not an upright bar
        count, end = count + 1, b
    return count


def _sits_on_baseline(image: np.ndarray, x: int, y: int, w: int, h: int, from_end: int = 0) -> bool:
    """Whether the last glyph of a word reaches down to its baseline (a question mark's dot), unlike a raised
    footnote marker, which stays in the upper part of the line. The glyph is the last run of inked columns; the
    baseline is where most of the word's other glyphs end (a parenthesis before the mark reaches lower)."""
    crop = _ink(np.asarray(image[max(0, y):y + h, max(0, x):x + w]))
    if crop.size == 0 or h < 6:
        return False
    runs = _glyph_runs(crop)
    runs = runs[:len(runs) - from_end]  # closing punctuation after the mark
    if not runs:
        return False
    spans = [np.flatnonzero(crop[:, a:b + 1].any(axis=1)) for a, b in runs]
    top, bottom = int(spans[-1][0]), int(spans[-1][-1])
    others = sorted(int(r[-1]) for r in spans[:-1])
    height = int(crop.shape[0])
    baseline = others[len(others) // 2] if len(others) >= 2 else 0.8 * height
    return bottom >= baseline - 0.1 * height and top <= 0.5 * height


_BULLET_READINGS = {"•", "¢", "©", "@", "«", "»", "e", "o"}
"""What tesseract reads a bullet as when it stands alone before a line's first word."""


def _line_key(data: dict[str, list[Any]], i: int, dx: float, dy: float) -> tuple[int, ...]:
    return (int(dx), int(dy), data["block_num"][i], data["par_num"][i], data["line_num"][i])


def _mend(text: str, raw: str, image: np.ndarray, box: tuple[int, int, int, int], previous: str) -> str:
    """A word as printed, from what Tesseract read (``raw``, ``text`` with a trailing marker taken off), each
    repair checked on the word's glyphs (``box`` in ``image``) or the word before it, never on expected text."""
    x, y, w, h = box
    if raw.endswith("?") and text and not text.endswith("?") and _sits_on_baseline(image, x, y, w, h):
        text += "?"  # a question's own mark, not a raised footnote marker read as one
    inner = _MARK_BEFORE_CLOSE.search(text)
    if inner and not _sits_on_baseline(image, x, y, w, h, from_end=len(inner.group(2))):
        text = text[:inner.start(1)] + inner.group(2)  # "CPGᵃ)" read as "CPG?)": the marker, not a mark
    text = re.sub(r"^=(?=\d)", "≥", text)  # "≥65" read as "=65"
    skip = 1 if text.startswith("(") else 0
    if re.fullmatch(r"\(?2(?:\d|$).*", text) and _first_is_greater_equal(image, x, y, w, h, skip):
        text = re.sub(r"2", "≥", text, count=1)  # "≥70" read as "270", "(≥ 70 y)" as "(2 70 y)"
    if re.fullmatch(r"\(?[<>](?:\d|$).*", text) and _has_underbar(image, x, y, w, h, skip):
        text = re.sub(r"[<>]", lambda m: "≤" if m.group(0) == "<" else "≥", text, count=1)  # "≤4" read as "<4"
    text = re.sub(r"^(\(?[a-z])-([a-z]\.)", r"\1.\2", text)  # "(e.g.," read as "(e-g.,"
    text = _MARK_AFTER_PUNCT.sub("", text)
    text = _roman_numeral(text, previous)
    ones = re.fullmatch(r"(I{1,3})([,.;:)]*)", text)
    if ones and previous.lower() in _ROMAN_CONTEXT:
        strokes = _stroke_count(image, x, y, w, h)
        if len(ones.group(1)) < strokes <= 3:
            text = "I" * strokes + ones.group(2)  # "Stage II" read as "Stage I"
    return text


def read_words(image: np.ndarray, psm: int, scale: float, dx: float = 0, dy: float = 0,
               min_conf: float = 20.0, upscale: float = 1.0, inside: bool = False) -> list[tuple[Glyph, float]]:
    import pytesseract

    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # tesseract's threads fight the page fan-out
    if upscale != 1.0:
        import cv2

        image = cv2.resize(image, None, fx=upscale, fy=upscale, interpolation=cv2.INTER_CUBIC)
        scale *= upscale
        dx *= upscale
        dy *= upscale
    folder = ocr_cache.cache_dir()
    cache_key = ocr_cache.image_key(image, psm, "eng") if folder is not None else ""
    data = ocr_cache.lookup(folder, cache_key)
    if data is None:
        try:
            data = pytesseract.image_to_data(image, lang="eng", config=f"--psm {psm}",
                                             output_type=pytesseract.Output.DICT)
        except pytesseract.TesseractNotFoundError as e:
            raise TransientError("tesseract is not installed (apt-get install tesseract-ocr)") from e
        except RuntimeError as e:  # tesseract timed out or crashed: worth a retry
            raise TransientError(f"tesseract failed: {e}") from e
        ocr_cache.remember(folder, cache_key, data)
    out: list[tuple[Glyph, float]] = []
    for i, text in enumerate(data["text"]):
        conf = float(data["conf"][i])
        if not text.strip() or conf < 0:
            continue
        x, y, w, h = (data[k][i] for k in ("left", "top", "width", "height"))
        raw = text.strip()
        text = _SUPERSCRIPT_JUNK.sub("", raw)
        # a line or arrow beside a word read as part of it ("No]", "|Yes"): the word's box shrinks to the
        # letters, so the line art stays ink for the connector search
        m = re.fullmatch(r"([\[\]|{}]*)(.*?\w.*?)([\[\]|{}]*)", text)
        if not inside and m and (m.group(1) or m.group(3)) and len(text) > 1:
            per = w / len(text)
            x, w = x + round(per * len(m.group(1))), max(1, round(per * len(m.group(2))))
            text = m.group(2)
        if inside:  # inside a box, where no outline is left to read as a bar
            text = re.sub(r"^\|(?=$|[,;.)])", "I", text)  # a lone capital I read as a bar
        if inside and text in _BULLET_READINGS and (not out or out[-1][0].line_key != _line_key(data, i, dx, dy)):
            text = "•"  # a list's bullet opening a line, read as a letter or sign ("¢ Duration of symptoms")
        text = _mend(text, raw, image, (x, y, w, h), out[-1][0].text if out else "")
        dash = inside and text in _DASHES  # "1 – 3": kept below when it stands between two words of its line
        if not text or (_NOISE.match(text) and not dash) or conf < min_conf:
            continue
        key = _line_key(data, i, dx, dy)
        g = Glyph(text, (x + dx) / scale, (y + dy) / scale, (x + w + dx) / scale, (y + h + dy) / scale,
                  h / scale * 1.1, key)
        out.append((g, conf))
    if inside:
        out = [(g, c) for j, (g, c) in enumerate(out) if g.text not in _DASHES or (
            0 < j < len(out) - 1 and out[j - 1][0].line_key == g.line_key == out[j + 1][0].line_key)]
    return out


def _core(text: str) -> str:
    return re.sub(r"[^\w]+", "", text).lower()


def known_words(doubtful: list[Glyph], confident: list[Glyph]) -> list[Glyph]:
    """The box words read with hardly any confidence that are words of the page: a word read with confidence
    elsewhere on it ("surveillance" beside a raised marker, read at confidence 0 in one box and at 96 in three
    others). Any other such word is dropped as speckle."""
    vocabulary = {_core(g.text) for g in confident}
    return [g for g in doubtful if len(_core(g.text)) >= 3 and _core(g.text) in vocabulary]


def inside_outline(contour: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """A mask (255 inside) of what lies inside a box's outline, within its bounding ``box`` (x, y, w, h): what is
    outside — the slanted sides of hexagons, diamonds and ovals, the corners of rounded boxes, which in a thick
    house style reach into the text's rectangle and are read as letters ("a", "X") — is blanked before reading.
    The hole's convex hull, not the hole: a line of text touching the outline joins it, and the hole then runs
    around those letters, which would be blanked with the outline ("Are serious c identified?")."""
    import cv2

    x, y, w, h = box
    canvas = np.zeros((h, w), np.uint8)
    cv2.drawContours(canvas, [cv2.convexHull(contour)], -1, 255, thickness=-1, offset=(-x, -y))
    return np.asarray(cv2.erode(canvas, np.ones((5, 5), np.uint8)))


READINGS = ((3, 2.0), (0, 1.0), (3, 3.0))
"""How a box is read — (median filter, upscale) — in order: the next only when the one before left ink unread."""
READ_COVER = 0.97
"""Share of a box's text ink that the words read must cover for the reading to be taken at once."""
MIN_BOX_CONF = 5.0
"""A box word read with less confidence is doubtful: kept only when the page has it (``known_words``)."""
READ_DOUBT = 50.0
"""A word read with less confidence than this makes the box worth reading another way."""


def holds_text(words: list[tuple[Glyph, float]]) -> bool:
    """Whether a hole's first reading is a box's text: not a hole between crossing connectors ("A I", "as" read
    with low confidence), nor speckle in a region fenced in by connectors read as gibberish ("Auris ae iA.")."""
    # one letter repeated ("eee") is the hatching of lines crossing a hole, not a word
    if not any((sum(ch.isalnum() for ch in g.text) >= 3 or (sum(ch.isalnum() for ch in g.text) >= 2 and c >= 60))
               and len(set(g.text.lower())) > 1 for g, c in words):
        return False
    mean = sum(c for _, c in words) / len(words)
    return not ((len(words) >= 4 and mean < 45) or (len(words) >= 2 and mean < 35))


def read_box(crop: np.ndarray, scale: float, origin: tuple[int, int],
             accept: Callable[[list[tuple[Glyph, float]]], bool]) -> list[tuple[Glyph, float]] | None:
    """The words of a box's interior (``crop``, grey, what lies outside the outline blanked; ``origin`` its top
    left on the page in pixels), or None when no reading's words (confidence ≥ ``MIN_BOX_CONF``) are a box's text
    (``accept``; a reading after a rejected standard one also needs ``_words_of_a_box``). Tesseract can lose words of a
    line, or read them as a short word ("significant comorbid conditions" as "significant id"), and whether it
    does changes with the filter and the scale: a reading whose words leave ink of the box uncovered, or doubts a
    word, is read again another way, and the reading that covers most is kept."""
    import cv2

    ink = text_ink(crop)
    total = int(ink.sum())
    best: tuple[tuple[int, bool, float], list[tuple[Glyph, float]]] | None = None
    accepted = False  # the standard reading is a box's text
    for k, (blur, upscale) in enumerate(READINGS):
        image = cv2.copyMakeBorder(cv2.medianBlur(crop, blur) if blur else crop, 10, 10, 10, 10,
                                   cv2.BORDER_CONSTANT, value=255)
        words = read_words(image, 6, scale, origin[0] - 10, origin[1] - 10, min_conf=0.0, upscale=upscale,
                           inside=True)
        kept = [(g, c) for g, c in words if c >= MIN_BOX_CONF]
        covered = np.zeros_like(ink)
        for g, _ in kept:
            x0, y0 = round(g.x0 * scale) - origin[0] - 2, round(g.top * scale) - origin[1] - 2
            x1, y1 = round(g.x1 * scale) - origin[0] + 3, round(g.bottom * scale) - origin[1] + 3
            covered[max(0, y0):max(0, y1), max(0, x0):max(0, x1)] = True
        cover = float((ink & covered).sum()) / total if total else 1.0
        first = k == 0
        # a reading the standard one rejected counts only with two words of three letters or more, or one long
        # word read with confidence that covers the ink: another way of reading can make a stray word of speckle
        # between connectors ("poe"), or read a box the standard way garbled ("Surveillance")
        if not accept(kept) or (not first and not accepted and not _words_of_a_box(kept, cover)):
            continue
        accepted = accepted or first
        weight = sum(len(g.text) for g, _ in kept)
        confidence = sum(c * len(g.text) for g, c in kept) / weight if weight else 0.0
        doubt = any(c < READ_DOUBT and g.text != "•" for g, c in kept)  # a bullet is read with little confidence
        score = (round(cover / 0.02), not doubt, confidence)  # coverage first, then words read with confidence
        if best is None or score > best[0]:
            best = (score, words)
        if cover >= READ_COVER and not doubt:
            break
    return best[1] if best else None


def _words_of_a_box(words: list[tuple[Glyph, float]], cover: float) -> bool:
    letters = [sum(ch.isalpha() for ch in g.text) for g, _ in words]
    if not words or sum(c for _, c in words) / len(words) < 70:
        return False  # gibberish read from lines and speckle ("Pay ? é i a a ry") is read with little confidence
    return sum(n >= 3 for n in letters) >= 2 or (cover >= 0.9 and any(
        n >= 5 and c >= 60 for n, (_, c) in zip(letters, words, strict=True)))


def text_ink(crop: np.ndarray) -> np.ndarray:
    """The ink of letters in a grey crop: dark pixels in components of a letter's size or more, not speckle."""
    import cv2

    _, binary = cv2.threshold(cv2.GaussianBlur(crop, (3, 3), 0), 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    if int(crop.min()) > 160:  # nothing dark: a blank interior, whatever Otsu splits
        return np.zeros(crop.shape, bool)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    keep = np.zeros(n, bool)
    keep[1:] = stats[1:, cv2.CC_STAT_AREA] >= 12
    return np.asarray(keep[labels])
