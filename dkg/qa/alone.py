"""A treatment asked about by itself ("X on its own", "single-agent X"), and a box that gives it only with another
drug ("A + X"): such a box does not recommend it alone."""

from __future__ import annotations

import re


def said_alone(text: str, treatment: str) -> bool:
    """Whether the question asks for the treatment by itself ("X on its own", "single-agent X")."""
    t = re.escape(treatment)
    return bool(re.search(rf"{t}\S*\s+(?:on (?:its|their) own|alone|by itself|"
                          rf"as (?:a )?(?:monotherapy|single agent))\b|"
                          rf"\b(?:single[- ]agent|monotherapy with|only)\s+{t}", text))


def given_with_another(text: str, treatment: str) -> bool:
    """Whether every mention of ``treatment`` in a box's text gives it with another drug ("A + B", "A plus B")."""
    t = re.escape(treatment)
    mentions = list(re.finditer(t, text))
    return bool(mentions) and all(
        re.search(r"(?:\+|\bplus|\bwith|\bcombined with)\s*(?:[\w-]+\s+){0,2}$", text[max(0, m.start() - 40):m.start()])
        or re.match(r"\s*(?:\+|\bplus\b|\bwith\b)", text[m.end():]) for m in mentions)
