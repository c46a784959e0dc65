"""Crawl a web guideline from its table of contents: links, polite fetching, main text, classification.

Links come from the table-of-contents page (BeautifulSoup ``<a href>``), resolved with
``urllib.parse.urljoin``, stripped of fragments, kept to the same host and to the folder of the
table of contents, and de-duplicated. Pages are fetched with ``requests``: a timeout, retries with
exponential backoff on connection errors and 5xx answers, a size limit (streamed, so a 20 MB body
is cut off and skipped), a pause between requests, and robots.txt obeyed.
"""

from __future__ import annotations

import hashlib
import time
import urllib.robotparser
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urldefrag, urljoin, urlparse

from pydantic import BaseModel

from dkg.errors import IngestError, TransientError
from dkg.settings import Settings
from dkg.web.text import collapse, detect_language, load_web_config

USER_AGENT = "dkg-guideline-crawler/1.0 (+local)"


class WebFetchError(IngestError):
    """A page could not be fetched (after retries) or is too large."""


class Section(BaseModel):
    """A part of a page under one heading (the page's text before its first heading has none)."""

    heading: str
    text: str


class Page(BaseModel):
    """One fetched page."""

    url: str
    title: str
    text: str
    language: str
    sha256: str
    fetched_at: float
    medical: bool
    reason: str
    status: int = 200
    sections: list[Section] = []
    """The main text split at its headings (h1–h6), for passage retrieval; empty for sites kept before."""


MAX_REDIRECTS = 5
_PORTS = {"http": 80, "https": 443}


class _Retry(Exception):
    """A server error worth another attempt."""


def _decode(raw: bytes, declared: str | None) -> str:
    for enc in [e for e in (declared, "utf-8", "cp932", "euc-jp", "shift_jis", "latin-1") if e]:
        try:
            return raw.decode(enc)
        except (UnicodeDecodeError, LookupError):
            continue
    return raw.decode("utf-8", errors="replace")


class Fetcher:
    """requests with retries, backoff, a size limit, robots.txt and a polite delay."""

    def __init__(self, settings: Settings, session: Any | None = None) -> None:
        import requests

        self.settings = settings
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = USER_AGENT
        self._robots: dict[str, urllib.robotparser.RobotFileParser | None] = {}
        self._last = 0.0

    def allowed(self, url: str) -> bool:
        p = urlparse(url)
        base = f"{p.scheme}://{p.netloc}"
        if base not in self._robots:
            rp: urllib.robotparser.RobotFileParser | None = urllib.robotparser.RobotFileParser()
            try:
                body = self._get(base + "/robots.txt", robots=True)
                assert rp is not None
                rp.parse(body[0].splitlines())
            except WebFetchError:
                rp = None  # no robots.txt: everything allowed
            self._robots[base] = rp
        rp = self._robots[base]
        return rp is None or rp.can_fetch(USER_AGENT, url)

    def _get(self, url: str, robots: bool = False) -> tuple[str, str]:
        import requests

        s = self.settings
        last_error = ""
        for attempt in range(s.web_retries + 1):
            wait = s.web_delay_s - (time.monotonic() - self._last)
            if wait > 0:
                time.sleep(wait)
            self._last = time.monotonic()
            try:
                return self._fetch_once(url, robots)
            except _Retry as e:
                last_error = str(e)
            except (requests.ConnectionError, requests.Timeout) as e:
                last_error = type(e).__name__
            if attempt < s.web_retries:
                time.sleep(min(8.0, 0.5 * 2 ** attempt))
        raise WebFetchError(f"{url}: failed after {s.web_retries + 1} attempts ({last_error})")

    def _fetch_once(self, url: str, robots: bool) -> tuple[str, str]:
        """One GET, following at most ``MAX_REDIRECTS`` redirects, each to the same host only.

        A page may not send the crawler elsewhere: a redirect to another host, to a ``file://``
        or other non-web address, or a loop is refused (no request to internal addresses a public
        table of contents names). The body is read in chunks and given up past the size limit,
        counted after decompression (a gzip bomb stops there too).
        """
        s = self.settings
        origin = urlparse(url)
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            with self.session.get(current, timeout=s.web_timeout_s, stream=True, allow_redirects=False) as r:
                if r.status_code in (301, 302, 303, 307, 308):
                    target = urljoin(current, r.headers.get("location", ""))
                    p = urlparse(target)
                    if p.scheme not in ("http", "https"):
                        raise WebFetchError(f"{url}: redirects to a non-web address ({p.scheme or 'no'} scheme); "
                                            "not followed")
                    if (p.hostname, p.port or _PORTS[p.scheme]) != \
                            (origin.hostname, origin.port or _PORTS.get(origin.scheme, 0)):
                        raise WebFetchError(f"{url}: redirects to another host ({p.hostname}); not followed")
                    current = target
                    continue
                if r.status_code >= 500:
                    raise _Retry(f"HTTP {r.status_code}")
                if r.status_code >= 400:
                    raise WebFetchError(f"{url}: HTTP {r.status_code}")
                raw = bytearray()
                for chunk in r.iter_content(65536):
                    raw += chunk
                    if len(raw) > s.web_max_bytes:
                        raise WebFetchError(f"{url}: larger than {s.web_max_bytes} bytes; skipped")
                ctype = r.headers.get("content-type", "")
                if not robots and "html" not in ctype and "text" not in ctype:
                    raise WebFetchError(f"{url}: not an HTML page ({ctype or 'no content type'})")
                return _decode(bytes(raw), r.encoding if "charset" in ctype.lower() else None), ctype
        raise WebFetchError(f"{url}: more than {MAX_REDIRECTS} redirects; not followed")

    def get(self, url: str) -> str:
        """The page's HTML.

        Raises:
            WebFetchError: HTTP error, timeout or size limit (after retries where they help), or
                robots.txt forbids it.
        """
        if not self.allowed(url):
            raise WebFetchError(f"{url}: disallowed by robots.txt")
        return self._get(url)[0]


