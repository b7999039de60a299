"""Email addresses: confirming them (a signed link, or a code typed in the same browser)
and changing them.

``AUTH["EMAIL_VERIFICATION"]`` says what an unconfirmed address means: ``"mandatory"``
(no sign-in until it is confirmed), ``"optional"`` (a confirmation is sent, nothing
waits for it) or ``"none"``. ``AUTH["EMAIL_VERIFICATION_BY_CODE"]`` sends a code
instead of a link. A link is signed, expires after ``AUTH["EMAIL_VERIFICATION_LINK_TTL"]``
seconds and confirms once; a code lasts ``AUTH["EMAIL_CODE_TTL"]`` seconds, in the
browser that asked, for three tries.

A user without any :class:`~appframework.auth.models.EmailAddress` row (made before the
suite, with ``createsuperuser`` or in the admin) counts as confirmed.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.contrib.auth import get_user_model
from django.core import signing
from django.db import connections, router, transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from .. import events
from ..conf import app_settings
from ..exceptions import ValidationException
from ..raw_sql import quoted_names
from ..stores import shared_store
from .account_marker import account_marker, marks_account
from .mail_codes import check_code, issue_code
from .mail_limit import limit_mail
from .notifications import send_security_mail

__all__ = [
    "CONFIRM_CODE_SESSION_KEY",
    "LINK_SALT",
    "confirm_address",
    "confirm_code",
    "confirmation_key",
    "email_owner",
    "email_taken",
    "email_verified",
    "issue_decoy_confirmation",
    "key_address",
    "normalize_email",
    "notify_owner",
    "record_address",
    "request_email_change",
    "send_confirmation",
    "user_by_pk",
    "user_email",
    "verification_mode",
]

LINK_SALT = "appframework.auth.confirm-email"
CONFIRM_CODE_SESSION_KEY = "_appframework_email_code"
# Accounts claiming one address (squatters' unconfirmed ones included) looked through
# for a code's account: a handful in practice, bounded so a flood of them costs little.
_MAX_CLAIMANTS = 50


def verification_mode() -> str:
    """``"mandatory"``, ``"optional"`` or ``"none"``."""
    return str(app_settings.AUTH.EMAIL_VERIFICATION)


def normalize_email(email: str) -> str:
    return email.strip().lower()


def user_email(user: Any) -> str:
    """The address in the user model's email field ("" when none)."""
    value = getattr(user, user.get_email_field_name(), "") or ""
    return str(value)


def user_by_pk(value: Any) -> Any | None:
    """The user whose primary key ``value`` (as a string) is; None for "" or a value of
    the wrong type."""
    from django.core.exceptions import ValidationError

    if not isinstance(value, str) or not value:
        return None
    try:
        return get_user_model()._default_manager.filter(pk=value).first()
    except (ValueError, TypeError, ValidationError):
        return None


def _addresses() -> Any:
    from .models import EmailAddress

    return EmailAddress.objects


def _address_rows(user: Any) -> list[tuple[str, Any]]:
    """(email, verified) of each of the user's addresses, in one query."""
    # Every answer of the JSON API asks this: a hand-written statement costs a tenth of
    # building the same SELECT through the ORM each time.
    model = _addresses().model
    wrapper = connections[router.db_for_read(model)]
    names = quoted_names(model, wrapper, ("email", "verified", "user"))
    pk = model._meta.get_field("user").get_db_prep_value(user.pk, wrapper)
    with wrapper.cursor() as cursor:
        cursor.execute(
            "SELECT {email}, {verified} FROM {t} WHERE {user} = %s".format(**names), [pk]
        )
        return list(cursor.fetchall())


def email_verified(user: Any) -> bool:
    """Whether the user's current address is confirmed (no rows at all: yes)."""
    rows = _address_rows(user)
    if not rows:
        return True
    email = normalize_email(user_email(user))
    return any(verified and address == email for address, verified in rows)


