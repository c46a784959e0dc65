"""Typed constraints in the shared vocabulary: ``{attr, op, value, unit}`` and ``{any_of: [...]}``."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

Value = str | int | float | list[str]


class Constraint(BaseModel):
    """One condition on a patient attribute, e.g. ``age < 65 years``."""

    model_config = ConfigDict(frozen=True)

    attr: str
    op: str
    value: Value
    unit: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The shared JSON form (``unit`` only when set)."""
        out: dict[str, Any] = {"attr": self.attr, "op": self.op, "value": self.value}
        if self.unit:
            out["unit"] = self.unit
        return out

    def key(self) -> str:
        """A canonical string, for sets and comparisons."""
        return json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False)


class AnyOf(BaseModel):
    """A disjunction: each alternative is a conjunction of constraints."""

    model_config = ConfigDict(frozen=True)

    alternatives: tuple[tuple[Constraint, ...], ...]

    def to_json(self) -> dict[str, Any]:
        """``{"any_of": [c | [c, ...], ...]}`` as in the shared vocabulary."""
        alts: list[Any] = []
        for alt in self.alternatives:
            alts.append(alt[0].to_json() if len(alt) == 1 else [c.to_json() for c in alt])
        return {"any_of": alts}

    def key(self) -> str:
        """A canonical string that ignores the order of alternatives and of their members."""
        alts = sorted(json.dumps(sorted(c.key() for c in alt)) for alt in self.alternatives)
        return json.dumps({"any_of": alts}, ensure_ascii=False)


Item = Constraint | AnyOf


def items_to_json(items: list[Item]) -> list[dict[str, Any]]:
    """Serialise a constraint list (an AND of items)."""
    return [i.to_json() for i in items]


def attrs_of(items: list[Item]) -> set[str]:
    """Every attribute the items constrain (the members of OR-groups too)."""
    out: set[str] = set()
    for item in items:
        members = [c for alt in item.alternatives for c in alt] if isinstance(item, AnyOf) else [item]
        out |= {c.attr for c in members}
    return out


def items_from_json(data: list[dict[str, Any]]) -> list[Item]:
    """Parse the shared JSON form back into typed items."""
    out: list[Item] = []
    for d in data:
        if "any_of" in d:
            alts = []
            for alt in d["any_of"]:
                members = alt if isinstance(alt, list) else [alt]
                alts.append(tuple(Constraint(**m) for m in members))
            out.append(AnyOf(alternatives=tuple(alts)))
        else:
            out.append(Constraint(**d))
    return out
