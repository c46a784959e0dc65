"""How the cost grows with the work: pages per PDF, guidelines in the graph, QA items, web pages.

Every curve is measured in this run, at several sizes, and fitted on log–log axes (cost ≈ a·n^b): the
exponent b and its class (linear, n log n, quadratic …) are printed in one table and drawn as SVG
charts under ``.dkg/bench/growth/``. Stateless points (one PDF, one generation, one training epoch,
one web index) run in a fresh process each, so their peak memory is that process's own (VmHWM).

Synthetic guidelines come from the reference ones (``dkg.pdf.synthetic``: renamed codes, perturbed
constraint numbers); those loaded into Neo4j are removed at the end.

``DKG_GROWTH_QUICK=1`` measures smaller sizes (a smoke run of the benchmark itself).
"""

from __future__ import annotations

import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import Row  # noqa: E402
from bench.growth import Curve, svg  # noqa: E402

REFERENCE = Path(os.environ.get("DKG_SHARED_DIR", ROOT.parent / "shared")) / "reference" / "guidelines"
QUICK = os.environ.get("DKG_GROWTH_QUICK") == "1"
OUT = ROOT / ".dkg" / "bench" / "growth"
PREFIX = "GROW"

PAGES = [1, 5, 20] if QUICK else [1, 10, 50, 100, 200]
GUIDELINES = [3, 10, 30] if QUICK else [3, 30, 100, 300]
QA_GUIDELINES = [1, 3] if QUICK else [1, 3, 10, 30]
TRAIN_ITEMS = [250, 500] if QUICK else [1000, 3000, 10_000, 30_000, 100_000]
WEB_PAGES = [1000, 3000] if QUICK else [1000, 3000, 10_000, 30_000, 100_000]
ASK_QUESTIONS = [
    "45 y/o Ph-negative ALL in CR after induction, MRD negative: next step?",
    "Stage IV clear cell RCC, favorable risk: first-line therapy?",
    "Localized resectable Ewing sarcoma in a 16-year-old: what comes first?",
    "Which patients get definitive radiation therapy in bone sarcoma?",
    "Ph-positive ALL in a 70-year-old: induction?",
    "Relapsed clear cell renal cell carcinoma after a TKI: options?",
    # questions that name no guideline, or one no guideline covers, or many facts: read over every loaded one
    "What is the next step for a 58-year-old in complete remission with MRD positive after consolidation?",
    "Giant cell tumour of bone in a 30-year-old: treatment?",
    "Which patients qualify for nephrectomy?",
    "72F, ECOG 2, Ph-negative B-ALL, creatinine clearance 40, prior MI. Induction options?",
    "Osteosarcoma with poor histologic response after neoadjuvant chemotherapy: what next?",
    "Born March 1961, seen June 2026 with metastatic non-clear cell RCC: systemic therapy?",
]


# asked once, untimed, before any latency is measured, after a validation pass: a freshly started Neo4j is slow
# for its first thousands of queries (the first validation pass over 7.4k items took 30.6 s after a restart, the
# next ones 8.2 and 7.3 s; a 2,000-item warm-up left the first timed pass at 19.5 s); other questions than
# ASK_QUESTIONS, so the first answer to each of those is still a first answer
WARM_QUESTIONS = [
    "Adult with Ph-positive ALL and MRD positive after induction: what now?",
    "Metastatic renal cell carcinoma, intermediate risk: which first-line treatment?",
    "High-grade osteosarcoma of the femur, resectable: initial treatment?",
    "Which patients with bone sarcoma need chemotherapy?",
]


def _peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# --- points measured in a fresh process ---------------------------------------------------------------------------


def _reference_states(count: int) -> list[Any]:
    """``count`` synthetic guideline states (the latest version of a reference guideline, renamed, perturbed)."""
    from dkg.graph.model import BoxState, EdgeState, VersionState
    from dkg.pdf.synthetic import perturb, reference_versions, rename

    refs = [json.loads(v[-1].read_text(encoding="utf-8")) for v in reference_versions(REFERENCE)]
    states = []
    for i in range(count):
        code = f"{PREFIX}{i:03d}"
        t = perturb(rename(refs[i % len(refs)], code), seed=code)
        boxes = {f"{code}:{n['id']}": BoxState(f"{code}:{n['id']}", n["page"], n["text_resolved"], n["text"],
                                                "decision" if n["constraints"] else "action",
                                                json.dumps(_shift(n["constraints"], code, n["id"])))
                 for n in t["nodes"]}
        edges = {EdgeState(f"{code}:{e['from']}", f"{code}:{e['to']}", "ARROW", e.get("label") or "")
                 for e in t["edges"]}
        edges |= {EdgeState(f"{code}:{lk['from']}", f"{code}:{tn}", "LINKS_TO", "")
                  for lk in t.get("page_links", []) for tn in lk["target_nodes"]}
        states.append(VersionState(code, t["guideline"]["name"], t["guideline"]["version"], f"synthetic-{code}",
                                   boxes, edges))
    return states


