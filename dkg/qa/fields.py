"""The fields a "needs more info" answer asks the clinician to fill in: each missing attribute with its name, its
label, its type and the values it may take (the clinician page builds its inputs from these)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field


class MissingFact(BaseModel):
    """A patient fact the answer needs: the attribute's name, its label, and the values it may take."""

    attr: str
    label: str
    type: str = "text"
    values: list[str] = Field(default_factory=list)
    unit: str | None = None


def missing_fields(attrs: Sequence[str], labels: Mapping[str, str]) -> list[MissingFact]:
    """The attributes of the vocabulary among ``attrs``, as fields to fill in (other words are left out)."""
    from dkg.constraints.vocabulary import load_vocabulary

    known = load_vocabulary().attributes
    return [MissingFact(attr=a, label=labels.get(a, a), type=str(known[a].get("type", "text")),
                        values=[str(v) for v in known[a].get("values", [])], unit=known[a].get("unit"))
            for a in attrs if a in known]
