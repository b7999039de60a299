"""``Authenticatable``: password helpers over the project's own password column."""

from __future__ import annotations

from typing import Any

from django.utils.crypto import salted_hmac

from ..conf import AUTO, app_settings, derived_setting
from .passwords import (
    hash_password,
    needs_rehash,
    password_is_usable,
    verify_installed_password,
)

__all__ = [
    "UNUSABLE_PASSWORD",
    "Authenticatable",
    "password_field_of",
    "username_field_of",
]

#: Stored for users who cannot log in with a password (SSO-only accounts); no hash
#: verifies against it.
UNUSABLE_PASSWORD = "!"

_SESSION_HASH_SALT = "appframework.auth.session"
# AbstractBaseUser.get_session_auth_hash's salt: a session Django signed in before the
# suite was installed carries that hash.
_DJANGO_SESSION_HASH_SALT = "django.contrib.auth.models.AbstractBaseUser.get_session_auth_hash"


#: The suite's conventional password column; Django's is ``password``.
CONVENTIONAL_PASSWORD_FIELD = "password_hash"


def _has_field(model: type, name: str) -> bool:
    try:
        model._meta.get_field(name)  # type: ignore[attr-defined]
    except Exception:
        return False
    return True


@derived_setting
def password_field_of(model: type) -> str:
    """The column holding ``model``'s password hash: ``AUTH["PASSWORD_FIELD"]``, or by
    default ``password_hash`` when the model has it and Django's ``password`` otherwise
    (an ``AbstractUser`` works as it is)."""
    configured = app_settings.AUTH.PASSWORD_FIELD
    if configured is not AUTO:
        return str(configured)
    return (
        CONVENTIONAL_PASSWORD_FIELD
        if _has_field(model, CONVENTIONAL_PASSWORD_FIELD)
        else "password"
    )


@derived_setting
def username_field_of(model: type) -> str:
    """The column a login names: ``AUTH["USERNAME_FIELD"]``, or by default the model's
    own ``USERNAME_FIELD`` (Django's convention)."""
    configured = app_settings.AUTH.USERNAME_FIELD
    if configured is not AUTO:
        return str(configured)
    return str(getattr(model, "USERNAME_FIELD", "username"))


@derived_setting
def _version_field(model: type) -> str | None:
    """The model's session-version column name, if it has one (cached per model)."""
    name = app_settings.AUTH.SESSION_VERSION_FIELD
    if not name:
        return None
    try:
        model._meta.get_field(name)  # type: ignore[attr-defined]
    except Exception:
        return None
    return str(name)


