"""Headless Chromium for the browser tests (Debian's chromium and chromium-driver; nothing is downloaded), and the
folder of the documentation's screenshots, which only these tests write (so the pictures never go stale)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.pdf_support import ROOT

SHOTS = ROOT / ".dkg" / "test-output" / "browser"
DOCS_IMG = ROOT / "docs" / "img"


@contextmanager
def chromium(width: int = 1280, height: int = 1000) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    if not shutil.which("chromium") or not shutil.which("chromedriver"):
        pytest.fail("Debian's chromium and chromium-driver are missing (make setup installs them)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or ""
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--lang=en-US"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or ""), options=opts)
    driver.set_page_load_timeout(60)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver: Any, name: str, docs: str | None = None) -> Path:
    """Save a screenshot under the test output; with ``docs``, also as the documentation's picture of that name."""
    path = SHOTS / name
    driver.save_screenshot(str(path))
    if docs:
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_IMG / docs)
    return path
