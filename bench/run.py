"""Run every benchmark and print one table: measure, value, in-run baseline, ratio.

Usage: ``.venv/bin/python bench/run.py [NAME ...]`` (``make bench``); NAME filters modules
``bench/bench_NAME.py``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import Row


def main(argv: list[str]) -> int:
    """Run the selected benchmark modules and print the table."""
    names = sorted(p.stem.removeprefix("bench_") for p in Path(__file__).parent.glob("bench_*.py"))
    selected = [n for n in names if not argv or n in argv]
    rows: list[tuple[str, Row]] = []
    for name in selected:
        print(f"running bench_{name} …", file=sys.stderr, flush=True)
        module = importlib.import_module(f"bench.bench_{name}")
        rows += [(name, r) for r in module.run()]
    header = (f"{'group':<10} {'measure':<36} {'value':>10} {'baseline (same run)':<30} "
              f"{'base':>10} {'ratio':>8}")
    print(header)
    print("-" * len(header))
    for group, r in rows:
        print(f"{group:<10} {r.measure:<36} {r.value:>8.3f} {r.unit:<1} {r.baseline_name:<30} "
              f"{r.baseline:>8.3f} {r.unit:<1} {r.ratio:>7.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
