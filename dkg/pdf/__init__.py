"""Guideline PDFs to flowchart graphs: boxes, arrows, footnotes, page links (DKG paper §6.2.1)."""

from dkg.pdf.document import ingest_pdf, parse_page, read_document_info
from dkg.pdf.models import Arrow, Box, Edge, GuidelineGraph, PageGraph

__all__ = [
    "Arrow", "Box", "Edge", "GuidelineGraph", "PageGraph", "ingest_pdf", "parse_page", "read_document_info",
]