def _shift(constraints: list[dict[str, Any]], code: str, node: str) -> list[dict[str, Any]]:
    """The typed constraints with numeric values moved like the box text (``perturb``)."""
    rng = random.Random(f"{code}:{node}")
    shift = rng.choice([-3, -2, -1, 1, 2, 3])
    out = []
    for c in constraints:
        c = dict(c)
        if isinstance(c.get("value"), int | float) and not isinstance(c.get("value"), bool) and c["value"] >= 10:
            c["value"] = min(99, max(10, c["value"] + shift))
        out.append(c)
    return out


def point_pages(n: int) -> dict[str, float]:
    from dkg.pdf.document import ingest_pdf
    from dkg.pdf.synthetic import long_document, reference_versions

    with tempfile.TemporaryDirectory() as tmp:
        pdf = long_document([v[-1] for v in reference_versions(REFERENCE)], n, Path(tmp) / f"long-{n}.pdf")
        t0 = time.perf_counter()
        graph = ingest_pdf(pdf)
        took = time.perf_counter() - t0
    return {"seconds": took, "edges": len(graph.edges), "peak_mib": _peak_mib()}


def point_qa_generation(n: int) -> dict[str, float]:
    from dkg.qa.build import generate
    from dkg.qa.config import note_loaded_guidelines
    from dkg.qa.dataset import view

    states = _reference_states(n)
    note_loaded_guidelines({s.code: s.name for s in states})
    t0 = time.perf_counter()
    views = {s.code: view(s) for s in states}
    items = generate(views)
    return {"seconds": time.perf_counter() - t0, "items": len(items), "peak_mib": _peak_mib()}


def point_training(n: int) -> dict[str, float]:
    """One epoch of the small model on ``n`` items of a generated dataset."""
    from dkg.qa.build import generate
    from dkg.qa.config import note_loaded_guidelines
    from dkg.qa.dataset import view
    from dkg.qa.facts import linker_for
    from dkg.qa.model import load_size, train
    from dkg.qa.training import examples

    states = _reference_states(3)
    note_loaded_guidelines({s.code: s.name for s in states})
    items = generate({s.code: view(s) for s in states})
    rng = random.Random(5)
    items = rng.sample(items, min(n, len(items))) if n <= len(items) else [rng.choice(items) for _ in range(n)]
    linker = linker_for(states)
    ex = examples(items, linker, "cypher")
    # the shipped small size samples at most 5,000 items an epoch (conf/model.yaml), which holds its epoch
    # constant; the curve measures the uncapped cost of n items (drawn with replacement past the generated set)
    size = load_size("small", epochs=1, max_train_items=n)
    with tempfile.TemporaryDirectory() as tmp:
        result = train(ex, ex[:64], size, Path(tmp) / "m", "cypher", "growth")
    return {"seconds": result.history[0].seconds, "items": len(ex), "peak_mib": _peak_mib()}


def point_web(n: int) -> dict[str, float]:
    from bench.bench_rag import WORDS, _site
    from dkg.settings import load_settings
    from dkg.web.rag import SiteIndex, ask

    rng = random.Random(7)
    pages, processed = _site(n, rng)
    assert SiteIndex(pages[:20], processed).passages is not None  # imports and one-time set-up out of the timing
    t0 = time.perf_counter()
    index = SiteIndex(pages, processed)
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    assert index.passages is not None  # the best mode's passage index, otherwise built by the first question
    passages = time.perf_counter() - t0
    settings = load_settings()
    lat = []
    for _ in range(60):
        q = f"What is the {rng.choice(WORDS)} for topic{rng.randrange(n)}?"
        t = time.perf_counter()
        ask(settings, index, q, use_llm=False)
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    return {"seconds": fit, "passages_s": passages, "ask_p50_ms": statistics.median(lat),
            "ask_p95_ms": lat[int(0.95 * len(lat))],
            "peak_mib": _peak_mib()}


