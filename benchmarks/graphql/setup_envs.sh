#!/usr/bin/env bash
# Create (or refresh) the two virtualenvs the GraphQL benchmark runs in. Idempotent:
# a venv whose recorded requirement set matches is left alone.
#
#   bash benchmarks/graphql/setup_envs.sh            # from the repository root
#
# .venvs/bench-graphene   Django 5.2, graphene-django 3.2.x, graphql-core 3.2.x, appframework -e
# .venvs/bench-strawberry Django 5.2, strawberry-graphql,    graphql-core 3.3.x, appframework -e
#
# graphene-django pins graphql-core<3.3 and current strawberry needs >=3.3, hence two venvs.
# "ours" and "floor" run in both, so every ratio is taken inside one graphql-core.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="${PYTHON:-python3}"
VENVS="$ROOT/.venvs"

GRAPHENE_REQS=("Django>=5.2,<5.3" "graphene-django==3.2.3" "graphql-core>=3.2,<3.3")
STRAWBERRY_REQS=("Django>=5.2,<5.3" "strawberry-graphql==0.341.2" "graphql-core>=3.3,<3.4")

# pip, minus this machine's noise about absent local index folders.
pip_q() {
    local dir="$1"; shift
    "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@" \
        2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2 || true)
}

make_env() {
    local name="$1"; shift
    local dir="$VENVS/$name"
    local want stamp
    want="$("$PY" -c 'import sys; print(sys.version.split()[0])') $* appframework-e $(sha1sum "$ROOT/pyproject.toml" | cut -c1-12)"
    stamp="$dir/.bench-reqs"
    if [[ -x "$dir/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        echo "[$name] up to date"
        return
    fi
    echo "[$name] creating/updating"
    [[ -x "$dir/bin/python" ]] || "$PY" -m venv "$dir"
    pip_q "$dir" "$@"
    # Our package, editable, without letting it move the pins above.
    pip_q "$dir" --no-deps -e "$ROOT"
    "$dir/bin/python" -m pip check
    echo "$want" > "$stamp"
}

make_env bench-graphene "${GRAPHENE_REQS[@]}"
make_env bench-strawberry "${STRAWBERRY_REQS[@]}"

for name in bench-graphene bench-strawberry; do
    "$VENVS/$name/bin/python" - "$name" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
out = []
for dist in ("Django", "graphql-core", "graphene", "graphene-django", "strawberry-graphql", "appframework"):
    try:
        out.append(f"{dist}={version(dist)}")
    except PackageNotFoundError:
        pass
print(f"[{sys.argv[1]}] python={sys.version.split()[0]} " + " ".join(out))
PY
done
