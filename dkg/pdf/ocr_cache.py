"""Tesseract's words for an image, remembered on disk by the image's pixels.

OCR is most of the time a scanned page takes. The page cache of the ingestion is keyed on the
PDF's bytes and the parser's code, so any change to the parser parses every scanned page again;
the pixels handed to Tesseract rarely change with it. This cache keys Tesseract's output on
exactly what decides it — the image's bytes and shape, the page segmentation mode, the language
and Tesseract's version — so the same pixels are never read twice. An entry is written
atomically (temporary file, then rename); an unreadable entry or a folder that cannot be written
is ignored, so the cache can only save time, never change a result or fail a run.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

KEYS = ("text", "conf", "left", "top", "width", "height", "block_num", "par_num", "line_num")
"""The columns of ``image_to_data`` the OCR path reads."""


@functools.lru_cache(maxsize=1)
def tesseract_version() -> str:
    import pytesseract

    try:
        return str(pytesseract.get_tesseract_version())
    except Exception:  # not installed: the OCR call itself reports it
        return "unknown"


def cache_dir() -> Path | None:
    """``<state>/cache/ocr``, or None when ``DKG_OCR_CACHE`` is off (the settings of the environment as it
    is at the call: tests and runs may change them)."""
    from dkg.settings import current_settings

    settings = current_settings()
    return settings.cache_path / "ocr" if settings.ocr_cache else None


def image_key(image: np.ndarray, psm: int, lang: str) -> str:
    h = hashlib.sha256()
    h.update(f"{image.shape}|{image.dtype}|psm={psm}|lang={lang}|tesseract={tesseract_version()}".encode())
    h.update(np.ascontiguousarray(image).tobytes())
    return h.hexdigest()


def lookup(folder: Path | None, key: str) -> dict[str, list[Any]] | None:
    if folder is None:
        return None
    try:
        data = json.loads((folder / key[:2] / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or any(not isinstance(data.get(k), list) for k in KEYS):
        return None
    return {k: data[k] for k in KEYS}


def remember(folder: Path | None, key: str, data: dict[str, list[Any]]) -> None:
    if folder is None:
        return
    target = folder / key[:2] / f"{key}.json"
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{threading.get_ident()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({k: list(data[k]) for k in KEYS}), encoding="utf-8")
        tmp.replace(target)
    except OSError:  # full or read-only: run without the cache
        with contextlib.suppress(OSError):
            tmp.unlink()