def email_owner(email: str, *, exclude: Any = None) -> Any | None:
    """The account that uses ``email`` (as its address, or confirmed as one), other than
    ``exclude``; None when there is none."""
    model = get_user_model()
    lookup = {f"{model.get_email_field_name()}__iexact": email.strip()}
    users = model._default_manager.filter(**lookup)
    rows = _addresses().filter(email=normalize_email(email), verified=True)
    if exclude is not None:
        users = users.exclude(pk=exclude.pk)
        rows = rows.exclude(user=exclude)
    owner = users.first()
    if owner is None:
        row = rows.select_related("user").first()
        owner = row.user if row is not None else None
    return owner


def email_taken(email: str, *, exclude: Any = None) -> bool:
    """Whether another account uses ``email``."""
    return email_owner(email, exclude=exclude) is not None


def record_address(user: Any, email: str, *, verified: bool, primary: bool) -> Any:
    """The user's row for ``email``, made or updated."""
    row, _created = _addresses().update_or_create(
        user=user,
        email=normalize_email(email),
        defaults={"verified": verified, "primary": primary},
    )
    return row


# -- sending -------------------------------------------------------------------------
def confirmation_key(user: Any, email: str) -> str:
    """The signed key of a confirmation link for ``user`` and ``email``."""
    return signing.dumps({"u": str(user.pk), "e": normalize_email(email)}, salt=LINK_SALT)


def issue_decoy_confirmation(request: HttpRequest, email: str) -> None:
    """For an address another account owns: with codes, a pending code in this session
    of the same shape as a real one, that confirms nothing (a link needs no trace)."""
    if app_settings.AUTH.EMAIL_VERIFICATION_BY_CODE:
        ttl = int(app_settings.AUTH.EMAIL_CODE_TTL)
        issue_code(request, CONFIRM_CODE_SESSION_KEY, ttl, user=account_marker(None), email=email)


