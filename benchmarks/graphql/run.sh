#!/usr/bin/env bash
# The whole GraphQL endpoint benchmark: both venvs, then one table with the ratios.
#
#   bash benchmarks/graphql/run.sh [--json] [bench.py options, e.g. --quick, --rounds 5 --clock wall]
#
# About 1-1.5 minutes on the 2-core VM (--quick: ~20 s; creating the venvs the first
# time adds a minute or more). --json: the report goes to stderr and stdout carries only the
# ratios as one JSON object (see benchmarks/benchlib.py). Exit status 0 whenever it ran,
# a missed target included (the table says ok/MISSED).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENVS="$ROOT/.venvs"

REPORT_ARGS=()
BENCH_ARGS=()
for arg in "$@"; do
    if [[ "$arg" == --json ]]; then REPORT_ARGS+=(--json); else BENCH_ARGS+=("$arg"); fi
done
exec 3>&1  # the report's stdout
if [[ ${#REPORT_ARGS[@]} -gt 0 ]]; then
    exec 1>&2  # everything else goes to stderr; only the JSON goes to stdout
fi

bash "$HERE/setup_envs.sh" >/dev/null 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2 || true)

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

echo "== bench-graphene (graphql-core 3.2): ours, ours-nocache, graphene, floor"
"$VENVS/bench-graphene/bin/python" "$HERE/bench.py" \
    --contenders ours,ours-nocache,graphene,floor \
    --venv bench-graphene --samples "$OUT/graphene.json" ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
echo
echo "== bench-strawberry (graphql-core 3.3): ours, ours-nocache, strawberry, strawberry-cached, floor"
"$VENVS/bench-strawberry/bin/python" "$HERE/bench.py" \
    --contenders ours,ours-nocache,strawberry,strawberry-cached,floor \
    --venv bench-strawberry --samples "$OUT/strawberry.json" ${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}
echo
echo "== summary (us/request = median over rounds of batch means; lower is better)"
"$VENVS/bench-graphene/bin/python" "$HERE/bench.py" report ${REPORT_ARGS[@]+"${REPORT_ARGS[@]}"} \
    "$OUT/graphene.json" "$OUT/strawberry.json" >&3
