"""Watch guideline sources for new versions: a folder of PDFs, the URL of a PDF, or a web guideline.

A source changed when its content changed: an HTTP server answers 200 to a conditional request
(ETag / Last-Modified) *and* the bytes differ from the last ones seen (hash); a folder holds a
PDF whose hash was not seen; a web guideline's table of contents, or the validators (ETag,
Last-Modified, length) its linked pages answer a HEAD request with, differ from the last poll.
The version string printed in the PDF is read for the report. The state is committed only
after the pipeline ran, so a failed run is retried next time.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Literal

import requests
import yaml
from pydantic import BaseModel, Field

from dkg.errors import ConfigError, IngestError, TransientError
from dkg.yamlio import load_yaml

VERSION = re.compile(r"\bVersion\s+(\d+\.\d{4}|\d+(?:\.\d+)+)\b", re.IGNORECASE)


class Source(BaseModel):
    """One place a guideline is published."""

    name: str
    kind: Literal["folder", "url", "web"]
    location: str
    """Folder path, PDF URL, or the URL of a web guideline's table of contents."""
    pattern: str = "*.pdf"


class SeenState(BaseModel):
    """What the watcher saw of a source last time."""

    etag: str | None = None
    last_modified: str | None = None
    hashes: list[str] = Field(default_factory=list)


class Detected(BaseModel):
    """A new document to run through the pipeline."""

    source: str
    path: str
    sha256: str
    version: str | None
    reason: str
    etag: str | None = None
    last_modified: str | None = None


def load_sources(path: Path) -> list[Source]:
    """Read the sources file (``sources:`` list of name/kind/location)."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8")) or {}
        return [Source(**s) for s in data.get("sources", [])]
    except (OSError, yaml.YAMLError, TypeError, ValueError) as e:
        raise ConfigError(f"{path}: not a valid sources file ({e})") from e


def _state_path(state_dir: Path) -> Path:
    return state_dir / "watch" / "state.json"


def load_state(state_dir: Path) -> dict[str, SeenState]:
    """The watcher's memory, per source name."""
    p = _state_path(state_dir)
    if not p.exists():
        return {}
    return {k: SeenState(**v) for k, v in json.loads(p.read_text(encoding="utf-8")).items()}


def commit(state_dir: Path, found: Detected) -> None:
    """Remember a document once the pipeline has processed it."""
    state = load_state(state_dir)
    seen = state.get(found.source, SeenState())
    if found.sha256 in seen.hashes:  # seen before (a version came back): it is the latest again
        seen.hashes.remove(found.sha256)
    seen.hashes.append(found.sha256)
    seen.etag = found.etag or seen.etag
    seen.last_modified = found.last_modified or seen.last_modified
    state[found.source] = seen
    p = _state_path(state_dir)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps({k: v.model_dump() for k, v in state.items()}, indent=1), encoding="utf-8")
    tmp.replace(p)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pdf_version(path: Path) -> str | None:
    """The "Version X.YYYY" printed on the first pages, if any."""
    import pdfplumber

    try:
        with pdfplumber.open(path) as pdf:
            for page in pdf.pages[:3]:
                m = VERSION.search(page.extract_text() or "")
                if m:
                    return m.group(1)
    except Exception:  # an unreadable file is reported by the ingestion, not here
        return None
    return None


def _get(source: Source, url: str, timeout_s: float, headers: dict[str, str] | None = None,
         method: str = "GET") -> requests.Response:
    try:
        resp = requests.request(method, url, headers=headers or {}, timeout=timeout_s)
    except (requests.ConnectionError, requests.Timeout) as e:
        raise TransientError(f"{source.name}: {url} did not answer ({type(e).__name__})") from e
    if resp.status_code >= 500 and not (method == "HEAD" and resp.status_code == 501):
        raise TransientError(f"{source.name}: {url} answered HTTP {resp.status_code}")
    if resp.status_code >= 400 and url == source.location:  # a linked page's 404 is a change, not an error
        raise IngestError(f"{source.name}: {url} answered HTTP {resp.status_code}")
    return resp


def web_fingerprint(source: Source, timeout_s: float = 30.0, max_pages: int = 500) -> str:
    """A digest of a web guideline: its table of contents and every linked page.

    A page is represented by what a HEAD request says about it (ETag, Last-Modified, length) when the
    server sends a validator, else by the hash of its body (a server without HEAD or validators is read
    in full). A page that vanished (404) counts as a change.
    """
    from dkg.web.crawl import toc_links

    toc = _get(source, source.location, timeout_s)
    h = hashlib.sha256(toc.content)
    heads_ok = True  # until the server refuses HEAD
    for url in toc_links(toc.text, source.location)[:max_pages]:
        head = _get(source, url, timeout_s, method="HEAD") if heads_ok else None
        if head is not None and head.status_code in (405, 501):
            heads_ok, head = False, None
        if head is not None and (head.headers.get("ETag") or head.headers.get("Last-Modified")):
            parts = [url, str(head.status_code), head.headers.get("ETag", ""), head.headers.get("Last-Modified", ""),
                     head.headers.get("Content-Length", "")]
        else:
            page = _get(source, url, timeout_s)
            parts = [url, str(page.status_code), _sha(page.content)]
        h.update("\x1f".join(parts).encode())
    return h.hexdigest()


def check(source: Source, state: SeenState, download_dir: Path, timeout_s: float = 30.0) -> list[Detected]:
    """New documents of one source since the state was saved.

    Raises:
        TransientError: the server did not answer (retry later).
        IngestError: the server answered with an error status.
    """
    if source.kind == "web":
        sha = web_fingerprint(source, timeout_s)
        if state.hashes and state.hashes[-1] == sha:
            return []
        return [Detected(source=source.name, path=source.location, sha256=sha, version=None,
                         reason="table of contents or a page changed" if state.hashes else "new web guideline")]
    if source.kind == "folder":
        folder = Path(source.location)
        out = []
        for f in sorted(folder.glob(source.pattern)):
            sha = _sha(f.read_bytes())
            if sha not in state.hashes:
                out.append(Detected(source=source.name, path=str(f), sha256=sha, version=pdf_version(f),
                                    reason="new file in folder"))
        return out
    headers = {}
    if state.etag:
        headers["If-None-Match"] = state.etag
    if state.last_modified:
        headers["If-Modified-Since"] = state.last_modified
    resp = _get(source, source.location, timeout_s, headers)
    if resp.status_code == 304:
        return []
    sha = _sha(resp.content)
    etag, modified = resp.headers.get("ETag"), resp.headers.get("Last-Modified")
    if sha in state.hashes:
        return []  # same bytes (a server without validators, or a touched file)
    download_dir.mkdir(parents=True, exist_ok=True)
    name = Path(source.location.split("?")[0]).name or f"{source.name}.pdf"
    target = download_dir / f"{sha[:12]}-{name}"
    target.write_bytes(resp.content)
    return [Detected(source=source.name, path=str(target), sha256=sha, version=pdf_version(target),
                     reason="new content at URL", etag=etag, last_modified=modified)]
