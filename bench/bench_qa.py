"""`dkg ask` latency with the promoted model loaded once (p50/p95), beside one Neo4j round trip."""

from __future__ import annotations

import statistics
import time

from bench.common import Row

QUESTIONS = [
    "45 y/o Ph-negative ALL in CR after induction, MRD negative: next step?",
    "Is blinatumomab followed by allogeneic HCT advisable for Ph- ALL in CR with persistent MRD?",
    "Stage IV clear cell RCC, favorable risk: first-line therapy?",
    "Which patients get definitive radiation therapy in bone sarcoma?",
    "What is the treatment for HER2-positive breast cancer?",
    "Localized resectable Ewing sarcoma in a 16-year-old: what comes first?",
]


def run() -> list[Row]:
    from dkg.errors import DkgError
    from dkg.qa import registry
    from dkg.qa.answer import Answerer
    from dkg.qa.model import Seq2Seq
    from dkg.services.neo4j import open_driver
    from dkg.settings import load_settings

    settings = load_settings()
    try:
        answerer = Answerer(settings, Seq2Seq(registry.promoted_model_dir(settings)))
    except DkgError as e:
        print(f"bench_qa skipped: {e}")
        return []
    answerer.ask(QUESTIONS[0])  # warm: model, linker, Neo4j connection
    lat = []
    for _ in range(5):
        for q in QUESTIONS:
            t = time.perf_counter()
            answerer.ask(q)
            lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    rt = []
    with open_driver(settings) as driver:
        for _ in range(30):
            t = time.perf_counter()
            driver.execute_query("RETURN 1", database_=settings.neo4j_database)
            rt.append((time.perf_counter() - t) * 1000)
    base = statistics.median(rt)
    rows = [Row("dkg ask p50 (ms)", statistics.median(lat), "Neo4j RETURN 1 p50", base, "ms"),
            Row("dkg ask p95 (ms)", lat[int(0.95 * len(lat))], "Neo4j RETURN 1 p50", base, "ms")]
    return rows + clinician_rows(answerer)


def clinician_rows(answerer: object) -> list[Row]:
    """Clinician questions written outside the code: the full table of each set, and one row per set."""
    from dkg.qa.answer import Answerer
    from dkg.qa.clinician_eval import load_questions, score
    from tests.clinician_sets import CLINICIAN_SETS

    assert isinstance(answerer, Answerer)
    sets = {name: path for name, (path, _, _) in CLINICIAN_SETS.items()}
    rows = []
    for name, path in sets.items():
        if not path.exists():
            continue
        rep = score(load_questions(path), answerer.ask_many)
        print(f"\n{name} ({path.name}): {rep.correct}/{rep.n} correct, wrong answers {rep.wrong}, "
              f"refusal precision {rep.refusal_precision}, recall {rep.refusal_recall}")
        for k, r in {**rep.by_type, **rep.by_guideline}.items():
            print(f"  {k:<28} {r.correct:>3}/{r.n:<3} {r.accuracy:.3f}")
        for o in rep.misses:
            print(f"  miss {o.id} {o.type} {o.status}{' WRONG' if o.wrong else ''}: {o.answer[:90]}")
        rows.append(Row(f"clinician {name} accuracy", rep.accuracy, "paper's accuracy with the DKG", 0.676, ""))
        rows.append(Row(f"clinician {name} wrong answers (%)", 100 * rep.wrong_rate, "goal: at most", 2.0, "%"))
    return rows
