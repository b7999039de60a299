"""Single sign-on for apps: the provider sign-in runs in a browser, the app gets a
session — and no token ever rides in a URL.

1. The app makes a PKCE pair (``code_verifier``, ``code_challenge`` = BASE64URL(SHA-256
   (verifier))) and opens, in the system browser or a web view,
   ``app/v1/auth/provider/redirect?kind=oauth&provider=<name>&code_challenge=<c>
   &redirect_uri=<one of AUTH["APP_REDIRECT_URIS"]>``.
2. The browser signs in at the provider as on the site (the second factor included,
   on the suite's own pages), and comes back to ``.../provider/complete``.
3. That page mints a one-use code bound to the user and the challenge (good for
   ``CODE_TTL`` seconds), ends the browser's session, and redirects to
   ``redirect_uri?code=<code>``.
4. The app posts ``code`` and ``code_verifier`` to ``auth/provider/token`` with its
   ``X-Session-Token``: the verifier must match the challenge, the code is spent, and the
   app session is signed in. A stolen code is useless without the verifier, which never
   left the app.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest
from django.utils.crypto import constant_time_compare
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..exceptions import BadRequestException
from ..stores import shared_store

__all__ = [
    "CODE_TTL",
    "HANDOFF_SESSION_KEY",
    "challenge_of",
    "check_redirect_uri",
    "finish_url",
    "mint_code",
    "redeem_code",
    "remember",
]

HANDOFF_SESSION_KEY = "_appframework_app_handoff"
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


def remember(request: HttpRequest, challenge: Any, redirect_uri: Any) -> None:
    """Step 1, in the browser's session: what the app asked for."""
    request.session[HANDOFF_SESSION_KEY] = {
        "challenge": _check_challenge(challenge),
        "redirect_uri": check_redirect_uri(redirect_uri),
    }


def mint_code(request: HttpRequest, user: Any) -> tuple[str, str]:
    """Step 3: a one-use code for ``user`` and the challenge this browser remembered,
    and the app's redirect URI; ``BadRequestException`` when no app asked here."""
    pending = request.session.pop(HANDOFF_SESSION_KEY, None)
    if not isinstance(pending, dict):
        raise BadRequestException(_("No app sign-in was started here."), code="handoff_missing")
    code = secrets.token_urlsafe(32)
    record = {"user": str(user.pk), "challenge": pending["challenge"]}
    shared_store(app_settings.AUTH.REVOCATION_CACHE).set(_PREFIX + _digest(code), record, CODE_TTL)
    return code, str(pending["redirect_uri"])


def finish_url(redirect_uri: str, code: str) -> str:
    separator = "&" if "?" in redirect_uri else "?"
    return f"{redirect_uri}{separator}{urlencode({'code': code})}"


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def redeem_code(code: Any, verifier: Any) -> Any:
    """Step 4: the user of ``code`` when ``verifier`` matches its challenge; the code is
    spent either way. ``BadRequestException`` (``invalid_grant``) otherwise."""
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
    if user is None or not user.is_active:
        raise refused
    return user