def toc_links(html: str, toc_url: str) -> list[str]:
    """Links of a table of contents, resolved, on the same site and under its folder, de-duplicated."""
    from bs4 import BeautifulSoup

    base = urlparse(toc_url)
    folder = base.path.rsplit("/", 1)[0] + "/"
    seen: dict[str, None] = {}
    for a in BeautifulSoup(html, "html.parser").find_all("a", href=True):
        url = urldefrag(urljoin(toc_url, str(a["href"]).strip()))[0]
        p = urlparse(url)
        if p.scheme not in ("http", "https") or p.netloc != base.netloc or not p.path.startswith(folder):
            continue
        if url.rstrip("/") == toc_url.rstrip("/"):
            continue
        seen.setdefault(url, None)
    return list(seen)


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BLOCKS = frozenset({"p", "li", "td", "th", "dd", "dt", "div", "tr", "br", "blockquote", "pre", "section",
                     "article", "table", "ul", "ol", "dl", "figcaption"})


def _sections(root: Any) -> list[Section]:
    """The main content's text per heading, in document order; block elements end a line."""
    from bs4.element import NavigableString, Tag

    out: list[Section] = []
    heading = ""
    path: list[tuple[int, str]] = []  # the headings above, by level: "Treatment › Stage I"
    buf: list[str] = []

    def flush() -> None:
        lines = (collapse(line) for line in " ".join(buf).split("\n"))
        text = "\n".join(line for line in lines if line)
        if text:
            out.append(Section(heading=heading, text=text))
        buf.clear()

    stack: list[Any] = [root]
    while stack:
        el = stack.pop()
        if isinstance(el, Tag):
            if el.name in _HEADINGS:
                flush()
                level = int(el.name[1])
                path = [(lv, h) for lv, h in path if lv < level] + [(level, collapse(el.get_text(" ")))]
                heading = " › ".join(h for _, h in path if h)
                continue
            if el.name in _BLOCKS and buf and buf[-1] != "\n":
                buf.append("\n")  # a block ends a line: list items without a full stop stay apart
            stack.extend(reversed(list(el.children)))
        elif isinstance(el, NavigableString) and type(el) is NavigableString:
            buf.append(str(el))
    flush()
    return out


def main_text(html: str) -> tuple[str, str, float]:
    """(title, text of the main content, share of the text that is link text)."""
    title, text, share, _ = main_content(html)
    return title, text, share


def main_content(html: str) -> tuple[str, str, float, list[Section]]:
    """(title, text of the main content, share of it that is link text, its sections by heading)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    title = collapse(soup.title.get_text()) if soup.title else ""
    for tag in soup(["script", "style", "noscript", "nav", "header", "footer", "aside", "form"]):
        tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    text = collapse(root.get_text(" "))
    links = sum(len(collapse(a.get_text(" "))) for a in root.find_all("a"))
    if not title:
        h = root.find(["h1", "h2"])
        title = collapse(h.get_text()) if h else ""
    return title, text, (links / len(text)) if text else 1.0, _sections(root)


def site_title(toc_html: str) -> str:
    """The table of contents' ``<title>`` and first heading ("Contents — Adult treatment summaries")."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(toc_html, "html.parser")
    parts = [collapse(soup.title.get_text()) if soup.title else ""]
    h = soup.find(["h1", "h2"])
    parts.append(collapse(h.get_text(" ")) if h else "")
    return " — ".join(dict.fromkeys(x for x in parts if x))


