"""Typed records of a parsed guideline: pages, boxes, arrows, footnotes, links, edges."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

BBox = tuple[float, float, float, float]
"""x0, top, x1, bottom in PDF points, origin top-left (pdfplumber's convention)."""

PagePath = Literal["vector", "ocr"]
PageKind = Literal["flowchart", "non_flowchart", "error"]


class FootnoteRef(BaseModel):
    """A superscript marker in a box, with the word it follows and the footnote text."""

    marker: str
    anchor: str
    text: str | None = None


class Box(BaseModel):
    """One flowchart box."""

    id: str
    page_index: int
    page_label: str
    bbox: BBox
    shape: str = "rect"
    lines: list[str]
    text: str
    """Printed text, markers removed, lines joined."""
    text_markup: str
    """Printed text with markers written ``word^{a,b}``."""
    text_resolved: str = ""
    """Text with every marker group replaced by `` (footnote texts)``, as the DKG paper does."""
    footnotes: list[FootnoteRef] = Field(default_factory=list)
    column_header: str | None = None
    confidence: float | None = None
    """Mean OCR confidence (0–100) for boxes read from an image; None for vector text."""
    number: str | None = None
    """The box number printed beside it ("Box 7" in VA/DoD-style algorithms), if any."""


class Arrow(BaseModel):
    """A directed connector from one box to another on the same page."""

    id: str
    source: str
    target: str
    label: str | None = None


class PageLink(BaseModel):
    """An internal link ("See ALL-5") from a box to another page."""

    source: str
    page_label: str
    target_page_label: str | None
    target_page_index: int | None
    link_text: str
    annotation: bool
    target_boxes: list[str] = Field(default_factory=list)
    resolved: bool = False
    target_module: str | None = None
    """For "Go to Module B, Box 18": the module named, matched against page titles."""
    target_box_number: str | None = None


class PageGraph(BaseModel):
    """What one page yielded."""

    index: int
    """1-based page number."""
    label: str | None = None
    title: str | None = None
    kind: PageKind = "flowchart"
    path: PagePath = "vector"
    column_headers: list[str] = Field(default_factory=list)
    boxes: list[Box] = Field(default_factory=list)
    arrows: list[Arrow] = Field(default_factory=list)
    footnotes: dict[str, str] = Field(default_factory=dict)
    links: list[PageLink] = Field(default_factory=list)
    header_text: str = ""
    warnings: list[str] = Field(default_factory=list)
    seconds: float = 0.0


class DocumentInfo(BaseModel):
    """Guideline identity read from the page headers and footers."""

    path: str
    sha256: str
    page_count: int
    name: str | None = None
    code: str | None = None
    version: str | None = None


class Edge(BaseModel):
    """One row of the public edge CSV (``head`` = where the arrow starts, ``tail`` = where it ends)."""

    guideline: str
    version: str
    kind: Literal["arrow", "page_link"]
    head_id: str
    tail_id: str
    head: str
    tail: str
    head_plain: str
    tail_plain: str
    head_page: str
    tail_page: str
    label: str = ""
    source_pdf_sha256: str = ""
    head_column: str = ""
    """The column header above the head box (the phase of care: "CONSOLIDATION"), if the page has one."""
    tail_column: str = ""


class GuidelineGraph(BaseModel):
    """The whole document: identity, pages, and the edges of the graph."""

    info: DocumentInfo
    pages: list[PageGraph]
    edges: list[Edge]

    @property
    def boxes(self) -> list[Box]:
        """Every box of every flowchart page."""
        return [b for p in self.pages for b in p.boxes]
