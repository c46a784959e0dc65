#!/usr/bin/env bash
# Run one phase of a make target and print how long it took: scripts/phase.sh NAME CMD...
set -uo pipefail
name=$1; shift
start=$(date +%s%N)
"$@"; rc=$?
end=$(date +%s%N)
ms=$(( (end - start) / 1000000 ))
printf '[phase] %-10s %5d.%01d s  (exit %d)\n' "$name" $((ms / 1000)) $(((ms % 1000) / 100)) "$rc"
exit $rc
