"""The version watcher's change detection for each kind of source, on loopback servers (no services)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from dkg.errors import ConfigError, IngestError, TransientError
from dkg.watch import SeenState, Source, check, commit, load_sources, load_state
from tests.fixtures.web_sites import Route, page, serve
from tests.pdf_support import reference_pdfs


def _poll(source: Source, state_dir: Path) -> list[str]:
    """One poll that remembers what it found (as the flow does after a successful run)."""
    found = check(source, load_state(state_dir).get(source.name) or SeenState(), state_dir / "dl", timeout_s=5)
    for d in found:
        commit(state_dir, d)
    return [d.reason for d in found]


def test_web_table_of_contents_changes_are_detected_and_unchanged_polls_find_nothing(tmp_path: Path) -> None:
    routes = {
        "/g/toc.html": Route(page("Contents", '<a href="a.html">A</a> <a href="b.html">B</a>')),
        "/g/a.html": Route(page("A", "<p>Adults with ALL receive induction.</p>")),
        "/g/b.html": Route(page("B", "<p>Relapse is treated with blinatumomab.</p>")),
    }
    with serve(routes) as base:
        src = Source(name="web-g", kind="web", location=f"{base}/g/toc.html")
        assert _poll(src, tmp_path) == ["new web guideline"]
        assert _poll(src, tmp_path) == []
        # a page's text changes (same length, no validators: the body hash tells)
        routes["/g/a.html"].body = routes["/g/a.html"].body.replace(b"induction", b"inductioN")
        assert _poll(src, tmp_path) == ["table of contents or a page changed"]
        assert _poll(src, tmp_path) == []
        # a new page in the table of contents
        routes["/g/c.html"] = Route(page("C", "<p>Maintenance.</p>"))
        routes["/g/toc.html"].body = routes["/g/toc.html"].body.replace(b"</main>", b'<a href="c.html">C</a></main>')
        assert _poll(src, tmp_path) == ["table of contents or a page changed"]
        # the site goes back to an earlier state: that is a change too
        del routes["/g/c.html"]
        routes["/g/toc.html"].body = routes["/g/toc.html"].body.replace(b'<a href="c.html">C</a>', b"")
        routes["/g/a.html"].body = routes["/g/a.html"].body.replace(b"inductioN", b"induction")
        assert _poll(src, tmp_path) == ["table of contents or a page changed"]
        assert _poll(src, tmp_path) == []
        with pytest.raises(IngestError, match=r"web-gone.*HTTP 404"):
            check(Source(name="web-gone", kind="web", location=f"{base}/nothing/toc.html"), SeenState(), tmp_path)


def test_folder_and_url_sources(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    src = Source(name="inbox", kind="folder", location=str(folder))
    assert _poll(src, tmp_path) == []
    v1 = next(p for p in reference_pdfs() if p.stem == "BONE-1.2023")
    shutil.copy(v1, folder)
    found = check(src, SeenState(), tmp_path)
    assert [(d.version, d.reason) for d in found] == [("1.2023", "new file in folder")]
    assert _poll(src, tmp_path) == ["new file in folder"] and _poll(src, tmp_path) == []
    (folder / "copy.pdf").write_bytes(v1.read_bytes())  # same bytes under another name: nothing new
    assert _poll(src, tmp_path) == []

    routes = {"/ok.pdf": Route(v1.read_bytes(), ctype="application/pdf"), "/err.pdf": Route(b"", status=503)}
    with serve(routes) as base:
        url = Source(name="pub", kind="url", location=f"{base}/ok.pdf")
        assert _poll(url, tmp_path) == ["new content at URL"]
        assert _poll(url, tmp_path) == []  # no validators: the same bytes are recognised by their hash
        with pytest.raises(TransientError, match=r"pub5.*503"):
            check(Source(name="pub5", kind="url", location=f"{base}/err.pdf"), SeenState(), tmp_path)
        with pytest.raises(IngestError, match=r"pub4.*404"):
            check(Source(name="pub4", kind="url", location=f"{base}/none.pdf"), SeenState(), tmp_path)
    with pytest.raises(TransientError, match="did not answer"):
        check(Source(name="down", kind="url", location=f"{base}/ok.pdf"), SeenState(), tmp_path, timeout_s=2)


def test_bad_sources_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "sources.yaml"
    bad.write_text("sources:\n  - name: x\n    kind: ftp\n    location: /tmp\n")
    with pytest.raises(ConfigError, match=re.escape(str(bad))):
        load_sources(bad)
