"""Hostile inputs, generated here: each gives a clear error naming the input, in bounded time and
memory, and nothing is written.

PDFs are read in a child process so that its peak memory (``ru_maxrss``) and time are measured on
their own; the limits are the settings' (``DKG_PDF_MAX_BYTES``, ``DKG_PDF_MAX_PAGES``,
``DKG_PDF_MAX_PAGE_STREAM_BYTES``, ``DKG_OCR_MAX_PIXELS``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from reportlab.lib.pagesizes import letter
from reportlab.pdfgen.canvas import Canvas

from tests.faults import hostile
from tests.pdf_support import ROOT, reference_pdfs

pytestmark = [pytest.mark.slow]

MAX_SECONDS = 60
MAX_RSS_MB = 1500  # a 1 GB flate bomb must not be inflated

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
t0 = time.monotonic()
out = {"error": None}
try:
    from dkg.pdf import ingest_pdf
    from dkg.pdf.export import write_outputs
    graph = ingest_pdf(Path(sys.argv[1]))
    write_outputs(graph, Path(sys.argv[2]))
except Exception as e:
    out["error"] = f"{type(e).__name__}: {e}"
out["seconds"] = time.monotonic() - t0
# VmHWM: this process's own peak (ru_maxrss would carry the parent's peak across fork and exec)
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
out["rss_mb"] = int(hwm[0].split()[1]) / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def _ingest(pdf: Path, out: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(pdf), str(out)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _encrypted(path: Path) -> Path:
    c = Canvas(str(path), pagesize=letter, encrypt="s3cret")
    c.drawString(72, 720, "locked")
    c.showPage()
    c.save()
    return path


CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "truncated": (lambda p: hostile.truncated(reference_pdfs()[0], p), r"not a readable PDF"),
    "encrypted": (_encrypted, r"encrypted and needs a password"),
    "zero pages": (lambda p: hostile.text_pages(p, 0), r"(has no pages|not a readable PDF)"),
    "2,000 pages": (lambda p: hostile.text_pages(p, 2000), r"2000 pages, more than the limit of 1000"),
    "20,000 × 20,000 px page": (hostile.huge_image_page, r"page 1: .* million pixels .* more than the limit"),
    "not a PDF (.pdf name)": (lambda p: (p.write_bytes(b"<html><body>hello</body></html>"), p)[1],
                              r"not a PDF \(no %PDF- header"),
    "PDF bomb (1 GB flate stream)": (hostile.flate_bomb, r"page 1: its content inflates past"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_pdf_is_refused_with_a_clear_error(name: str, tmp_path: Path,
                                                   record: Callable[..., None]) -> None:
    make, pattern = CASES[name]
    pdf = make(tmp_path / "input.pdf")
    out = tmp_path / "out"
    t0 = time.monotonic()
    got = _ingest(pdf, out)
    took = time.monotonic() - t0
    assert got["error"], f"{name}: no error ({got})"
    import re

    assert re.search(pattern, str(got["error"])), got["error"]
    assert "input.pdf" in str(got["error"])  # names the input
    assert not out.exists() or not any(out.iterdir())  # nothing written
    assert float(str(got["seconds"])) < MAX_SECONDS and float(str(got["rss_mb"])) < MAX_RSS_MB, got
    said = str(got["error"]).replace(str(pdf), pdf.name)
    record(f"hostile PDF: {name}", "generated in the test", f"refused: {said[:110]}", 0, None,
           seconds=round(took, 1), peak_rss_mb=round(float(str(got["rss_mb"]))))


def test_javascript_in_a_pdf_is_never_run(tmp_path: Path, record: Callable[..., None]) -> None:
    """A document-level JavaScript action is data to a parser: the page is read as text, nothing runs."""
    pdf = hostile.javascript_pdf(tmp_path / "js.pdf")
    got = _ingest(pdf, tmp_path / "out")
    assert got["error"] is None, got
    graph = json.loads((tmp_path / "out" / "graph.json").read_text(encoding="utf-8"))
    assert graph["pages"][0]["kind"] == "non_flowchart" and not graph["edges"]
    record("hostile PDF: JavaScript OpenAction", "generated in the test", "read as a text page; the script is "
           "never executed (no PDF viewer or JS engine is involved)", 0, None,
           peak_rss_mb=round(float(str(got["rss_mb"]))))


def test_deeply_nested_objects_do_not_overflow(tmp_path: Path, record: Callable[..., None]) -> None:
    """An array nested 100,000 levels deep: the parser is iterative, so no recursion error and no crash;
    the page carries nothing to draw and is reported empty."""
    pdf = hostile.deep_nesting(tmp_path / "deep.pdf")
    got = _ingest(pdf, tmp_path / "out")
    assert got["error"] is None, got
    graph = json.loads((tmp_path / "out" / "graph.json").read_text(encoding="utf-8"))
    assert any("deep.pdf page 1: empty page" in w for w in graph["pages"][0]["warnings"]), graph["pages"][0]
    assert not graph["edges"]
    assert float(str(got["seconds"])) < MAX_SECONDS and float(str(got["rss_mb"])) < MAX_RSS_MB, got
    record("hostile PDF: deep nesting (100,000 levels)", "generated in the test",
           "parsed without recursion; reported as an empty page, no edges", 0, None,
           seconds=round(float(str(got["seconds"])), 1), peak_rss_mb=round(float(str(got["rss_mb"]))))
