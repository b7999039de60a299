#!/usr/bin/env bash
# The virtualenv of benchmarks/webhooks.py's peer, django-webhook 0.0.15:
# .venvs/bench-webhook-peers (Django 5.2, psycopg 3, Celery at .venv's version so that
# both sides run on one Celery). Its own, because the peer and our code never share a
# process. Left alone when its requirements have not changed.
#
#   bash benchmarks/webhooks_peers/setup_env.sh      # from anywhere
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="$ROOT/.venvs/bench-webhook-peers"
PY="${PYTHON:-python3}"
CELERY="$("$ROOT/.venv/bin/python" -c 'import celery; print(celery.__version__)')"
REQS=("Django>=5.2,<5.3" "celery[redis]==$CELERY" "psycopg[binary]>=3.1" "django-webhook==0.0.15")

want="$("$PY" -c 'import sys; print(sys.version.split()[0])') ${REQS[*]}"
if [[ -x "$DIR/bin/python" && "$(cat "$DIR/.bench-reqs" 2>/dev/null)" == "$want" ]]; then
    echo "[bench-webhook-peers] up to date"
    exit 0
fi
echo "[bench-webhook-peers] creating/updating"
[[ -x "$DIR/bin/python" ]] || "$PY" -m venv "$DIR"
# (minus pip's notes about absent local index folders on some machines)
"$DIR/bin/python" -m pip install -q --disable-pip-version-check "${REQS[@]}" \
    2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2 || true)
echo "$want" > "$DIR/.bench-reqs"