POINTS = {"pages": point_pages, "qa": point_qa_generation, "train": point_training, "web": point_web}


def _in_process(kind: str, n: int) -> dict[str, float]:
    """One point in a fresh Python process (clean peak memory)."""
    r = subprocess.run([sys.executable, __file__, "point", kind, str(n)], capture_output=True, text=True,
                       cwd=str(ROOT), timeout=3600, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"growth point {kind} {n} failed:\n{r.stderr[-2000:]}")
    return dict(json.loads(r.stdout.strip().splitlines()[-1]))


# --- the graph: grown in place -------------------------------------------------------------------------------------


def _store_mib(settings: Any, part: str = "databases") -> float:
    # the local server's store files (``databases``) or its transaction logs (``transactions``, kept two days by
    # default: they grow with every load, not with the graph); none with an external NEO4J_URI
    data = settings.state_path / "neo4j" / "home" / "data" / part
    return sum(p.stat().st_size for p in data.rglob("*") if p.is_file()) / 2**20 if data.exists() else float("nan")


def _graph_curves(curves: dict[str, Curve]) -> dict[str, Any]:
    from dkg.errors import DkgError
    from dkg.graph import loader
    from dkg.qa import registry
    from dkg.qa.answer import Answerer
    from dkg.qa.model import Seq2Seq
    from dkg.services.neo4j import status as neo4j_status
    from dkg.settings import load_settings

    settings = load_settings()
    base = [g["code"] for g in loader.guidelines(settings) if not str(g["code"]).startswith(PREFIX)]
    states = _reference_states(max(GUIDELINES))
    extra: dict[str, Any] = {"base_guidelines": base}
    try:
        model = Seq2Seq(registry.promoted_model_dir(settings))
    except DkgError as e:
        print(f"graph curve: no promoted model ({e}); `dkg ask` latency is skipped", file=sys.stderr)
        model = None
    loaded = 0
    facts = {"age": 45, "ph_status": "negative", "mrd": "negative"}
    # each QA set is validated on the graph it was generated from (its guidelines and the base ones), generated
    # just before and dropped after: 130k items held in the process slowed every answer (the collector walks them)
    pending = {min(QA_GUIDELINES): _qa_set(min(QA_GUIDELINES))}
    extra["validation"] = {"errors": {}, "graph_guidelines": {}}
    _warm(settings, model, facts, pending[min(QA_GUIDELINES)])
    try:
        for target in GUIDELINES:
            want = max(0, target - len(base))
            load_s = 0.0
            for i in range(loaded, want):
                t0 = time.perf_counter()
                loader.load_version(settings, states[i])
                load_s += time.perf_counter() - t0
                if i + 1 in QA_GUIDELINES:
                    items = pending.pop(i + 1, None) or _qa_set(i + 1)
                    _validate(curves, settings, items, len(base) + i + 1, extra["validation"])
                    del items
                    gc.collect()
            if want > loaded:
                curves["load"].add(target, load_s / (want - loaded) * 1000)
            loaded = max(loaded, want)
            n = len(base) + loaded
            lat: list[float] = []
            if model is not None:
                answerer = Answerer(settings, model)
                answerer.ask(ASK_QUESTIONS[0])  # warm: the linker and the reader over every loaded guideline
                for _ in range(5):  # 60 answers: the p95 is the 4th slowest, not the 2nd of 24
                    for q in ASK_QUESTIONS:
                        t = time.perf_counter()
                        answerer.ask(q)
                        lat.append((time.perf_counter() - t) * 1000)
                lat.sort()
                curves["ask_p95"].add(n, lat[int(0.95 * len(lat))])
                curves["ask_p50"].add(n, statistics.median(lat))
            m_all, m_one = [], []
            for _ in range(20):
                t = time.perf_counter()
                loader.match_patient(settings, facts)
                m_all.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                loader.match_patient(settings, facts, code=base[0] if base else states[0].code)
                m_one.append((time.perf_counter() - t) * 1000)
            curves["match_all"].add(n, statistics.median(m_all))
            curves["match_one"].add(n, statistics.median(m_one))
            store = _store_mib(settings)  # one walk of the store folder per size
            curves["store"].add(n, store)
            extra[f"neo4j_rss_mib_{n}"] = neo4j_status(settings).rss_mib
            extra[f"neo4j_tx_logs_mib_{n}"] = _store_mib(settings, "transactions")
            print(f"  graph {n} guidelines: ask p95 {lat[int(0.95 * len(lat))] if lat else float('nan'):.0f} ms, "
                  f"match(all) {statistics.median(m_all):.1f} ms, store {store:.0f} MiB",
                  file=sys.stderr, flush=True)
    finally:
        for s in states[:loaded]:
            loader.remove_guideline(settings, s.code)
    return extra


