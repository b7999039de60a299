#!/usr/bin/env bash
# The whole GraphQL endpoint benchmark: both venvs, then one table with the ratios.
#
#   bash benchmarks/graphql/run.sh [extra bench.py options, e.g. --rounds 5 --clock wall]
#
# About 1.5-2.5 minutes on the 2-core VM (creating the venvs the first time adds ~1 min).
# Exit status: 0 when every target ratio is met, 1 when one is missed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENVS="$ROOT/.venvs"

bash "$HERE/setup_envs.sh" >/dev/null 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2 || true)

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

echo "== bench-graphene (graphql-core 3.2): ours, ours-nocache, graphene, floor"
"$VENVS/bench-graphene/bin/python" "$HERE/bench.py" \
    --contenders ours,ours-nocache,graphene,floor \
    --venv bench-graphene --json "$OUT/graphene.json" "$@"
echo
echo "== bench-strawberry (graphql-core 3.3): ours, ours-nocache, strawberry, strawberry-cached, floor"
"$VENVS/bench-strawberry/bin/python" "$HERE/bench.py" \
    --contenders ours,ours-nocache,strawberry,strawberry-cached,floor \
    --venv bench-strawberry --json "$OUT/strawberry.json" "$@"
echo
echo "== summary (us/request = median over rounds of batch means; lower is better)"
python3 "$HERE/bench.py" report "$OUT/graphene.json" "$OUT/strawberry.json"
