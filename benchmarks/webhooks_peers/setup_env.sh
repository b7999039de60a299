#!/usr/bin/env bash
# Create (or refresh) the virtualenv the webhook benchmark's peers run in. Idempotent: a
# venv whose recorded requirement set matches is left alone.
#
#   bash benchmarks/webhooks_peers/setup_env.sh      # from the repository root
#
# .venvs/bench-webhook-peers  Django 5.2, Celery (the version .venv has), psycopg 3, redis,
#                             requests, django-webhook 0.0.15, django-webhook-subscriber 2.3.0
#
# appframework is NOT installed there: the peers never import our code. peer_driver.py runs
# with this venv's python, driven by benchmarks/webhooks.py over stdin/stdout.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="${PYTHON:-python3}"
VENVS="$ROOT/.venvs"
NAME=bench-webhook-peers
DIR="$VENVS/$NAME"

# Celery pinned to the version the suite's benchmark runs with (.venv), so the peers and the
# suite are measured on the same Celery; 5.6.3 when .venv is absent.
CELERY_VERSION="5.6.3"
if [[ -x "$ROOT/.venv/bin/python" ]]; then
    CELERY_VERSION="$("$ROOT/.venv/bin/python" -c 'import celery; print(celery.__version__)' 2>/dev/null || echo "$CELERY_VERSION")"
fi

REQS=(
    "Django>=5.2,<5.3"
    "celery[redis]==$CELERY_VERSION"
    "psycopg[binary]>=3.1"
    "redis"
    "requests"
    "django-webhook==0.0.15"
)
# django-webhook-subscriber 2.3.0 declares celery<5.7: a cap, not a known incompatibility
# (it uses shared_task, group and apply_async(countdown=...), which work on 5.7 here). To
# measure it on the suite's Celery it is installed with --no-deps, its other requirements
# (below, within its own bounds) installed first; `pip check` then reports that one cap,
# and only that is tolerated.
SUBSCRIBER="django-webhook-subscriber==2.3.0"
SUBSCRIBER_DEPS=("djangorestframework>=3.15.0,<3.18" "requests>=2.32.3,<2.33" "redis>=6.4,<7.5")

# pip, minus this machine's noise about absent local index folders.
pip_q() {
    "$DIR/bin/python" -m pip install -q --disable-pip-version-check "$@" \
        2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2 || true)
}

want="$("$PY" -c 'import sys; print(sys.version.split()[0])') ${REQS[*]} ${SUBSCRIBER_DEPS[*]} $SUBSCRIBER"
stamp="$DIR/.bench-reqs"
if [[ -x "$DIR/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "[$NAME] up to date"
else
    echo "[$NAME] creating/updating"
    mkdir -p "$VENVS"
    [[ -x "$DIR/bin/python" ]] || "$PY" -m venv "$DIR"
    pip_q "${REQS[@]}" "${SUBSCRIBER_DEPS[@]}"
    pip_q --no-deps "$SUBSCRIBER"
    # Any conflict but the subscriber's Celery cap fails the set-up.
    if ! check="$("$DIR/bin/python" -m pip check 2>&1)"; then
        others="$(grep -v '^django-webhook-subscriber .* requirement celery<5.7' <<<"$check" || true)"
        if [[ -n "$others" ]]; then
            echo "$check" >&2
            exit 1
        fi
        echo "[$NAME] tolerated: $check"
    fi
    echo "$want" > "$stamp"
fi

"$DIR/bin/python" - "$NAME" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version

out = []
for dist in ("Django", "celery", "kombu", "redis", "psycopg", "requests",
             "django-webhook", "django-webhook-subscriber"):
    try:
        out.append(f"{dist}={version(dist)}")
    except PackageNotFoundError:
        out.append(f"{dist}=MISSING")
print(f"[{sys.argv[1]}] python={sys.version.split()[0]} " + " ".join(out))
PY