def _warm(settings: Any, model: Any, facts: dict[str, Any], items: list[Any]) -> None:
    """Untimed: a freshly started Neo4j's first thousands of queries (see ``WARM_QUESTIONS``). The items'
    guidelines are not loaded yet: the questions that name one find nothing, those that name none run over
    the base guidelines."""
    from dkg.graph import loader
    from dkg.qa.answer import Answerer
    from dkg.qa.validate import run_items

    run_items(settings, items)

    if model is not None:
        answerer = Answerer(settings, model)
        for q in WARM_QUESTIONS:
            answerer.ask(q)
    loader.match_patient(settings, facts)


def _qa_set(g: int) -> list[Any]:
    """The generated QA items of the first ``g`` synthetic guidelines."""
    from dkg.qa.build import generate
    from dkg.qa.config import note_loaded_guidelines
    from dkg.qa.dataset import view

    states = _reference_states(g)
    note_loaded_guidelines({s.code: s.name for s in states})
    return generate({s.code: view(s) for s in states})


def _validate(curves: dict[str, Curve], settings: Any, items: list[Any], in_graph: int, out: dict[str, Any]) -> None:
    """Run every item's query against the graph (the validation flow's work) as production does: on the graph
    the items were generated from. A question that names no guideline runs over every guideline in the graph,
    so validating a small set on a large graph measures the graph, not the set (docs/deploy.md)."""
    from dkg.qa.validate import run_items

    t0 = time.perf_counter()
    results = run_items(settings, items)
    seconds = time.perf_counter() - t0
    curves["validate"].add(len(items), seconds)
    out["errors"][str(len(items))] = sum(1 for r in results.values() if getattr(r, "error", None))
    out["graph_guidelines"][str(len(items))] = in_graph
    print(f"  validate {len(items)} items on {in_graph} guidelines: {seconds:.1f} s", file=sys.stderr, flush=True)


# --- the run -------------------------------------------------------------------------------------------------------


