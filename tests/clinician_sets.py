"""The clinician question sets written outside this code, with the floors CI asserts on them.

qa-dev comes from shared/data; every other set was written by a helper session shown only the
guidelines (PDFs, ``truth.json``) and qa-dev's format, and committed before it was measured. Floors:
the issue's for the development set (accuracy 0.90, at most one wrong answer), a little under the
measured values for the others. Used by ``tests/flows/test_text2cypher.py`` and ``bench/bench_qa.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.pdf_support import ROOT, SHARED

FIXTURES = ROOT / "tests" / "fixtures" / "qa"

# name: (file, accuracy floor, most wrong answers)
CLINICIAN_SETS: dict[str, tuple[Path, float, int]] = {
    "qa-dev": (SHARED / "data" / "qa-dev" / "questions.jsonl", 0.90, 1),
    **{name: (FIXTURES / f"clinician-{stem}.jsonl", floor, 1) for name, stem, floor in (
        ("own", "own", 0.92), ("final", "final", 0.90), ("fourth", "s23", 0.92), ("fifth", "s24", 0.90),
        ("sixth", "s25", 0.93), ("seventh", "s25b", 0.85), ("eighth", "s27", 0.93), ("ninth", "s28", 0.93),
        ("tenth", "s29", 0.93), ("eleventh", "s30", 0.90), ("twelfth", "s31", 0.93), ("thirteenth", "s32", 0.93),
        ("fourteenth", "s33", 0.93), ("fifteenth", "s34", 0.93), ("sixteenth", "s35", 0.93),
        ("seventeenth", "s36", 0.90), ("eighteenth", "s37", 0.93), ("nineteenth", "s38", 0.88),
        ("twentieth", "s39", 0.88), ("twenty-second", "s41", 0.93), ("twenty-third", "s42", 0.93),
        ("twenty-fourth", "s43", 0.93), ("twenty-fifth", "s44", 0.90), ("twenty-sixth", "s45", 0.93),
        ("twenty-seventh", "s46", 0.93), ("twenty-eighth", "s47", 0.93),
        ("twenty-ninth", "s48", 0.93), ("thirtieth", "s49", 0.93), ("thirty-first", "s55", 0.90),
        ("thirty-second", "s56", 0.85))},
}
