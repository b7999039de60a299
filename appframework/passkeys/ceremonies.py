"""The WebAuthn ceremonies, on Duo's ``webauthn`` (py_webauthn).

Each ceremony is two requests: the options (a fresh challenge, kept pending in the
session that asked, for ``PASSKEYS["CHALLENGE_TIMEOUT"]`` seconds) and the
authenticator's answer, which names its challenge in ``clientDataJSON``. The challenge
is spent once through the suite's one-use store (``appframework.one_use``, which OAuth
states share): a challenge of another session is unknown here, a spent one is
recorded in ``PASSKEYS["CHALLENGE_CACHE"]``, and a challenge issued for one ceremony
(``register``, ``login``, ``challenge``, ``confirm``) serves no other.

Every refusal is a :class:`PasskeyRefused` (403) with a stable code (docs/passkeys.md),
or ``passkey_malformed`` (400) for an answer that is not a credential at all.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, router, transaction
from django.http import HttpRequest
from django.http.request import split_domain_port
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.authentication.verify_authentication_response import VerifiedAuthentication
from webauthn.helpers import (
    parse_authentication_credential_json,
    parse_registration_credential_json,
)
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticationCredential,
    AuthenticatorSelectionCriteria,
    AuthenticatorTransport,
    PublicKeyCredentialDescriptor,
    RegistrationCredential,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from .. import bounded_json
from ..auth.factors import forget_passkeys
from ..conf import app_settings
from ..exceptions import BadRequestException, ForbiddenException, ValidationException
from ..one_use import OneUseStore, Refused

__all__ = [
    "CHALLENGE",
    "CONFIRM",
    "KINDS",
    "LOGIN",
    "REAUTHENTICATE",
    "REGISTER",
    "SESSION_KEY",
    "Assertion",
    "PasskeyRefused",
    "RelyingParty",
    "authenticate",
    "authentication_options",
    "read_assertion",
    "register",
    "registration_options",
    "relying_party",
    "verify_assertion",
]

SESSION_KEY = "_appframework_passkeys"
REGISTER = "register"
LOGIN = "login"
CHALLENGE = "challenge"
CONFIRM = "confirm"
#: Proving the signed-in user again before an account change: user verification required.
REAUTHENTICATE = "reauthenticate"
KINDS = frozenset({REGISTER, LOGIN, CHALLENGE, CONFIRM, REAUTHENTICATE})
#: Ceremonies whose answer must carry user verification whatever the setting says.
_UV_REQUIRED = frozenset({LOGIN, REAUTHENTICATE})
CHALLENGE_BYTES = 32
NAME_MAX_LENGTH = 100

_STORE = OneUseStore(
    SESSION_KEY,
    "appframework:passkey-challenge:",
    ttl=lambda: int(app_settings.PASSKEYS.CHALLENGE_TIMEOUT),
    cache_alias=lambda: app_settings.PASSKEYS.CHALLENGE_CACHE,
    missing_session="Passkeys need SessionMiddleware (appframework_passkeys.E001).",
)


class PasskeyRefused(ForbiddenException):
    """An answer of an authenticator refused; ``code`` says why (docs/passkeys.md)."""

    title = _("Passkey refused")
    default_detail = _("The passkey could not be verified.")
    default_code = "passkey_invalid"


def _refused(code: str) -> PasskeyRefused:
    return PasskeyRefused(_MESSAGES.get(code), code=code)


_MESSAGES: dict[str, Any] = {
    "passkey_challenge": _("This passkey request was not started here or has expired; try again."),
    "passkey_replayed": _("This passkey answer was used already; try again."),
    "passkey_unknown": _("This passkey is not registered for this account."),
    "passkey_origin": _("This passkey answer comes from another site."),
    "passkey_rp_id": _("This passkey belongs to another site."),
    "passkey_user_verification": _("The authenticator did not verify you (PIN or biometrics)."),
    "passkey_sign_count": _(
        "This authenticator's counter went backwards: it may be a copy; the passkey is refused."
    ),
}


# -- the relying party -------------------------------------------------------------------
@dataclass(frozen=True)
class RelyingParty:
    """Who the credentials belong to: ``id`` (a domain), ``name`` (shown by
    authenticators), ``origins`` (where ceremonies may run)."""

    id: str
    name: str
    origins: tuple[str, ...]


def relying_party(request: HttpRequest) -> RelyingParty:
    """``PASSKEYS["RP_ID"]``, ``RP_NAME`` and ``ORIGINS``, or the request's own host and
    origin where they are unset (``get_host`` has checked ``ALLOWED_HOSTS``)."""
    section = app_settings.PASSKEYS
    host = request.get_host()
    rp_id = str(section.RP_ID or split_domain_port(host)[0] or host).lower()
    origins = tuple(section.ORIGINS or ()) or (f"{request.scheme}://{host}",)
    return RelyingParty(rp_id, str(section.RP_NAME or rp_id), origins)


# -- encoding --------------------------------------------------------------------------
def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _malformed() -> BadRequestException:
    return BadRequestException(
        _("The passkey answer is not a WebAuthn credential."), code="passkey_malformed"
    )


def _as_json(data: Any) -> dict[str, Any]:
    """The credential as a dict, parsed here with the nesting bound (400
    ``json_too_deep``) rather than by the library, which would recurse without one."""
    if isinstance(data, Mapping):
        data = dict(data)
        if bounded_json.nesting_exceeds(data):
            raise bounded_json.JsonNestingError()
    elif isinstance(data, str | bytes) and data:
        try:
            data = bounded_json.loads(data)  # the nesting checked as it parses
        except ValueError:
            raise _malformed() from None
    if not isinstance(data, dict):
        raise _malformed()
    return data


def _client_data(raw: bytes) -> dict[str, Any]:
    try:
        # UTF-8, as WebAuthn defines clientDataJSON: no guessing of the encoding.
        client_data = bounded_json.loads(raw.decode("utf-8"))
    except ValueError:
        raise _malformed() from None
    if not isinstance(client_data, dict) or not isinstance(client_data.get("challenge"), str):
        raise _malformed()
    return client_data


def _check_client_data(client_data: dict[str, Any], rp: RelyingParty, kind: str) -> None:
    if client_data.get("type") != kind:
        raise _malformed()
    if client_data.get("origin") not in rp.origins:
        raise _refused("passkey_origin")


@functools.lru_cache(maxsize=64)
def _rp_id_hash(rp_id: str) -> bytes:
    return hashlib.sha256(rp_id.encode("utf-8")).digest()


def _check_authenticator_data(data: bytes, rp: RelyingParty, *, require_uv: bool) -> None:
    # authenticatorData starts with the SHA-256 of the RP id, then the flags byte.
    if len(data) < 37:
        raise _malformed()
    if data[:32] != _rp_id_hash(rp.id):
        raise _refused("passkey_rp_id")
    if require_uv and not data[32] & 0x04:
        raise _refused("passkey_user_verification")


def _uv_setting() -> UserVerificationRequirement:
    return UserVerificationRequirement(str(app_settings.PASSKEYS.USER_VERIFICATION))


def _timeout_ms() -> int:
    return int(app_settings.PASSKEYS.CHALLENGE_TIMEOUT) * 1000


def _new_challenge(request: HttpRequest, kind: str, user: Any, **extra: Any) -> bytes:
    challenge = secrets.token_bytes(CHALLENGE_BYTES)
    entry = {"k": kind, "u": None if user is None else str(user.pk), **extra}
    _STORE.remember(request, b64url(challenge), entry)
    return challenge


def _spend_challenge(
    request: HttpRequest, challenge: str, kind: str, user: Any
) -> tuple[bytes, dict[str, Any]]:
    """The challenge's bytes and its entry; refused unless this session has it pending
    for this ``kind`` of ceremony and this user (None: nobody signed in yet)."""
    uid = None if user is None else str(user.pk)
    try:
        entry = _STORE.consume(
            request, challenge, lambda e: e.get("k") == kind and e.get("u") == uid
        )
    except Refused as refused:
        raise _refused(
            "passkey_replayed" if refused.reason == "replayed" else "passkey_challenge"
        ) from None
    try:
        return _unb64url(challenge), entry
    except (binascii.Error, ValueError):
        raise _malformed() from None


def _descriptors(user: Any) -> list[PublicKeyCredentialDescriptor]:
    from .models import Passkey

    rows = Passkey.objects.filter(user_id=user.pk).values_list("credential_id", "transports")
    descriptors = []
    for credential_id, transports in rows:
        known = [AuthenticatorTransport(t) for t in transports or () if t in _TRANSPORTS]
        descriptors.append(
            PublicKeyCredentialDescriptor(id=_unb64url(credential_id), transports=known or None)
        )
    return descriptors


_TRANSPORTS = frozenset(t.value for t in AuthenticatorTransport)


def _user_handle(user: Any) -> str:
    """The handle authenticators keep for the account: the one its passkeys already
    carry, else a new random one (never the primary key or the email)."""
    from .models import Passkey

    existing = (
        Passkey.objects.filter(user_id=user.pk)
        .exclude(user_handle="")
        .values_list("user_handle", flat=True)
        .first()
    )
    return existing or b64url(secrets.token_bytes(32))


# -- registration ------------------------------------------------------------------------
def registration_options(request: HttpRequest, user: Any) -> dict[str, Any]:
    """``publicKey`` options for ``navigator.credentials.create()`` for ``user``: a
    discoverable credential (usable without typing a name), excluding the
    authenticators the user registered already."""
    rp = relying_party(request)
    name = str(user.get_username())
    # Kept with the challenge: the credential made now is stored with this handle.
    handle = _user_handle(user)
    options = generate_registration_options(
        rp_id=rp.id,
        rp_name=rp.name,
        user_name=name,
        user_id=_unb64url(handle),
        user_display_name=name,
        challenge=_new_challenge(request, REGISTER, user, h=handle),
        timeout=_timeout_ms(),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            require_resident_key=True,
            user_verification=_uv_setting(),
        ),
        exclude_credentials=_descriptors(user),
    )
    result: dict[str, Any] = json.loads(options_to_json(options))
    return result


def register(request: HttpRequest, user: Any, data: Any, name: str = "") -> Any:
    """Verify the answer of ``navigator.credentials.create()`` and store the passkey
    (``name``, or "Passkey N"); ``passkey_added`` is sent once it is committed."""
    from ..events import passkey_added
    from .models import Passkey

    try:
        credential: RegistrationCredential = parse_registration_credential_json(_as_json(data))
    except WebAuthnException:
        raise _malformed() from None
    client_data = _client_data(credential.response.client_data_json)
    rp = relying_party(request)
    challenge, entry = _spend_challenge(request, client_data["challenge"], REGISTER, user)
    _check_client_data(client_data, rp, "webauthn.create")
    try:
        verified = verify_registration_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp.id,
            expected_origin=list(rp.origins),
            require_user_verification=_uv_setting() == UserVerificationRequirement.REQUIRED,
        )
    except WebAuthnException:
        raise _refused("passkey_invalid") from None
    count = Passkey.objects.filter(user_id=user.pk).count()
    passkey = Passkey(
        user_id=user.pk,
        name=(name or "").strip()[:NAME_MAX_LENGTH] or f"Passkey {count + 1}",
        credential_id=b64url(verified.credential_id),
        public_key=verified.credential_public_key,
        sign_count=verified.sign_count,
        transports=[t.value for t in credential.response.transports or ()],
        aaguid=verified.aaguid,
        backed_up=verified.credential_backed_up,
        user_handle=str(entry.get("h") or ""),
    )
    try:
        with transaction.atomic(using=router.db_for_write(Passkey)):
            passkey.save()
    except IntegrityError:
        raise ValidationException(
            _("This passkey is registered already."), code="passkey_exists"
        ) from None
    forget_passkeys(user)
    transaction.on_commit(
        lambda: passkey_added.send(sender=Passkey, user=user, passkey=passkey, request=request),
        using=router.db_for_write(Passkey),
    )
    return passkey


# -- authentication ----------------------------------------------------------------------
@dataclass(frozen=True)
class Assertion:
    """An answer of ``navigator.credentials.get()``, parsed once: the library's
    credential and the decoded ``clientDataJSON``."""

    credential: AuthenticationCredential
    client_data: dict[str, Any]


def read_assertion(data: Any) -> Assertion:
    """Parse a credential (its JSON text or dict); ``passkey_malformed`` when it is not one."""
    try:
        credential = parse_authentication_credential_json(_as_json(data))
    except WebAuthnException:
        raise _malformed() from None
    return Assertion(credential, _client_data(credential.response.client_data_json))


def authentication_options(request: HttpRequest, kind: str, user: Any = None) -> dict[str, Any]:
    """``publicKey`` options for ``navigator.credentials.get()``: for ``login`` any
    passkey of this site (discoverable) with user verification required; for
    ``challenge`` and ``confirm`` the passkeys of ``user``."""
    if kind == LOGIN:
        allow: list[PublicKeyCredentialDescriptor] = []
        user = None
    else:
        allow = _descriptors(user)
    uv = UserVerificationRequirement.REQUIRED if kind in _UV_REQUIRED else _uv_setting()
    options = generate_authentication_options(
        rp_id=relying_party(request).id,
        challenge=_new_challenge(request, kind, user),
        timeout=_timeout_ms(),
        allow_credentials=allow,
        user_verification=uv,
    )
    result: dict[str, Any] = json.loads(options_to_json(options))
    return result


def verify_assertion(
    assertion: Assertion,
    *,
    challenge: bytes,
    rp: RelyingParty,
    public_key: bytes,
    sign_count: int,
    require_user_verification: bool,
) -> VerifiedAuthentication:
    """The checks of one answer against one stored credential, with no I/O: origin,
    RP id and user verification (each with its own code), then the library's whole
    verification (signature included), then the counter: an answer that does not move a
    counter in use forward is ``passkey_sign_count``."""
    credential = assertion.credential
    _check_client_data(assertion.client_data, rp, "webauthn.get")
    _check_authenticator_data(
        credential.response.authenticator_data, rp, require_uv=require_user_verification
    )
    try:
        verified = verify_authentication_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp.id,
            expected_origin=list(rp.origins),
            credential_public_key=public_key,
            # 0: the counter is compared below, so that a regression has its own code.
            credential_current_sign_count=0,
            require_user_verification=require_user_verification,
        )
    except WebAuthnException:
        raise _refused("passkey_invalid") from None
    if (verified.new_sign_count or sign_count) and verified.new_sign_count <= sign_count:
        raise _refused("passkey_sign_count")
    return verified


def authenticate(request: HttpRequest, data: Any, kind: str, user: Any = None) -> Any:
    """Verify an answer to a ``kind`` challenge of this session and return the
    ``Passkey`` (its user selected), with its counter and last use recorded. ``user``:
    the account the challenge was for (``challenge``, ``confirm``); a passkey of
    anyone else is ``passkey_unknown``, as is one removed since."""
    from .models import Passkey

    assertion = read_assertion(data)
    # Spent before anything else is looked at: a challenge is never tried twice.
    challenge, _entry = _spend_challenge(request, assertion.client_data["challenge"], kind, user)
    credential = assertion.credential
    db = router.db_for_write(Passkey)
    with transaction.atomic(using=db):
        # Locked: two answers of one authenticator at once cannot both move its counter.
        passkey = (
            Passkey.objects.using(db)
            .select_for_update()
            .select_related("user")
            .filter(credential_id=credential.id)
            .first()
        )
        if passkey is None or (user is not None and passkey.user_id != user.pk):
            raise _refused("passkey_unknown")
        handle = credential.response.user_handle
        if handle is not None and passkey.user_handle and b64url(handle) != passkey.user_handle:
            raise _refused("passkey_unknown")
        verified = verify_assertion(
            assertion,
            challenge=challenge,
            rp=relying_party(request),
            public_key=bytes(passkey.public_key),
            sign_count=passkey.sign_count,
            require_user_verification=kind in _UV_REQUIRED
            or _uv_setting() == UserVerificationRequirement.REQUIRED,
        )
        passkey.sign_count = verified.new_sign_count
        passkey.backed_up = verified.credential_backed_up
        passkey.last_used_at = timezone.now()
        passkey.save(update_fields=["sign_count", "backed_up", "last_used_at"])
    from .. import events

    owner = passkey.user
    transaction.on_commit(
        lambda: events.passkey_used.send(
            sender=Passkey, user=owner, passkey=passkey, request=request, kind=kind
        ),
        using=db,
    )
    return passkey