def run() -> list[Row]:
    curves = {
        "pages": Curve("ingest (vector PDF)", "pages per PDF", "s"),
        "pages_mem": Curve("ingest peak memory", "pages per PDF", "MiB"),
        "load": Curve("load one guideline", "guidelines in the graph", "ms"),
        "ask_p50": Curve("dkg ask p50", "guidelines in the graph", "ms"),
        "ask_p95": Curve("dkg ask p95", "guidelines in the graph", "ms"),
        "match_all": Curve("dkg match, all guidelines", "guidelines in the graph", "ms"),
        "match_one": Curve("dkg match, one guideline", "guidelines in the graph", "ms"),
        "store": Curve("Neo4j store files", "guidelines in the graph", "MiB"),
        "qa_gen": Curve("QA generation", "QA items", "s"),
        "qa_mem": Curve("QA generation peak memory", "QA items", "MiB"),
        "validate": Curve("QA validation (every query run)", "QA items", "s"),
        "train": Curve("training, one epoch (small)", "QA items", "s"),
        "web_fit": Curve("TF-IDF index build", "web pages", "s"),
        "web_passages": Curve("passage (BM25) index build", "web pages", "s"),
        "web_p50": Curve("web ask p50", "web pages", "ms"),
        "web_p95": Curve("web ask p95", "web pages", "ms"),
        "web_mem": Curve("web index peak memory", "web pages", "MiB"),
    }
    for n in PAGES:
        p = _in_process("pages", n)
        curves["pages"].add(n, p["seconds"])
        curves["pages_mem"].add(n, p["peak_mib"])
        print(f"  pages {n}: {p['seconds']:.2f} s, {p['peak_mib']:.0f} MiB", file=sys.stderr, flush=True)
    per_guideline = []
    for g in QA_GUIDELINES:
        p = _in_process("qa", g)
        curves["qa_gen"].add(p["items"], p["seconds"])
        curves["qa_mem"].add(p["items"], p["peak_mib"])
        per_guideline.append((p["items"] / g, p["seconds"] / g))
        print(f"  qa {g} guidelines: {p['items']:.0f} items, {p['seconds']:.1f} s", file=sys.stderr, flush=True)
    if len(per_guideline) >= 2:
        (i0, s0), (i1, s1) = per_guideline[0], per_guideline[-1]
        curves["qa_gen"].note = (f"per guideline {s0:.1f} → {s1:.1f} s, while items per guideline fall {i0:.0f} → "
                                 f"{i1:.0f}: more synthetic copies make more questions that name no guideline "
                                 "ambiguous, and those are left out")
    for n in TRAIN_ITEMS:
        p = _in_process("train", n)
        curves["train"].add(p["items"], p["seconds"])
        print(f"  train {n}: {p['seconds']:.1f} s/epoch", file=sys.stderr, flush=True)
    for n in WEB_PAGES:
        p = _in_process("web", n)
        curves["web_fit"].add(n, p["seconds"])
        curves["web_passages"].add(n, p["passages_s"])
        curves["web_p50"].add(n, p["ask_p50_ms"])
        curves["web_p95"].add(n, p["ask_p95_ms"])
        curves["web_mem"].add(n, p["peak_mib"])
        print(f"  web {n}: fit {p['seconds']:.1f} s, passages {p['passages_s']:.1f} s, "
              f"ask p95 {p['ask_p95_ms']:.1f} ms", file=sys.stderr, flush=True)
    extra = _graph_curves(curves)
    curves["match_all"].note = ("one query over every guideline's decisions: its work is the graph's size "
                                "(use a guideline code to stay constant)")
    _report(curves, extra)
    rows = []
    for key in ("pages", "qa_gen", "validate", "train", "web_fit", "web_passages"):
        c = curves[key]
        if len(c.xs) >= 2:
            rows.append(Row(f"{c.name}: per unit at {c.xs[-1]:g}", c.ys[-1] / c.xs[-1] * 1000,
                            f"per unit at {c.xs[0]:g}", c.ys[0] / c.xs[0] * 1000, "m" + c.y_label))
    for key in ("load", "ask_p95", "match_one", "web_p95"):
        c = curves[key]
        if len(c.xs) >= 2:
            rows.append(Row(f"{c.name} at {c.xs[-1]:g}", c.ys[-1], f"at {c.xs[0]:g}", c.ys[0], c.y_label))
    return rows


def _report(curves: dict[str, Curve], extra: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    print("\ngrowth (cost ≈ a·n^b, least squares on log–log axes)")
    print(f"{'curve':<36} {'input':<24} {'sizes':<34} {'cost':<40} {'b':>5}  order")
    for c in curves.values():
        if not c.xs:
            continue
        sizes = ", ".join(f"{x:g}" for x in c.xs)
        costs = ", ".join(f"{y:.3g}" for y in c.ys) + f" {c.y_label}"
        print(f"{c.name:<36} {c.x_label:<24} {sizes:<34} {costs:<40} {c.exponent:>5.2f}  {c.order}"
              + (f"  ({c.note})" if c.note else ""))
    groups = {"pdf-pages": ["pages", "pages_mem"], "graph-size": ["load", "ask_p50", "ask_p95", "match_all",
                                                                    "match_one", "store"],
              "qa-items": ["qa_gen", "qa_mem", "validate", "train"],
              "web-pages": ["web_fit", "web_passages", "web_p50", "web_p95", "web_mem"]}
    for name, keys in groups.items():
        chosen = [curves[k] for k in keys if len(curves[k].xs) >= 2]
        if chosen:
            svg(chosen, OUT / f"{name}.svg", f"growth: {chosen[0].x_label}")
    data = {k: {"name": c.name, "x": c.xs, "y": c.ys, "unit": c.y_label, "b": c.exponent, "order": c.order,
                "note": c.note} for k, c in curves.items()}
    (OUT / "growth.json").write_text(json.dumps({"curves": data, "extra": extra}, indent=1), encoding="utf-8")
    print(f"charts and data: {OUT}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "point":
        print(json.dumps(POINTS[sys.argv[2]](int(sys.argv[3]))))
    else:
        for r in run():
            print(f"{r.measure:<50} {r.value:>10.3f} {r.unit:<4} {r.baseline_name:<24} {r.baseline:>10.3f} "
                  f"{r.ratio:>7.2f}x")
