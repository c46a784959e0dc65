"""Print the fault-injection table (fault, how injected, what happened, data lost, recovery) from the
rows the fault tests wrote to .dkg/faults/results.jsonl (the latest row of each fault)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / ".dkg" / "faults" / "results.jsonl"


def main() -> int:
    if not RESULTS.exists():
        print(f"no results at {RESULTS}: run `make faults` (or pytest tests/faults) first", file=sys.stderr)
        return 1
    rows: dict[str, dict[str, object]] = {}
    for line in RESULTS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[str(row["fault"])] = row
    print("| fault | injected how | what happened | data lost | recovery (s) | time (s) | peak memory (MB) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows.values():
        rec = "-" if r.get("recovery_s") is None else f"{r['recovery_s']}"
        mem = r.get("peak_rss_mb", r.get("peak_rss_growth_mb", "-"))
        print(f"| {r['fault']} | {r['injected']} | {r['outcome']} | {r['data_lost']} | {rec} | "
              f"{r.get('seconds', '-')} | {mem} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
