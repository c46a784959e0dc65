"""The answer path without torch: a cold `dkg ask` from a shell, and the same answers as the torch model.

Rows: a cold ``dkg ask`` (a new process, no service running) with ``DKG_QA_RUNTIME=numpy`` (the
default) against ``DKG_QA_RUNTIME=torch`` in the same run; batched generation on the promoted
model's generated test split, numpy against torch. Printed beside the rows: how many answers differ
(answer JSON of every clinician set; generated Cypher of every test item) — both must be 0.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.common import Row

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Ph-negative ALL, 45 years old, in CR after induction, MRD negative. Next step?"


def _cold(runtime: str, repeat: int = 3) -> tuple[float, str]:
    env = {**os.environ, "DKG_QA_RUNTIME": runtime}
    env.pop("DKG_SERVE_URL", None)
    times, out = [], ""
    for _ in range(repeat):
        t = time.perf_counter()
        done = subprocess.run([str(ROOT / ".venv/bin/dkg"), "ask", QUESTION, "--json"], env=env,
                              capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - t)
        out = done.stdout.strip().splitlines()[-1]
    return statistics.median(times), out


def _compare_answers(settings: object, folder: Path) -> tuple[int, int]:
    """(answers compared, answers whose JSON differs) over every clinician set."""
    from dkg.qa.answer import Answerer
    from dkg.qa.clinician_eval import load_questions
    from dkg.qa.model import Seq2Seq
    from tests.clinician_sets import CLINICIAN_SETS

    questions = [q.question for path, _, _ in CLINICIAN_SETS.values() if path.exists()
                 for q in load_questions(path)]
    by = {rt: Answerer(settings, Seq2Seq(folder, rt)).ask_many(questions)  # type: ignore[arg-type]
          for rt in ("torch", "numpy")}
    differ = [q for q, a, b in zip(questions, by["torch"], by["numpy"], strict=True)
              if a.model_dump_json() != b.model_dump_json()]
    for q in differ[:10]:
        print(f"  answer differs: {q}")
    return len(questions), len(differ)


def run() -> list[Row]:
    from dkg.errors import DkgError
    from dkg.qa import registry
    from dkg.qa.model import Seq2Seq
    from dkg.qa.store import load_hf
    from dkg.settings import load_settings

    settings = load_settings()
    try:
        folder = registry.promoted_model_dir(settings)
        promoted = registry.promoted(settings)
    except DkgError as e:
        print(f"bench_runtime skipped: {e}")
        return []
    cold_torch, ans_torch = _cold("torch")
    cold_numpy, ans_numpy = _cold("numpy")
    print(f"cold dkg ask: torch {cold_torch:.2f} s, numpy {cold_numpy:.2f} s; "
          f"answer JSON {'identical' if ans_torch == ans_numpy else 'DIFFERS'}")
    rows = [Row("cold dkg ask, numpy runtime (s)", cold_numpy, "cold dkg ask, torch runtime", cold_torch, "s")]
    n, differ = _compare_answers(settings, folder)
    print(f"clinician sets: {n} answers, {differ} differ between the torch and numpy runtimes")
    rows.append(Row("clinician answers differing", differ, "answers compared", n, ""))
    if promoted is not None:
        data = settings.qa_path / "datasets" / promoted.dataset_version
        if data.exists():
            questions = list(load_hf(data)["test"]["QUESTION"])
            t0 = time.perf_counter()
            a = Seq2Seq(folder, "torch").generate(questions)
            t1 = time.perf_counter()
            b = Seq2Seq(folder, "numpy").generate(questions)
            t2 = time.perf_counter()
            same = sum(x == y for x, y in zip(a, b, strict=True))
            print(f"generated test split: {same}/{len(questions)} queries identical")
            rows.append(Row("test split generation, numpy (s)", t2 - t1, "the same with torch", t1 - t0, "s"))
            rows.append(Row("test split queries differing", len(questions) - same, "queries compared",
                            len(questions), ""))
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for r in run():
        print(r)
