"""Held-out guidelines asked with the question reader's rules alone, one guideline at a time beside the references.

For each folder (``truth.json`` and ``questions.jsonl``, written by someone who never saw the code): draw the
guideline in a style of the matrix, build it into the graph (new attributes approved), answer its questions with
the reader's rules (no trained model, see ``bench/reader_sets.py``), print the score and the misses, and remove
the guideline again, so that each is measured beside the three references alone. Also scores the constraint CSV
of the build naming-blind. Usage::

    .venv/bin/python bench/heldout_reader.py tests/fixtures/heldout/*      # every held-out folder
    .venv/bin/python bench/heldout_reader.py tests/fixtures/heldout/THY --misses
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STYLE = "td-rect-elbow-open-times"  # a development style: the drawing is not what is measured here


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--misses", action="store_true", help="print every miss, not only wrong answers")
    ap.add_argument("--keep", action="store_true", help="leave the last guideline loaded")
    a = ap.parse_args()
    os.environ.setdefault("DKG_AUTO_APPROVE_ATTRIBUTES", "1")
    from bench.first_sight import _score_csv
    from bench.reader_sets import _NoModel
    from dkg.graph import loader
    from dkg.pdf.stylematrix import build_cell, style_named
    from dkg.qa.answer import Answerer
    from dkg.qa.clinician_eval import load_questions, score
    from dkg.settings import load_settings
    from dkg_cli.env import configure_prefect
    from flows.build_dkg import build_dkg

    settings = load_settings()
    configure_prefect(settings)
    total = right = wrong = 0
    for n, folder in enumerate(a.folders):
        truth_path = folder / "truth.json"
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        with tempfile.TemporaryDirectory() as tmp:
            pdf, _ = build_cell(truth_path, style_named(STYLE), Path(tmp), scanned=False)
            built = build_dkg(str(pdf), str(Path(tmp) / "run"))
            code = built.guideline
            csv = next(iter(sorted(Path(tmp).rglob("constraints.csv"))), None)
            f1 = _score_csv(csv, truth).get("f1")
            rep = score(load_questions(folder / "questions.jsonl"), Answerer(settings, _NoModel()).ask_many)  # type: ignore[arg-type]
            total, right, wrong = total + rep.n, right + rep.correct, wrong + rep.wrong
            print(f"{folder.name:<6} constraint F1 {f1}  QA {rep.correct}/{rep.n}  wrong {rep.wrong}", flush=True)
            for o in rep.misses if a.misses else [m for m in rep.misses if m.wrong]:
                print(f"    miss {o.id} {o.type} {o.status}{' WRONG' if o.wrong else ''}: {o.answer[:110]}")
            if not (a.keep and n == len(a.folders) - 1):
                loader.remove_guideline(settings, str(code))
    print(f"all {right}/{total}, wrong {wrong}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
