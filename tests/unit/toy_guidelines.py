"""Shared by the reader tests that use a toy guideline written for them: a reader over the toy beside the kidney
sample, with the toy's attributes approved in a registry of the test's own."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from dkg.constraints.comparisons import EQ, GT, Comparison
from dkg.constraints.registry import Where, constraints_for, write_registry
from dkg.constraints.vocabulary import load_registry
from dkg.graph.model import VersionState
from dkg.qa.knowledge import Knowledge
from dkg.qa.reader import Reader
from tests.unit.test_question_reader import truth_state

Approved = Sequence[tuple[str, str, str | None]]
"""(the attribute's words, a value, its unit or None for a category)."""


def toy_reader(tmp_path_factory: pytest.TempPathFactory, toy: VersionState, approved: Approved) -> Iterator[Reader]:
    """Approve ``approved`` as the extractor would name them from the toy's boxes, then yield the reader."""
    path = tmp_path_factory.mktemp("registry") / "attributes.json"
    mp = pytest.MonkeyPatch()
    mp.setenv("DKG_REGISTRY_FILE", str(path))
    reg = load_registry()
    for phrase, value, unit in approved:
        constraints_for(reg, Comparison(GT if unit else EQ, (value,), unit, 0, len(phrase), phrase, 0, len(phrase),
                                        "number" if unit else "category"),
                        Where(toy.code, toy.version, f"{toy.code}-1", "b", phrase))
    reg.approve()
    write_registry(reg, path)
    yield Reader(Knowledge([truth_state("KID", "2.2023"), toy]))
    mp.undo()
