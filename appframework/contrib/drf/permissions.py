"""``GatePermission``: DRF's permission checks answered by the suite's Gate;
``TokenHasScope``: a bearer token's scopes."""

from __future__ import annotations

from typing import Any, ClassVar

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from ...auth.scopes import insufficient_scope, missing_scope
from ...auth.tokens import ApiToken
from ...authorization.guard import ability_denied, bound_gate
from .authentication import InsufficientScope, view_scopes

__all__ = ["GatePermission", "TokenHasScope"]


def _api_token(request: Request) -> ApiToken | None:
    token = request.auth
    return token if isinstance(token, ApiToken) else None


class GatePermission(BasePermission):
    """Anonymous → 401; an ability the Gate denies → 403 (``code: ability_denied``).

    A view action becomes the ability ``"<verb>-<model_name>"`` of the view's queryset
    model: ``list``/``retrieve`` → ``view``, ``create`` → ``create``,
    ``update``/``partial_update`` → ``update``, ``destroy`` → ``delete``; any other
    action (an ``@action`` named ``publish``) is its own verb (``publish-post``). Views
    without actions (``APIView``, generics) map the method: GET/HEAD → ``view``, POST →
    ``create``, PUT/PATCH → ``update``, DELETE → ``delete``.

    A view may set ``abilities = {"destroy": "delete-post", "list": None}``: an action
    mapped to ``None`` needs a signed-in user and nothing more.

    List and create ask the Gate with the model class (``allows(user, "create-post",
    Post)``: it selects the policy); detail actions ask per object, after the lookup,
    so a missing object is 404 and another tenant's object is 404 through the scoped
    manager before the Gate is asked.
    """

    action_verbs: ClassVar[dict[str, str]] = {
        "list": "view",
        "retrieve": "view",
        "create": "create",
        "update": "update",
        "partial_update": "update",
        "destroy": "delete",
    }
    method_verbs: ClassVar[dict[str, str]] = {
        "GET": "view",
        "HEAD": "view",
        "POST": "create",
        "PUT": "update",
        "PATCH": "update",
        "DELETE": "delete",
    }
    code = "ability_denied"

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if user is None or not user.is_authenticated:
            return False
        ability = self.ability(request, view)
        if ability is not None:
            self._within_token_scope(request, ability)
        if ability is None or self.is_detail(view):
            return True  # detail actions are decided per object
        model = self.model(view)
        args = () if model is None else (model,)
        return self._allows(user, ability, args)

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        ability = self.ability(request, view)
        if ability is None:
            return True
        return self._allows(request.user, ability, (obj,))

    # -- the pieces a subclass may change ---------------------------------------------
    def ability(self, request: Request, view: Any) -> str | None:
        """The ability the request needs, or None when a signed-in user is enough."""
        action = getattr(view, "action", None)
        if action is None and hasattr(view, "action_map"):
            return None  # a viewset route without this method: DRF answers 405 next
        if action == "metadata":
            action = None  # OPTIONS (and the browsable API's forms) ask per method
        overrides: dict[str, str | None] = getattr(view, "abilities", None) or {}
        key = action or request.method
        if key in overrides:
            return overrides[key]
        verb = self.action_verbs.get(action, action) if action else None
        if verb is None:
            verb = self.method_verbs.get(str(request.method))
        if verb is None:
            return None  # OPTIONS/TRACE outside a viewset
        model = self.model(view)
        return verb if model is None else f"{verb}-{model._meta.model_name}"

    @staticmethod
    def model(view: Any) -> Any | None:
        queryset = getattr(view, "queryset", None)
        if queryset is None and hasattr(view, "get_queryset"):
            try:
                queryset = view.get_queryset()
            except AssertionError:  # DRF's "no queryset" assertion: a model-less view
                return None
        return getattr(queryset, "model", None)

    @staticmethod
    def is_detail(view: Any) -> bool:
        detail = getattr(view, "detail", None)
        if detail is not None:
            return bool(detail)
        lookup = getattr(view, "lookup_url_kwarg", None) or getattr(view, "lookup_field", None)
        return bool(lookup and lookup in getattr(view, "kwargs", {}))

    @staticmethod
    def _within_token_scope(request: Request, ability: str) -> None:
        # An ability defined with scope= needs it from a token limited to scopes.
        scope = bound_gate().token_scope(ability)
        if scope is not None and missing_scope(_api_token(request), (scope,)) is not None:
            raise InsufficientScope(scope)

    def _allows(self, user: Any, ability: str, args: tuple[Any, ...]) -> bool:
        allowed = bound_gate().allows_sync(user, ability, *args)
        if not allowed:
            self.message = ability_denied(ability).detail
        return allowed


class TokenHasScope(BasePermission):
    """A request authenticated by a bearer token limited to scopes (a personal access
    token made with some) needs every scope the view names in ``required_scopes``, else
    the method's (``read`` for a safe method, ``write`` for the others): 403
    ``insufficient_scope``. A session, or a token not limited, passes.
    ``BearerTokenAuthentication`` already checks this; list it for a view authenticated
    by another class that puts an :class:`~appframework.auth.tokens.ApiToken` in
    ``request.auth``. The Gate still decides what the user may do."""

    code = "insufficient_scope"

    def has_permission(self, request: Request, view: Any) -> bool:
        token = _api_token(request)
        if token is None:
            return True
        refused = missing_scope(token, view_scopes(request, view))
        if refused is not None:
            self.message = insufficient_scope(refused).detail
            return False
        return True