def classify(text: str, link_share: float, lang: str) -> tuple[bool, str]:
    """The documented rule (conf/web.yaml ``medical``): long enough, not a link list, clinical words."""
    m = load_web_config().medical
    min_chars = m["min_chars"][lang] if isinstance(m["min_chars"], dict) else m["min_chars"]
    if len(text) < min_chars:
        return False, f"too short ({len(text)} characters)"
    if link_share > m["max_link_text_share"]:
        return False, f"link list ({link_share:.0%} of the text is links)"
    terms = m["terms_ja"] if lang == "ja" else m["terms_en"]
    low = text.lower()
    if lang == "ja":
        hits = sum(low.count(t) for t in terms)
    else:
        import re

        words = re.findall(r"[a-z]+", low)
        vocab = set(terms)
        hits = sum(1 for w in words if w in vocab)
    rate = hits * 1000 / max(1, len(text))
    if rate < m["min_terms_per_1000"]:
        return False, f"few clinical terms ({rate:.1f} per 1,000 characters)"
    return True, f"clinical terms {rate:.1f} per 1,000 characters"


class CrawlReport(BaseModel):
    toc: str
    links: int
    fetched: int
    medical: int
    failed: list[str]
    new: list[str]
    changed: list[str]
    removed: list[str]
    unchanged: int
    title: str = ""
    """The table of contents' own title and first heading: what the whole site is about."""


def crawl(settings: Settings, toc_url: str, previous: dict[str, Page] | None = None,
          progress: Callable[[int, int], None] | None = None, fetcher: Fetcher | None = None,
          ) -> tuple[dict[str, Page], CrawlReport]:
    """Fetch every page the table of contents links to.

    Returns:
        The pages by URL (unchanged pages keep their previous record) and what changed.

    Raises:
        WebFetchError: the table of contents itself cannot be fetched.
        IngestError: it links to no page of its own site.
    """
    f = fetcher or Fetcher(settings)
    toc_html = f.get(toc_url)
    links = toc_links(toc_html, toc_url)[: settings.web_max_pages]
    if not links:
        raise IngestError(f"{toc_url}: the table of contents links to no page under its own folder")
    previous = previous or {}
    pages: dict[str, Page] = {}
    failed: list[str] = []
    new: list[str] = []
    changed: list[str] = []
    unchanged = 0
    for i, url in enumerate(links, 1):
        try:
            html = f.get(url)
        except (WebFetchError, TransientError) as e:
            failed.append(str(e))
            if url in previous:  # keep what we had rather than lose the page on a transient failure
                pages[url] = previous[url]
            continue
        finally:
            if progress:
                progress(i, len(links))
        title, text, share, sections = main_content(html)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        old = previous.get(url)
        if old is not None and old.sha256 == digest:
            pages[url] = old if old.sections or not sections else old.model_copy(update={"sections": sections})
            unchanged += 1
            continue
        lang = detect_language(text)
        medical, reason = classify(text, share, lang)
        pages[url] = Page(url=url, title=title, text=text, language=lang, sha256=digest, fetched_at=time.time(),
                          medical=medical, reason=reason, sections=sections)
        (changed if old is not None else new).append(url)
    removed = sorted(set(previous) - set(links))
    report = CrawlReport(toc=toc_url, links=len(links), fetched=len(links) - len(failed),
                         medical=sum(p.medical for p in pages.values()), failed=failed, new=new, changed=changed,
                         removed=removed, unchanged=unchanged, title=site_title(toc_html))
    return pages, report


def export_xlsx(pages: Iterable[Page], path: Any) -> Any:
    """The URL list with its classification, as the protocol's spreadsheet."""
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "pages"
    ws.append(["url", "title", "language", "medical", "reason", "characters", "sha256", "fetched_at"])
    for p in pages:
        ws.append([p.url, p.title, p.language, "yes" if p.medical else "no", p.reason, len(p.text), p.sha256,
                   time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(p.fetched_at))])
    wb.save(path)
    return path
