"""The version watcher against a local HTTP server whose PDF changes between polls."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from dkg.graph import loader
from dkg.settings import Settings
from tests.pdf_support import reference_pdfs

pytestmark = [pytest.mark.services, pytest.mark.slow]


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/guideline.pdf", served
    httpd.shutdown()


def test_new_version_flows_through_and_an_unchanged_poll_does_nothing(
    services: Settings, prefect_harness: None, server: tuple[str, Path], tmp_path: Path
) -> None:
    from flows.watch_guidelines import watch_guidelines

    url, served = server
    v1 = next(p for p in reference_pdfs() if p.stem == "ALL-1.2022")
    v2 = next(p for p in reference_pdfs() if p.stem == "ALL-2.2022")
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - name: web-all-{uuid.uuid4().hex[:8]}\n    kind: url\n    location: {url}\n")

    shutil.copy(v1, served / "guideline.pdf")
    first = watch_guidelines(str(sources))
    assert [d.version for d in first.changed] == ["1.2022"] and first.loaded == ["ALL 1.2022"]

    second = watch_guidelines(str(sources))  # the server answers 304 Not Modified
    assert second.changed == [] and second.loaded == []

    shutil.copy(v2, served / "guideline.pdf")
    later = time.time() + 5
    os.utime(served / "guideline.pdf", (later, later))
    third = watch_guidelines(str(sources))
    assert [d.version for d in third.changed] == ["2.2022"] and third.loaded == ["ALL 2.2022"]
    assert [v["version"] for v in loader.versions(services, "ALL") if v["current"]] == ["2.2022"]
