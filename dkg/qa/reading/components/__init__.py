"""The reader's components, one job each; importing :func:`load_all` registers every one of them."""

from __future__ import annotations

import importlib
import pkgutil


def load_all() -> None:
    """Import every component module (each registers itself in :data:`dkg.qa.reading.doc.COMPONENTS`)."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
