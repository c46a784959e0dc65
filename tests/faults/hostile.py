"""Hostile inputs, generated (never downloaded): PDFs written byte by byte, so each is exactly the
fault it names."""

from __future__ import annotations

import zlib
from pathlib import Path


def _pdf(objects: list[bytes], root: int = 1, trailer_extra: bytes = b"") -> bytes:
    """A PDF from numbered object bodies (1-based), with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, root, trailer_extra, xref)
    return bytes(out)


def _stream(data: bytes, extra: bytes = b"", compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def text_pages(path: Path, pages: int, width: float = 612, height: float = 792,
               catalog_extra: bytes = b"") -> Path:
    """``pages`` pages that share one small content stream of text."""
    content = b"BT /F1 12 Tf 72 720 Td (Discussion text, not a flowchart.) Tj ET"
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    objs = [b"<< /Type /Catalog /Pages 2 0 R " + catalog_extra + b">>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            _stream(content)]
    for _ in range(pages):
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Contents 4 0 R "
                    b"/Resources << /Font << /F1 3 0 R >> >> >>" % (width, height))
    path.write_bytes(_pdf(objs))
    return path


def javascript_pdf(path: Path) -> Path:
    """A one-page PDF whose catalog runs JavaScript when opened in a viewer."""
    return text_pages(path, 1, catalog_extra=b"/OpenAction << /S /JavaScript /JS (app.alert\\('pwned'\\)) >> ")


def huge_image_page(path: Path, pixels: int = 20_000) -> Path:
    """A page of ``pixels`` × ``pixels`` at 200 dpi with only a (tiny) image on it: OCR would render it whole."""
    side = pixels * 72 / 200
    img = _stream(b"\xff\x00\xff\x00", b" /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray "
                  b"/BitsPerComponent 8")
    content = _stream(b"q %g 0 0 %g 0 0 cm /Im1 Do Q" % (side, side))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Contents 4 0 R "
            b"/Resources << /XObject << /Im1 5 0 R >> >> >>" % (side, side), content, img]
    path.write_bytes(_pdf(objs))
    return path


def flate_bomb(path: Path, megabytes: int = 1024) -> Path:
    """A page whose content stream inflates from about 1 MB to ``megabytes`` MB of spaces."""
    comp = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    data = b"".join(comp.compress(chunk) for _ in range(megabytes)) + comp.flush()
    content = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>", content]
    path.write_bytes(_pdf(objs))
    return path


def deep_nesting(path: Path, depth: int = 100_000) -> Path:
    """A page dictionary holding an array nested ``depth`` levels deep (parsers that recurse overflow)."""
    deep = b"[" * depth + b"]" * depth
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Bomb " + deep + b" >>"]
    path.write_bytes(_pdf(objs))
    return path


def truncated(src: Path, path: Path, keep: float = 0.5) -> Path:
    data = src.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path
