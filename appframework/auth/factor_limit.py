"""The bound on guessing a user's second factor, wherever it is asked for.

The sign-in challenge (TOTP code, recovery code, passkey), the re-authentication page and
the account pages that ask for a current code all count their tries on one streak per
user: the first ``MFA["FREE_TRIES"]`` (5) at once, then each further try waits twice as
long as the one before — a minute, two, four ... at most ``MFA["MAX_WAIT"]`` (4 hours) —
until a try succeeds. Tries refused while waiting are not counted, so the owner can sign
in once an attacker stops. docs/mfa.md has the arithmetic: someone who holds the password
gets about 190 guesses a month, a 0.06 % chance against a six-digit code.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..exceptions import TooManyRequestsException
from ..ratelimit import RateLimiter, RateLimitResult

__all__ = ["FactorTry", "begin_factor_try"]


def _key(user_id: Any) -> str:
    return f"second-factor:{user_id}"


def _limiter() -> RateLimiter | None:
    """The RateLimiter bound in the container (AuthServiceProvider binds one) counting
    with the backoff rule; without one, second factors are not rate-limited."""
    from ..container import container

    if RateLimiter not in container:
        return None
    limiter: RateLimiter = container.resolve(RateLimiter)
    return limiter.using("backoff", max_wait=float(app_settings.MFA.MAX_WAIT))


class FactorTry:
    """One counted try of ``user_id``'s second factor: call :meth:`failed` or
    :meth:`succeeded` once its answer is known."""

    def __init__(
        self,
        user_id: Any,
        limiter: RateLimiter | None = None,
        result: RateLimitResult | None = None,
        free: int = 0,
    ) -> None:
        self.user_id = user_id
        self._limiter = limiter
        self._result = result
        self._free = free

    def succeeded(self) -> None:
        """The streak is over: the next try starts afresh."""
        if self._limiter is not None:
            self._limiter.reset(_key(self.user_id), 1.0)

    def failed(self, request: HttpRequest | None = None, user: Any = None) -> None:
        """A wrong answer. The one that uses up the free tries tells the owner (the
        ``second_factor_guessed`` signal, and mail with security notifications on)."""
        result = self._result
        if result is None or int(result.count) != self._free:
            return
        from ..events import second_factor_guessed

        if user is None:
            from django.contrib.auth import get_user_model

            user = get_user_model()._base_manager.filter(pk=self.user_id).first()
        if user is not None:
            second_factor_guessed.send(
                sender=user._meta.model, user=user, request=request, failures=int(result.count)
            )


def begin_factor_try(
    user_id: Any, *, free: int | None = None, first_wait: float | None = None
) -> FactorTry:
    """Count a try of ``user_id``'s second factor before it is checked; past the free
    tries, ``TooManyRequestsException`` (429 ``mfa_rate_limited``, ``Retry-After``) until
    its turn, even for the right answer. ``free`` and ``first_wait`` default to
    ``MFA["FREE_TRIES"]`` and ``MFA["FIRST_WAIT"]``."""
    limiter = _limiter()
    if limiter is None:
        return FactorTry(user_id)
    free = int(app_settings.MFA.FREE_TRIES if free is None else free)
    first_wait = float(app_settings.MFA.FIRST_WAIT if first_wait is None else first_wait)
    result = limiter.hit(_key(user_id), free, first_wait)
    if not result.allowed:
        # A try refused unseen is not counted: whoever has the password cannot keep the
        # owner locked out by trying on while it waits.
        limiter.refund(_key(user_id), first_wait)
        raise TooManyRequestsException(
            _("Too many two-factor attempts; try again later."),
            code="mfa_rate_limited",
            retry_after=result.retry_after,
        )
    return FactorTry(user_id, limiter, result, free)
