"""First sight of a guideline nobody here wrote, end to end, as a new user would meet it.

For each folder given (``truth.json`` in the reference schema and ``questions.jsonl`` in the qa-dev format,
written by someone who never saw the code), with the reference guidelines loaded (``make demo``):

1. draw the guideline in a style of the matrix kept out of development (vector) and scan that drawing;
2. publish the vector PDF in a watched folder and run the watcher's whole chain (build-dkg with new attributes
   approved automatically, QA dataset refresh, retraining, promotion), recording whether it completed and what
   the QA dataset said changed;
3. score the constraint CSV of that run naming-blind against the truth, and the scanned copy's too (ingest and
   extract only; arrows scored as in the style matrix);
4. ask the questions with the promoted model (and qa-dev, so the sample guidelines' score is seen too).

Each guideline is measured beside the three references alone: the one before it is removed from the graph.
Nothing here changes shared/ or the committed sets. Usage::

    .venv/bin/python bench/first_sight.py tests/fixtures/heldout/MEL tests/fixtures/heldout/THY --out .dkg/first
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# styles of the matrix that development never looked at (held out), one per guideline in turn
HELD_OUT_STYLES = ("td-oval-curved-filled-grey", "lr-diamond-straight-filled", "td-rounded-elbow-open-courier",
                   "lr-oval-elbow-stealth-courier-grey", "lr-rounded-diamond-curved-stealth-times")


def _newest_csv(runs: Path, stem: str) -> Path | None:
    found = [p for p in runs.rglob("constraints.csv") if stem in str(p)]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def _score_csv(csv_path: Path | None, truth: dict[str, Any]) -> dict[str, Any]:
    from dkg.constraints.evaluate import score_constraints

    if csv_path is None:
        return {"error": "no constraints.csv"}
    s = score_constraints(csv_path, truth, naming_blind=True)
    return {"f1": round(s.overall.f1, 4), "precision": round(s.overall.precision, 4),
            "recall": round(s.overall.recall, 4), "tp": s.overall.tp, "fp": s.overall.fp, "fn": s.overall.fn,
            "box_exact": round(s.box_exact, 4), "boxes_matched": s.boxes_matched, "boxes": s.boxes,
            "csv": str(csv_path)}


def _box_diffs(csv_path: Path | None, truth: dict[str, Any]) -> list[dict[str, Any]]:
    """Per box, where the naming-blind score finds a difference: the truth's constraints, what was extracted,
    and the items each side lacks after the attribute names were paired (for reading the classes)."""
    from dkg.constraints.evaluate import _canonical, attribute_map, read_csv_boxes
    from dkg.constraints.models import items_from_json, items_to_json
    from dkg.pdf.evaluate import normalise

    if csv_path is None:
        return []
    got = read_csv_boxes(csv_path)
    keys = {n["id"]: ((n.get("page") or ""), normalise(n["text"])) for n in truth["nodes"]}
    mapping = attribute_map([(items_from_json(n.get("constraints", [])), got[keys[n["id"]]]) for n in truth["nodes"]
                             if keys[n["id"]] in got])
    out = []
    for n in truth["nodes"]:
        key = keys[n["id"]]
        want = items_from_json(n.get("constraints", []))
        have = got.get(key)
        if have is None:
            out.append({"box": n["id"], "kind": n.get("kind"), "text": n["text"], "truth": n.get("constraints", []),
                        "extracted": None})
            continue
        w = {i.key(): i for i in _canonical(want, {c: c for c in _attrs(want)})}
        h = {i.key(): i for i in _canonical(have, mapping)}
        if set(w) != set(h):
            out.append({"box": n["id"], "kind": n.get("kind"), "text": n["text"], "truth": n.get("constraints", []),
                        "extracted": items_to_json(have),
                        "missing": items_to_json([i for k, i in w.items() if k not in h]),
                        "extra": items_to_json([i for k, i in h.items() if k not in w])})
    return out


def _attrs(items: list[Any]) -> set[str]:
    from dkg.constraints.evaluate import _members

    return {c.attr for c in _members(items)}


def _chain(pdf: Path, work: Path) -> dict[str, Any]:
    from flows.watch_guidelines import watch_guidelines

    inbox = work / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    shutil.copy(pdf, inbox / pdf.name)
    sources = work / "sources.yaml"
    sources.write_text(f"sources:\n  - name: first-sight-{uuid.uuid4().hex[:8]}\n    kind: folder\n"
                       f"    location: {inbox}\n    pattern: '*.pdf'\n", encoding="utf-8")
    t0 = time.perf_counter()
    try:
        report = watch_guidelines(str(sources), full_pipeline=True, with_baseline=False)
    except Exception as e:  # the point is to see what a user would see
        return {"completed": False, "error": f"{type(e).__name__}: {str(e)[:600]}",
                "trace": traceback.format_exc()[-2000:], "seconds": round(time.perf_counter() - t0, 1)}
    down = report.downstream
    qa = down.qa if down else None
    model = down.model if down else None
    return {"completed": bool(report.loaded) and not report.failed and down is not None,
            "loaded": report.loaded, "failed": report.failed, "seconds": round(time.perf_counter() - t0, 1),
            "qa_items": qa.items if qa else None, "qa_valid": qa.valid if qa else None,
            "qa_changes": qa.changes if qa else None, "qa_reasons": qa.reasons if qa else None,
            "model_promoted": model.promoted if model else None,
            "model": model.model_dump(mode="json") if model else None}


def _scanned(pdf: Path, truth_path: Path, work: Path) -> dict[str, Any]:
    from dkg.pdf.models import GuidelineGraph
    from dkg.pdf.stylematrix import score_document
    from flows.extract_constraints import extract_constraints
    from flows.ingest_guideline import ingest_guideline

    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    try:
        ing = ingest_guideline(str(pdf), str(work / "scan"))
        graph = GuidelineGraph.model_validate_json(Path(ing.graph_json).read_text(encoding="utf-8"))
        boxes, arrows, links = score_document(graph, truth)
        ext = extract_constraints(ing.edges_csv, str(work / "scan"))
        csv_path = Path(ext.constraints_csv)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {str(e)[:600]}"}
    return {"box_f1": round(boxes.f1, 4), "arrow_f1": round(arrows.f1, 4), "link_f1": round(links.f1, 4),
            "constraints": _score_csv(csv_path, truth), "diffs": _box_diffs(csv_path, truth)}


def _ask(questions: Path) -> dict[str, Any]:
    from dkg.qa import registry
    from dkg.qa.answer import Answerer
    from dkg.qa.clinician_eval import load_questions, score
    from dkg.qa.model import Seq2Seq
    from dkg.settings import load_settings

    settings = load_settings()
    answerer = Answerer(settings, Seq2Seq(registry.promoted_model_dir(settings)))
    report = score(load_questions(questions), answerer.ask_many)
    return {"n": report.n, "correct": report.correct, "accuracy": report.accuracy, "wrong": report.wrong,
            "wrong_rate": report.wrong_rate, "statuses": report.statuses,
            "by_type": {k: v.model_dump() for k, v in report.by_type.items()},
            "misses": [m.model_dump() for m in report.misses]}


def measure(folder: Path, style_name: str, out: Path, others: list[str], scan: bool = True) -> dict[str, Any]:
    from dkg.graph import loader
    from dkg.pdf.stylematrix import build_cell, style_named
    from dkg.settings import load_settings

    settings = load_settings()
    truth_path = folder / "truth.json"
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    code = truth["guideline"]["short"]
    work = out / code
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for other in [*others, code]:  # beside the references alone, from nothing
        loader.remove_guideline(settings, other)
    style = style_named(style_name)
    vec_pdf, vec_truth = build_cell(truth_path, style, work / "drawn", scanned=False)
    scan_pdf, scan_truth = build_cell(truth_path, style, work / "drawn", scanned=True)
    named = work / f"{code}-{truth['guideline']['version']}.pdf"
    shutil.copy(vec_pdf, named)
    result: dict[str, Any] = {"guideline": code, "style": style_name}
    result["chain"] = _chain(named, work)
    csv_path = _newest_csv(settings.state_path / "runs", named.stem)
    vt = json.loads(vec_truth.read_text(encoding="utf-8"))
    result["vector"] = {"constraints": _score_csv(csv_path, vt), "diffs": _box_diffs(csv_path, vt)}
    result["questions"] = _ask(folder / "questions.jsonl") if result["chain"]["completed"] else None
    qa_dev = ROOT.parent / "shared" / "data" / "qa-dev" / "questions.jsonl"
    if result["chain"]["completed"] and qa_dev.exists():
        dev = _ask(qa_dev)
        result["qa_dev"] = {k: dev[k] for k in ("n", "correct", "accuracy", "wrong")}
    result["scanned"] = _scanned(scan_pdf, scan_truth, work) if scan else {}
    (work / "result.json").write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str),
                                      encoding="utf-8")
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--styles", nargs="*", default=None, help="One held-out style per folder (default: in turn).")
    ap.add_argument("--out", type=Path, default=ROOT / ".dkg" / "first-sight")
    ap.add_argument("--keep", action="store_true", help="Leave the last guideline loaded.")
    ap.add_argument("--no-scan", action="store_true", help="Skip the scanned copies.")
    args = ap.parse_args()
    os.environ.setdefault("DKG_AUTO_APPROVE_ATTRIBUTES", "1")
    from dkg.graph import loader
    from dkg.settings import load_settings
    from dkg_cli.env import configure_prefect

    configure_prefect(load_settings())
    codes = [json.loads((f / "truth.json").read_text(encoding="utf-8"))["guideline"]["short"] for f in args.folders]
    rows = []
    for i, folder in enumerate(args.folders):
        style = (args.styles or [])[i] if args.styles and i < len(args.styles) else \
            HELD_OUT_STYLES[i % len(HELD_OUT_STYLES)]
        r = measure(folder, style, args.out, codes, scan=not args.no_scan)
        rows.append(r)
        q = r.get("questions") or {}
        print(json.dumps({"guideline": r["guideline"], "style": style, "chain": r["chain"]["completed"],
                          "qa_changes": r["chain"].get("qa_changes"),
                          "constraint_f1_vector": r["vector"]["constraints"].get("f1"),
                          "constraint_f1_scanned": (r["scanned"].get("constraints") or {}).get("f1"),
                          "arrow_f1_scanned": r["scanned"].get("arrow_f1"),
                          "qa": f"{q.get('correct')}/{q.get('n')}", "wrong": q.get("wrong"),
                          "qa_dev": r.get("qa_dev")}), flush=True)
    if not args.keep:
        settings = load_settings()
        for code in codes:
            loader.remove_guideline(settings, code)
    (args.out / "summary.json").write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