class Authenticatable:
    """Mix into the user model, before Django's ``AbstractBaseUser`` when you use it.

    The password hash lives in ``APPFRAMEWORK["AUTH"]["PASSWORD_FIELD"]``: by default the
    model's ``password_hash`` column if it declares one (``CharField(max_length=255)``),
    else Django's own ``password`` (``AbstractUser`` as it is). Optionally, the
    integer column named by ``SESSION_VERSION_FIELD`` (``session_version``): with it,
    :meth:`invalidate_sessions` logs the user out everywhere.
    """

    # Django's AbstractBaseUser keeps the raw password here until save() so the
    # password-validation signal can see it; keep the same contract.
    _password: str | None = None

    # -- column access -----------------------------------------------------------------
    @classmethod
    def password_field_name(cls) -> str:
        return password_field_of(cls)

    @classmethod
    def session_version_field_name(cls) -> str | None:
        return _version_field(cls)

    def get_username(self) -> Any:
        """The login name (the ``USERNAME_FIELD`` column), as Django's
        ``AbstractBaseUser`` gives it: a model that is a plain ``models.Model`` with the
        suite's mixins has it too, and the flows, mails and signals that name the user
        work for it."""
        return getattr(self, username_field_of(type(self)))

    @classmethod
    def get_email_field_name(cls) -> str:
        """``EMAIL_FIELD``, else ``"email"``, as Django's ``AbstractBaseUser`` says."""
        return str(getattr(cls, "EMAIL_FIELD", "email"))

    def get_password_hash(self) -> str:
        return getattr(self, self.password_field_name(), "") or ""

    # -- the helpers -----------------------------------------------------------------
    def set_password(self, raw_password: str | None) -> None:
        """Hash and store ``raw_password`` (None makes the password unusable)."""
        if raw_password is None:
            self.set_unusable_password()
            return
        setattr(self, self.password_field_name(), hash_password(raw_password))
        self._password = raw_password
        # A new password ends every other session and token (saved with the user).
        version = self.session_version_field_name()
        if version is not None:
            setattr(self, version, self.get_session_version() + 1)

    def check_password(self, raw_password: str) -> bool:
        """Verify, and re-hash in place (saved) when the stored hash is weaker than now.

        Accepts the suite's PBKDF2 hashes and those of every hasher in Django's
        ``PASSWORD_HASHERS`` (scrypt, argon2, bcrypt, PBKDF2-SHA1 ... written before the
        suite was adopted); such a hash is replaced by the suite's on success, as
        Django's ``check_password`` upgrades one."""
        encoded = self.get_password_hash()
        if not verify_installed_password(raw_password, encoded):
            return False
        if needs_rehash(encoded) and getattr(self, "pk", None) is not None:
            setattr(self, self.password_field_name(), hash_password(raw_password))
            self.save(update_fields=[self.password_field_name()])  # type: ignore[attr-defined]
        return True

    async def acheck_password(self, raw_password: str) -> bool:
        from asgiref.sync import sync_to_async

        return await sync_to_async(self.check_password)(raw_password)

    def set_unusable_password(self) -> None:
        setattr(self, self.password_field_name(), UNUSABLE_PASSWORD)

    def has_usable_password(self) -> bool:
        """Whether a password can sign in: a hash of the suite's or of a hasher in
        ``PASSWORD_HASHERS`` (Django's password reset mails only such users)."""
        return password_is_usable(self.get_password_hash())

    # -- session binding -----------------------------------------------------------------
    def get_session_version(self) -> int:
        name = self.session_version_field_name()
        return int(getattr(self, name) or 0) if name else 0

    def _session_auth_hash(self, secret: str | None = None) -> str:
        # Django stores this in the signed session cookie and compares it on every
        # request. With the version column, the version alone decides: set_password and
        # "log out everywhere" bump it, while a re-hash at login (more iterations) keeps
        # sessions and tokens alive. Without it, the password hash does the job.
        if self.session_version_field_name() is not None:
            value = f"v:{self.pk}:{self.get_session_version()}"  # type: ignore[attr-defined]
        else:
            value = f"p:{self.get_password_hash()}"
        return salted_hmac(_SESSION_HASH_SALT, value, secret=secret, algorithm="sha256").hexdigest()

    def get_session_auth_hash(self) -> str:
        return self._session_auth_hash()

    def get_session_auth_fallback_hash(self) -> Any:
        """The hashes an older session may carry: the suite's under each of
        ``SECRET_KEY_FALLBACKS``, and Django's own (``AbstractBaseUser``'s, over the
        same password hash) under the current key and each fallback, so a session
        signed in before the suite was adopted stays signed in; Django's ``get_user``
        then stores the suite's hash in it. Django's stops counting once the user's
        session version has moved ("log out everywhere" or a new password), and a new
        password changes it anyway."""
        from django.conf import settings

        fallbacks = list(getattr(settings, "SECRET_KEY_FALLBACKS", ()))
        for fallback in fallbacks:
            yield self._session_auth_hash(secret=fallback)
        if self.get_session_version() != 0:
            return
        encoded = self.get_password_hash()
        for secret in [None, *fallbacks]:
            yield salted_hmac(
                _DJANGO_SESSION_HASH_SALT, encoded, secret=secret, algorithm="sha256"
            ).hexdigest()

    def invalidate_sessions(self) -> None:
        """Log this user out everywhere: every earlier session cookie and API token stops
        working. Needs the session-version column."""
        name = self.session_version_field_name()
        if name is None:
            raise TypeError(
                f"{type(self).__name__} has no {app_settings.AUTH.SESSION_VERSION_FIELD!r} "
                "column; add a PositiveIntegerField to invalidate sessions."
            )
        from django.db.models import F

        # An UPDATE with F() so two concurrent "log out everywhere" never lose a bump.
        model = type(self)
        model._default_manager.filter(pk=self.pk).update(**{name: F(name) + 1})  # type: ignore[attr-defined]
        self.refresh_from_db(fields=[name])  # type: ignore[attr-defined]

    async def ainvalidate_sessions(self) -> None:
        from asgiref.sync import sync_to_async

        await sync_to_async(self.invalidate_sessions)()
