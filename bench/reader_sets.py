"""The clinician sets answered by the question reader's rules alone (no trained model), set by set.

What the reader knows is measured apart from what a model learned: each question is answered with the
query the rules build from its reading (the model's output is left empty). With the guidelines the sets
are about loaded (``make demo``, or the held-out folder's guideline for its own set). Usage::

    .venv/bin/python bench/reader_sets.py                 # every set of tests/clinician_sets.py
    .venv/bin/python bench/reader_sets.py FILE.jsonl ...  # given files (a held-out set, a new one)
    .venv/bin/python bench/reader_sets.py --misses s48    # sets whose name contains 's48', with misses
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class _NoModel:
    """Stands where the trained model would: generates nothing, so the reader's rules build every query."""

    def generate(self, questions: Sequence[str], linker: object = None, batch_size: int = 32,
                 tags: object = None) -> list[str]:
        return ["" for _ in questions]


def main(argv: Sequence[str] | None = None) -> int:
    from dkg.qa.answer import Answerer
    from dkg.qa.clinician_eval import load_questions, score
    from dkg.settings import load_settings
    from tests.clinician_sets import CLINICIAN_SETS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--only", default="", help="sets whose name or file contains this")
    ap.add_argument("--misses", action="store_true", help="print every miss")
    a = ap.parse_args(argv)
    sets = ({p.stem: p for p in a.files} if a.files else
            {name: path for name, (path, _, _) in CLINICIAN_SETS.items()})
    sets = {k: v for k, v in sets.items() if a.only in k or a.only in v.name}
    answerer = Answerer(load_settings(), _NoModel())  # type: ignore[arg-type]
    total = right = wrong = 0
    for name, path in sets.items():
        rep = score(load_questions(path), answerer.ask_many)
        total, right, wrong = total + rep.n, right + rep.correct, wrong + rep.wrong
        print(f"{name:<16} {path.name:<28} {rep.correct:>4}/{rep.n:<4} wrong {rep.wrong}", flush=True)
        for o in rep.misses if a.misses else [m for m in rep.misses if m.wrong]:
            print(f"    miss {o.id} {o.type} {o.status}{' WRONG' if o.wrong else ''}: {o.answer[:100]}")
    print(f"all {right}/{total} ({right / max(total, 1):.3f}), wrong {wrong}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
