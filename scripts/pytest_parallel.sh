#!/usr/bin/env bash
# The test suite in two pytest processes on one machine: tests/unit (no services, mostly CPU) beside the
# rest (real services; long stretches spent waiting on outages, restarts and JVMs), so the unit tests fill
# that idle time. With arguments, one pytest process runs exactly what they ask for.
set -uo pipefail
cd "$(dirname "$0")/.."
if (($#)); then exec .venv/bin/pytest "$@"; fi
unit_log=$(mktemp -t dkg-unit-XXXXXX.log)
.venv/bin/pytest tests/unit -p no:cacheprovider >"$unit_log" 2>&1 &
unit_pid=$!
trap 'kill "$unit_pid" 2>/dev/null || true' INT TERM
.venv/bin/pytest --ignore=tests/unit
rest=$?
wait "$unit_pid"
unit=$?
echo "================ tests/unit (ran beside the suite above; exit $unit) ================"
cat "$unit_log"
rm -f "$unit_log"
exit $((rest != 0 || unit != 0))
