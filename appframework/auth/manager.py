"""``AuthManager``: credential checks, and a Django authentication backend."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from ..backends import is_active
from .factors import has_second_factor
from .mixins import password_field_of, username_field_of
from .passwords import burn_hash_time
from .throttle import LoginThrottle

__all__ = ["AuthManager"]


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates, valid in JSON
        return False
    return True


class AuthManager(ModelBackend):
    """``attempt(username, password)`` (async) / ``attempt_sync``.

    Also the project's Django authentication backend: ``authenticate()`` and the admin
    login go through the same rules, and — being a ``ModelBackend`` — Django's model
    permissions (``user.has_perm("app.change_x")``, groups) keep working.
    """

    @property
    def user_model(self) -> Any:
        return get_user_model()

    @property
    def username_field(self) -> str:
        return username_field_of(self.user_model)

    @property
    def password_field(self) -> str:
        return password_field_of(self.user_model)

    throttle = LoginThrottle()

    # -- credential checks -------------------------------------------------------------
    def attempt_sync(
        self, username: str, password: str, *, request: HttpRequest | None = None
    ) -> Any | None:
        """The user whose ``username_field`` is ``username`` and whose password matches,
        if active; otherwise None. Unknown names cost the same hashing time.

        Failed attempts are throttled per (account, client address) and per client
        address (``APPFRAMEWORK["RATE_LIMIT"]``); past the limit this raises
        ``TooManyRequestsException`` (429 with ``Retry-After``). Pass ``request`` so the
        client address is known; without it only the account is counted.
        """
        if not isinstance(username, str) or not isinstance(password, str) or not username:
            return None
        ticket = self.throttle.begin(username, request)
        user = self._check_credentials(username, password)
        if user is not None:
            self.throttle.succeeded(ticket)
        else:
            from .. import events

            events.login_failed.send(
                sender=self.user_model,
                user=None,
                request=request,
                username=username,
                reason="password",
            )
        return user

    def _check_credentials(self, username: str, password: str) -> Any | None:
        if "\x00" in username or not _encodable(username):
            # Not a name any user can have; PostgreSQL would even reject the query.
            burn_hash_time(password)
            return None
        model = self.user_model
        try:
            user = model._default_manager.get(**{self.username_field: username})
        except (model.DoesNotExist, model.MultipleObjectsReturned, ValueError):
            burn_hash_time(password)
            return None
        if not user.has_usable_password():
            # SSO-only accounts: spend the hash time, so they look like any other miss.
            burn_hash_time(password)
            return None
        if not user.check_password(password):
            return None
        return user if self.user_can_authenticate(user) else None

    async def attempt(
        self, username: str, password: str, *, request: HttpRequest | None = None
    ) -> Any | None:
        return await sync_to_async(self.attempt_sync)(username, password, request=request)

    # -- Django backend protocol ---------------------------------------------------------
    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any | None:
        if username is None:
            username = kwargs.get(self.username_field)
        if username is None or password is None:
            return None
        user = self.attempt_sync(username, password, request=request)
        if user is None or has_second_factor(user):
            # The answer on a password is final: Django's authenticate() asks no backend
            # listed after this one (a ModelBackend kept for older sessions would sign a
            # user with TOTP on or a passkey in with the password alone), and every
            # refusal costs the same one hash. A user with a second factor signs in
            # through a view that runs the challenge (login_or_challenge); the admin
            # then uses that session.
            raise PermissionDenied
        return user

    def get_user(self, user_id: Any) -> Any | None:
        model = self.user_model
        try:
            user = model._default_manager.get(pk=user_id)
        except (model.DoesNotExist, ValueError, TypeError):
            return None
        return user if self.user_can_authenticate(user) else None

    def user_can_authenticate(self, user: Any) -> bool:
        return is_active(user)

    async def aget_user(self, user_id: Any) -> Any | None:
        # Native async ORM: no thread hop on every ASGI request that reads request.auser().
        model = self.user_model
        try:
            user = await model._default_manager.aget(pk=user_id)
        except (model.DoesNotExist, ValueError, TypeError):
            return None
        return user if self.user_can_authenticate(user) else None
