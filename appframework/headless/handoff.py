"""Single sign-on for apps: the provider sign-in runs in a browser, the app gets a
session — and no token ever rides in a URL.

1. The app makes a PKCE pair (``code_verifier``, ``code_challenge`` = BASE64URL(SHA-256
   (verifier))) and a random ``state``, and opens, in the system browser or a web view,
   ``app/v1/auth/provider/redirect?kind=oauth&provider=<name>&code_challenge=<c>
   &state=<s>&redirect_uri=<one of AUTH["APP_REDIRECT_URIS"]>``.
2. The browser signs in at the provider — always: a session the browser already has
   does not count (the second factor follows on the suite's own pages, as on the site)
   — and comes back to ``.../provider/complete``.
3. That page asks the person to continue to the app (a button: a form posted from the
   site's own page, so no cross-site navigation alone hands anything out). The POST
   mints a one-use code bound to the user, the challenge and the moment the provider
   vouched for them (good for ``CODE_TTL`` seconds), ends the browser session the
   hand-off made, and redirects to ``redirect_uri?code=<code>&state=<s>``.
4. The app checks ``state`` is its own, then posts ``code`` and ``code_verifier`` to
   ``auth/provider/token`` with its ``X-Session-Token``: the verifier must match the
   challenge, the code is spent, and the app session is signed in, its proof of recent
   authentication dated from the provider sign-in. A caught code is useless without the
   verifier, which never left the app.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest
from django.utils.crypto import constant_time_compare
from django.utils.translation import gettext_lazy as _

from ..auth.sso import APP_HANDOFF_SESSION_KEY, SSO_SIGN_IN_SESSION_KEY
from ..conf import app_settings
from ..exceptions import BadRequestException, UnauthorizedException
from ..stores import shared_store

__all__ = [
    "CODE_TTL",
    "HANDOFF_SESSION_KEY",
    "challenge_of",
    "check_redirect_uri",
    "finish_url",
    "mint_code",
    "pending_handoff",
    "redeem_code",
    "remember",
]

HANDOFF_SESSION_KEY = APP_HANDOFF_SESSION_KEY
CODE_TTL = 60
_PREFIX = "af-handoff:"


def challenge_of(verifier: str) -> str:
    """RFC 7636 S256: BASE64URL(SHA-256(verifier)) without padding."""
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def check_redirect_uri(uri: Any) -> str:
    """``uri`` when it is listed in ``AUTH["APP_REDIRECT_URIS"]``; 400 otherwise (a
    code must reach only the app)."""
    allowed = list(app_settings.AUTH.APP_REDIRECT_URIS or ())
    if not isinstance(uri, str) or uri not in allowed:
        raise BadRequestException(
            _("This redirect_uri is not one of the site's apps."), code="invalid_redirect_uri"
        )
    return uri


def _check_challenge(challenge: Any) -> str:
    if (
        not isinstance(challenge, str)
        or not 43 <= len(challenge) <= 128
        or not all(c.isascii() and (c.isalnum() or c in "-_") for c in challenge)
    ):
        raise BadRequestException(
            _("code_challenge must be an S256 PKCE challenge."), code="invalid_code_challenge"
        )
    return challenge


def _check_state(state: Any) -> str:
    if (
        not isinstance(state, str)
        or not 8 <= len(state) <= 512
        or not all(c.isascii() and c.isprintable() and c != " " for c in state)
    ):
        raise BadRequestException(
            _("state must be the app's own random value (8 to 512 characters)."),
            code="invalid_state",
        )
    return state


def remember(
    request: HttpRequest, challenge: Any, redirect_uri: Any, state: Any, *, signed_in: bool
) -> None:
    """Step 1, in the browser's session: what the app asked for, and when. ``signed_in``:
    whether this browser already had a session (kept after the hand-off)."""
    request.session[HANDOFF_SESSION_KEY] = {
        "challenge": _check_challenge(challenge),
        "redirect_uri": check_redirect_uri(redirect_uri),
        "state": _check_state(state),
        "started": time.time(),
        "signed_in": signed_in,
    }


def pending_handoff(request: HttpRequest, user: Any) -> dict[str, Any]:
    """The hand-off this browser started, once ``user`` was signed in by an identity
    provider after it started; ``BadRequestException`` (``handoff_missing``) when no app
    asked here, ``UnauthorizedException`` (``handoff_not_signed_in``) when no provider
    sign-in happened in it — the session the browser had before never counts."""
    pending = request.session.get(HANDOFF_SESSION_KEY)
    if not isinstance(pending, dict):
        raise BadRequestException(_("No app sign-in was started here."), code="handoff_missing")
    vouched = request.session.get(SSO_SIGN_IN_SESSION_KEY)
    if (
        user is None
        or not isinstance(vouched, dict)
        or vouched.get("uid") != str(user.pk)
        or not float(vouched.get("at", 0)) >= float(pending.get("started", 0))
    ):
        raise UnauthorizedException(
            _("Sign in at the provider to continue to the app."), code="handoff_not_signed_in"
        )
    return {**pending, "vouched_at": float(vouched["at"])}


def mint_code(request: HttpRequest, user: Any) -> tuple[str, str, dict[str, Any]]:
    """Step 3: a one-use code for ``user``, the challenge and the provider sign-in of
    this browser's hand-off (:func:`pending_handoff` refuses otherwise); returns the
    code, the app's redirect URI and the hand-off."""
    pending = pending_handoff(request, user)
    request.session.pop(HANDOFF_SESSION_KEY, None)
    code = secrets.token_urlsafe(32)
    record = {"user": str(user.pk), "challenge": pending["challenge"], "at": pending["vouched_at"]}
    shared_store(app_settings.AUTH.REVOCATION_CACHE).set(_PREFIX + _digest(code), record, CODE_TTL)
    return code, str(pending["redirect_uri"]), pending


def finish_url(redirect_uri: str, code: str, state: str) -> str:
    separator = "&" if "?" in redirect_uri else "?"
    return f"{redirect_uri}{separator}{urlencode({'code': code, 'state': state})}"


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def redeem_code(code: Any, verifier: Any) -> tuple[Any, float]:
    """Step 4: the user of ``code`` and when the provider vouched for them, when
    ``verifier`` matches its challenge; the code is spent either way.
    ``BadRequestException`` (``invalid_grant``) otherwise."""
    from ..auth.verification import user_by_pk

    refused = BadRequestException(
        _("The code is unknown, spent or expired, or the verifier does not match."),
        code="invalid_grant",
    )
    if not isinstance(code, str) or not isinstance(verifier, str) or not code or not verifier:
        raise refused
    store = shared_store(app_settings.AUTH.REVOCATION_CACHE)
    key = _PREFIX + _digest(code)
    record = store.get(key)
    # One use, also for a wrong verifier: a guesser gets one try per code.
    if record is None or not store.delete(key):
        raise refused
    if not constant_time_compare(challenge_of(verifier), str(record.get("challenge", ""))):
        raise refused
    user = user_by_pk(record.get("user"))
    if user is None or not user.is_active or not isinstance(record.get("at"), int | float):
        raise refused
    return user, float(record["at"])
