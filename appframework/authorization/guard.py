"""``authorize(request, ability, *args)`` and the view decorator built on it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.core.exceptions import ValidationError
from django.db import DataError
from django.http import Http404, HttpRequest
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from ..auth.scopes import insufficient_scope, method_scope
from ..auth.sessions import current_user, current_user_sync
from ..auth.tokens import (
    current_api_token,
    current_api_token_sync,
    current_api_user,
    current_api_user_sync,
)
from ..container import container
from ..exceptions import ForbiddenException, UnauthorizedException
from .gate import Gate

__all__ = [
    "ability_denied",
    "authorize",
    "authorize_sync",
    "authorized",
    "bound_gate",
    "has_scope",
    "has_scope_sync",
    "insufficient_scope",
    "needed_scope",
    "require_scope",
    "require_scope_sync",
]

V = TypeVar("V", bound=Callable[..., Any])


def bound_gate() -> Gate:
    """The Gate the AuthorizationServiceProvider bound in the container."""
    gate: Gate = container.resolve(Gate)
    return gate


def ability_denied(ability: str) -> ForbiddenException:
    """The 403 of an ability the Gate refused (``code: ability_denied``)."""
    return ForbiddenException(
        format_lazy(_("This action is unauthorized ({ability})."), ability=ability),
        code="ability_denied",
    )


def has_scope_sync(request: HttpRequest, scope: str) -> bool:
    """Whether the request's credential may be used for ``scope``: a session may do
    anything its user may; a bearer token only within its scopes (a signed token, or a
    personal access token made without scopes, is not limited)."""
    token = current_api_token_sync(request)
    return token is None or token.has_scope(scope)


async def has_scope(request: HttpRequest, scope: str) -> bool:
    token = await current_api_token(request)
    return token is None or token.has_scope(scope)


def require_scope_sync(request: HttpRequest, scope: str) -> None:
    """``insufficient_scope`` (403) unless :func:`has_scope_sync`."""
    if not has_scope_sync(request, scope):
        raise insufficient_scope(scope)


async def require_scope(request: HttpRequest, scope: str) -> None:
    if not await has_scope(request, scope):
        raise insufficient_scope(scope)


def needed_scope(request: HttpRequest, ability: str, scope: str | None = None) -> str:
    """The scope a bearer token limited to scopes needs for ``ability`` on this request:
    ``scope``, else the ability's (``Gate.define(..., scope=)``), else the method's."""
    return scope or bound_gate().token_scope(ability) or method_scope(request.method)


async def _require_user(request: HttpRequest) -> Any:
    """The session user, else the bearer user; 401 when there is neither."""
    user = await current_user(request) or await current_api_user(request)
    if user is None:
        raise UnauthorizedException()
    return user


def _require_user_sync(request: HttpRequest) -> Any:
    user = current_user_sync(request) or current_api_user_sync(request)
    if user is None:
        raise UnauthorizedException()
    return user


async def authorize(
    request: HttpRequest, ability: str, *args: Any, scope: str | None = None
) -> Any:
    """The user (session, else bearer) if the Gate allows ``ability``.

    Anonymous → ``UnauthorizedException`` (401); denied → ``ForbiddenException`` (403).
    Asks the Gate directly: superusers get no bypass unless a before-hook grants one.
    A bearer token limited to scopes must have ``scope``, else the one
    ``Gate.define(..., scope=)`` gave the ability, else the method's (``read`` for a safe
    method, ``write`` for the others); without it the answer is 403
    ``insufficient_scope``, whatever the Gate would say.
    """
    user = await _require_user(request)
    gate = bound_gate()
    await require_scope(request, needed_scope(request, ability, scope))
    if not await gate.allows(user, ability, *args):
        raise ability_denied(ability)
    return user


def authorize_sync(request: HttpRequest, ability: str, *args: Any, scope: str | None = None) -> Any:
    user = _require_user_sync(request)
    gate = bound_gate()
    require_scope_sync(request, needed_scope(request, ability, scope))
    if not gate.allows_sync(user, ability, *args):
        raise ability_denied(ability)
    return user


Resolver = Callable[..., Any]


def _model_resolver(model: type, url_kwarg: str, field: str) -> Resolver:
    def resolve(kwargs: dict[str, Any]) -> Any:
        if url_kwarg not in kwargs:
            raise LookupError(f"URL has no {url_kwarg!r} argument for {model.__name__}.")
        try:
            return model._default_manager.get(**{field: kwargs.pop(url_kwarg)})  # type: ignore[attr-defined]
        except (model.DoesNotExist, ValueError, TypeError, ValidationError, DataError):  # type: ignore[attr-defined]
            raise Http404(f"No {model.__name__} matches the given query.") from None

    return resolve


def authorized(
    ability: str,
    model: type | None = None,
    *,
    url_kwarg: str = "id",
    field: str = "pk",
    as_kwarg: str | None = None,
    pass_object: bool = True,
    scope: str | None = None,
) -> Callable[[V], V]:
    """Guard a sync or async view with ``authorize(request, ability, obj)``.

    With ``model``, the object is fetched by ``field=<URL kwarg url_kwarg>`` (404 when
    missing, checked after login and before the ability) and handed to the view as
    ``as_kwarg`` (the model name in lower case by default) in place of the URL kwarg::

        @authorized("delete-post", Post)         # path("posts/<int:id>", ...)
        def delete_post(request, post): ...

    ``pass_object=False`` leaves the view's arguments as they came (the URL kwarg stays,
    no object is added): for frameworks that bind a view's parameters from its
    signature, such as django-ninja (``appframework.contrib.ninja.gate``).

    ``scope``: what a bearer token limited to scopes needs (else the ability's, else
    the method's, as in :func:`authorize`; 403 ``insufficient_scope``; a session is not
    limited), checked before the lookup.
    """
    resolve = _model_resolver(model, url_kwarg, field) if model is not None else None
    if resolve is not None and not pass_object:
        # The resolver pops the URL kwarg: let it pop from a copy.
        pop = resolve

        def resolve(kwargs: dict[str, Any]) -> Any:
            return pop(dict(kwargs))

    name = as_kwarg or (model.__name__.lower() if model is not None else "")

    def decorator(view: V) -> V:
        if iscoroutinefunction(view):

            @functools.wraps(view)
            async def async_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
                # 401 before any lookup: anonymous clients learn nothing about which
                # ids exist; then 404 (missing) before 403 (denied).
                await _require_user(request)
                await require_scope(request, needed_scope(request, ability, scope))
                gate_args: tuple[Any, ...] = ()
                if resolve is not None:
                    obj = await sync_to_async(resolve)(kwargs)
                    if pass_object:
                        kwargs[name] = obj
                    gate_args = (obj,)
                await authorize(request, ability, *gate_args, scope=scope)
                return await view(request, *args, **kwargs)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(view)
        def sync_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            _require_user_sync(request)
            require_scope_sync(request, needed_scope(request, ability, scope))
            gate_args: tuple[Any, ...] = ()
            if resolve is not None:
                obj = resolve(kwargs)
                if pass_object:
                    kwargs[name] = obj
                gate_args = (obj,)
            authorize_sync(request, ability, *gate_args, scope=scope)
            return view(request, *args, **kwargs)

        return sync_wrapper  # type: ignore[return-value]

    return decorator
