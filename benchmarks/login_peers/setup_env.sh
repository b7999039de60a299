#!/usr/bin/env bash
# The virtualenv of benchmarks/login_page.py's peer, django-allauth 65.22.1 (with its MFA
# app, as a project that wants what our accounts offer would install it):
# .venvs/bench-login-peers (Django 5.2, redis at .venv's version so that both sides talk
# to the cache through one client). Its own, because allauth and our code never share a
# process. Left alone when its requirements have not changed.
#
#   bash benchmarks/login_peers/setup_env.sh      # from anywhere
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="$ROOT/.venvs/bench-login-peers"
PY="${PYTHON:-python3}"
REDIS="$("$ROOT/.venv/bin/python" -c 'import redis; print(redis.__version__)')"
REQS=("Django>=5.2,<5.3" "django-allauth[mfa]==65.22.1" "redis==$REDIS")

want="$("$PY" -c 'import sys; print(sys.version.split()[0])') ${REQS[*]}"
if [[ -x "$DIR/bin/python" && "$(cat "$DIR/.bench-reqs" 2>/dev/null)" == "$want" ]]; then
    echo "[bench-login-peers] up to date"
    exit 0
fi
echo "[bench-login-peers] creating/updating"
[[ -x "$DIR/bin/python" ]] || "$PY" -m venv "$DIR"
# (minus pip's notes about absent local index folders on some machines)
"$DIR/bin/python" -m pip install -q --disable-pip-version-check "${REQS[@]}" \
    2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2 || true)
echo "$want" > "$DIR/.bench-reqs"