def send_confirmation(request: HttpRequest, user: Any, email: str, *, counted: bool = False) -> str:
    """Mail ``email`` a link or a code (``EMAIL_VERIFICATION_BY_CODE``) that confirms it
    for ``user``; counted against the mail limits unless the caller did (``counted``).
    Returns ``"code"`` or ``"link"``."""
    from .adapter import get_adapter

    if not counted:
        limit_mail(request, email)
    adapter = get_adapter(request)
    context: dict[str, Any] = {"user": user, "email": email}
    if app_settings.AUTH.EMAIL_VERIFICATION_BY_CODE:
        ttl = int(app_settings.AUTH.EMAIL_CODE_TTL)
        context["code"] = issue_code(
            request, CONFIRM_CODE_SESSION_KEY, ttl, user=account_marker(user), email=email
        )
        context["minutes"] = max(1, ttl // 60)
        adapter.send_mail("appframework/email/confirm_email_code", email, context)
        return "code"
    key = confirmation_key(user, email)
    path = reverse("appframework:confirm-email", args=[key])
    # The key too: a single-page app's own link (docs/headless.md) is built from it.
    context.update(key=key, url=request.build_absolute_uri(path))
    context["days"] = max(1, int(app_settings.AUTH.EMAIL_VERIFICATION_LINK_TTL) // 86400)
    adapter.send_mail("appframework/email/confirm_email", email, context)
    return "link"


# -- confirming ----------------------------------------------------------------------
def _invalid() -> ValidationException:
    return ValidationException(
        _("This confirmation link is not valid or has expired. Ask for a new one."),
        code="confirmation_invalid",
    )


def key_address(key: str) -> tuple[Any, str]:
    """The user and the address a link key confirms; ``ValidationException``
    (``confirmation_invalid``) when it is forged, expired, spent or its user is gone."""
    try:
        data = signing.loads(
            key, salt=LINK_SALT, max_age=int(app_settings.AUTH.EMAIL_VERIFICATION_LINK_TTL)
        )
    except signing.BadSignature:
        raise _invalid() from None
    if not isinstance(data, dict):
        raise _invalid()
    user = user_by_pk(data.get("u"))
    email = data.get("e")
    if user is None or not isinstance(email, str) or not user.is_active:
        raise _invalid()
    row = _addresses().filter(user=user, email=email).first()
    if row is None or _spent(key, peek=True):
        raise _invalid()
    return user, email


def _spent(key: str, *, peek: bool = False) -> bool:
    store = shared_store(app_settings.AUTH.REVOCATION_CACHE)
    name = "af-link-spent:" + hashlib.sha256(key.encode()).hexdigest()
    if peek:
        return store.get(name) is not None
    return not store.add(name, 1, int(app_settings.AUTH.EMAIL_VERIFICATION_LINK_TTL) + 60)


def confirm_code(request: HttpRequest, code: str) -> tuple[Any, str]:
    """The user and address this session's confirmation code is for, when ``code`` is
    it; ``ValidationException`` (``confirmation_code_invalid``) otherwise."""
    record = check_code(request, CONFIRM_CODE_SESSION_KEY, code)
    user = None if record is None else _marked_claimant(record.get("user"), record.get("email"))
    if record is None or user is None:
        raise ValidationException(
            _("That code is not valid or has expired."), code="confirmation_code_invalid"
        )
    return user, str(record["email"])


def _marked_claimant(marker: object, email: object) -> Any | None:
    """The account a confirmation code's record marks: one of those that claim
    ``email`` (as their address, or as a pending one). The record never names the
    account, so a decoy code (a taken address) looks like a real one."""
    if not isinstance(email, str) or not email:
        return None
    model = get_user_model()
    claimed = _addresses().filter(email=normalize_email(email)).values("user_id")
    by_field = {f"{model.get_email_field_name()}__iexact": email}
    candidates = model._default_manager.filter(pk__in=claimed) | model._default_manager.filter(
        **by_field
    )
    for candidate in candidates.distinct()[:_MAX_CLAIMANTS]:
        if marks_account(marker, candidate):
            return candidate
    return None


def confirm_address(
    request: HttpRequest | None, user: Any, email: str, *, key: str | None = None
) -> Any:
    """Mark ``email`` confirmed for ``user``. A new address (an email change) becomes the
    account's address: the old one is told, ``email_changed`` is sent. ``key``: the link
    that proved it, spent here."""
    if key is not None and _spent(key):
        raise _invalid()
    email = normalize_email(email)
    old = user_email(user)
    changing = email != normalize_email(old)
    if changing and email_taken(email, exclude=user):
        raise ValidationException(
            _("This address is already used by another account."), code="email_taken"
        )
    with transaction.atomic():
        row = record_address(user, email, verified=True, primary=True)
        if changing:
            model = user._meta.model
            email_field = model.get_email_field_name()
            setattr(user, email_field, email)
            if email_field == model.USERNAME_FIELD:
                setattr(user, model.USERNAME_FIELD, email)
            user.save()
            _addresses().filter(user=user).exclude(pk=row.pk).delete()
    sender = user._meta.model
    events.email_confirmed.send(sender=sender, user=user, request=request, email=email)
    if changing:
        events.email_changed.send(
            sender=sender, user=user, request=request, old_email=old, new_email=email
        )
        # To the old address, always: whoever changed it cannot silence the warning.
        send_security_mail(
            "email_changed", user, request, old or None, old_email=old, new_email=email
        )
    return row


def notify_owner(request: HttpRequest, owner: Any) -> None:
    """Tell the owner of an address that someone tried to use it for another account."""
    from .adapter import get_adapter

    address = user_email(owner)
    get_adapter(request).send_mail(
        "appframework/email/account_already_exists", address, {"email": address}
    )


def request_email_change(request: HttpRequest, user: Any, new_email: str) -> None:
    """Ask to move ``user`` to ``new_email``: the new address is mailed a confirmation
    and nothing changes until it is confirmed. An address another account uses gets a
    note instead, so the answer never tells whether it has an account."""

    email = normalize_email(new_email)
    if email == normalize_email(user_email(user)):
        raise ValidationException(_("That is your address already."), code="email_unchanged")
    limit_mail(request, email)
    owner = email_owner(email, exclude=user)
    # Both ways leave the same trace: a pending address (shown on the account's page; a
    # taken one can never be confirmed) and, with codes, a code in this session.
    with transaction.atomic():
        _addresses().filter(user=user, primary=False, verified=False).delete()
        record_address(user, email, verified=False, primary=False)
    if owner is not None:
        notify_owner(request, owner)
        issue_decoy_confirmation(request, email)
        return
    send_confirmation(request, user, email, counted=True)
