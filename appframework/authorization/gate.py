"""The Gate: named abilities, per-model policies, before-hooks, role/permission checks.

Lookup order of ``allows(user, ability, *args)``: global before-hooks
(first non-None decides) → the check ``define``d for the ability → the policy registered
for ``type(args[0])`` (its ``before(user, ability)`` first, then the method named after
the ability, ``-`` and ``.`` read as ``_``). Nothing resolves it → ``KeyError``.

Checks, hooks and policy methods may be sync or async. Under ``allows`` (async) a sync
one is called inline, and re-run in a worker thread only if it touches the database
(Django raises ``SynchronousOnlyOperation``), so pure predicates stay fast and ORM-using
ones still work; checks should therefore be free of side effects.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.core.exceptions import SynchronousOnlyOperation

from .signals import gate_evaluated

__all__ = ["Check", "Decision", "Gate", "ability_method_name"]

Check = Callable[..., Any]
Step = tuple[Check, tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class Decision:
    """What ``Gate.inspect`` answers: the result and what produced it."""

    allowed: bool
    source: str

    def __bool__(self) -> bool:
        return self.allowed


def ability_method_name(ability: str) -> str:
    """``"delete-post"`` → ``"delete_post"``: the policy method answering an ability."""
    return ability.replace("-", "_").replace(".", "_")


def _name(func: Any) -> str:
    target = getattr(func, "__func__", func)
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", None) or type(func).__qualname__
    return f"{module}.{qualname}" if module else str(qualname)


class _RoleCheck:
    """``Gate.role(*names)``: true when the user has any of the roles."""

    def __init__(self, names: tuple[str, ...]) -> None:
        if not names:
            raise ValueError("Gate.role() needs at least one role name.")
        self.names = names

    def __call__(self, user: Any, *args: Any) -> bool:
        has = getattr(user, "has_any_role", None)
        return bool(has and has(*self.names))

    async def acall(self, user: Any, *args: Any) -> bool:
        has = getattr(user, "ahas_any_role", None)
        return bool(has and await has(*self.names))

    def __repr__(self) -> str:
        return f"Gate.role({', '.join(map(repr, self.names))})"


class _PermissionCheck:
    """``Gate.permission(name)``: true when any of the user's roles grants ``name``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, user: Any, *args: Any) -> bool:
        has = getattr(user, "has_permission", None)
        return bool(has and has(self.name))

    async def acall(self, user: Any, *args: Any) -> bool:
        has = getattr(user, "ahas_permission", None)
        return bool(has and await has(self.name))

    def __repr__(self) -> str:
        return f"Gate.permission({self.name!r})"


async def _call_async(func: Check, *args: Any) -> Any:
    acall = getattr(func, "acall", None)
    if acall is not None:
        return await acall(*args)
    try:
        result = func(*args)
    except SynchronousOnlyOperation:
        result = await sync_to_async(func)(*args)
    if result.__class__ is bool or result is None:
        return result
    if inspect.isawaitable(result):
        result = await result
    return result


def _call_sync(func: Check, *args: Any) -> Any:
    result = func(*args)
    if result.__class__ is bool or result is None:
        return result  # the common case, without inspect.isawaitable's cost
    if inspect.isawaitable(result):
        result = async_to_sync(_await)(result)
    return result


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


class Gate:
    """Bound empty in the container by ``AuthorizationServiceProvider``; define abilities
    from your own ``AppConfig.ready()``."""

    def __init__(self) -> None:
        self._abilities: dict[str, Check] = {}
        self._token_scopes: dict[str, str] = {}
        self._policies: dict[type, Any] = {}
        self._before: list[Check] = []
        #: Modules that registered something, for check appframework.W011 (app order).
        self.registered_from: set[str] = set()

    def _note_caller(self) -> None:
        # Two frames up: the code that called define/policy/before.
        module = sys._getframe(2).f_globals.get("__name__")
        if isinstance(module, str):
            self.registered_from.add(module)

    # -- registration ----------------------------------------------------------------
    def define(self, ability: str, check: Check, *, scope: str | None = None) -> None:
        """``check(user, *args)`` (sync or async) answers ``ability``; replaces any earlier.

        ``scope``: ``authorize(request, ability)`` also needs a bearer token limited to
        scopes to have this one (403 ``insufficient_scope``); sessions are not limited."""
        if not isinstance(ability, str) or not ability:
            raise ValueError("An ability is a non-empty string.")
        if not callable(check):
            raise TypeError(f"The check for {ability!r} is not callable.")
        if scope is not None and (not isinstance(scope, str) or not scope):
            raise ValueError("A scope is a non-empty string.")
        self._note_caller()
        self._abilities[ability] = check
        if scope is None:
            self._token_scopes.pop(ability, None)
        else:
            self._token_scopes[ability] = scope

    def token_scope(self, ability: str) -> str | None:
        """The scope ``define(..., scope=)`` gave ``ability``: what a bearer token limited
        to scopes needs for it; None when it needs none of its own."""
        return self._token_scopes.get(ability)

    def policy(self, model: type, policy: Any) -> None:
        """Register ``policy`` (a class, instantiated once here, or an instance) for
        ``model``; it answers abilities not ``define``d, one method per ability."""
        if not isinstance(model, type):
            raise TypeError("Gate.policy() takes the model class first.")
        self._note_caller()
        self._policies[model] = policy() if isinstance(policy, type) else policy

    def before(self, check: Check) -> Check:
        """Add a global hook ``check(user, ability, *args)``; a non-None result decides.
        Returns ``check`` so it can be used as a decorator."""
        if not callable(check):
            raise TypeError("Gate.before() takes a callable.")
        self._note_caller()
        self._before.append(check)
        return check

    @staticmethod
    def role(*names: str) -> Check:
        return _RoleCheck(names)

    @staticmethod
    def permission(name: str) -> Check:
        return _PermissionCheck(name)

    # -- lookup ----------------------------------------------------------------------
    def policy_for(self, target: Any) -> Any | None:
        """The policy registered for ``target`` (an instance or a class), via the MRO."""
        cls = target if isinstance(target, type) else type(target)
        policies = self._policies
        if cls in policies:
            return policies[cls]
        for base in cls.__mro__[1:]:
            if base in policies:
                return policies[base]
        return None

    def has(self, ability: str, *args: Any) -> bool:
        """True when ``ability`` is defined, or a policy for ``args[0]`` has its method."""
        if ability in self._abilities:
            return True
        if not args:
            return False
        policy = self.policy_for(args[0])
        return policy is not None and callable(getattr(policy, ability_method_name(ability), None))

    def _plan(self, ability: str, args: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
        """(policy or None, arguments for its methods): a class first argument only
        selects the policy and is not passed on (``allows(user, "create", Post)``)."""
        if not args:
            return None, args
        policy = self.policy_for(args[0])
        if policy is not None and isinstance(args[0], type):
            return policy, args[1:]
        return policy, args

    # -- evaluation --------------------------------------------------------------------
    def _steps(
        self, user: Any, ability: str, args: tuple[Any, ...]
    ) -> Generator[Step, Any, Decision]:
        """The lookup order, once: yields each call to make and receives its result, so
        the sync and async drivers below share it."""
        for hook in self._before:
            result = yield hook, (user, ability, *args)
            if result is not None:
                return Decision(bool(result), f"before:{_name(hook)}")
        check = self._abilities.get(ability)
        if check is not None:
            return Decision(bool((yield check, (user, *args))), f"define:{ability}")
        policy, call_args = self._plan(ability, args)
        if policy is None:
            raise KeyError(ability)
        name = type(policy).__name__
        before = getattr(policy, "before", None)
        if callable(before):
            result = yield before, (user, ability)
            if result is not None:
                return Decision(bool(result), f"policy:{name}.before")
        method_name = ability_method_name(ability)
        method = getattr(policy, method_name, None)
        if not callable(method):
            raise KeyError(ability)
        return Decision(bool((yield method, (user, *call_args))), f"policy:{name}.{method_name}")

    async def inspect(self, user: Any, ability: str, *args: Any) -> Decision:
        """The decision and what made it (which before-hook, check or policy method)."""
        steps = self._steps(user, ability, args)
        try:
            func, call_args = next(steps)
            while True:
                func, call_args = steps.send(await _call_async(func, *call_args))
        except StopIteration as done:
            decision: Decision = done.value
        self._evaluated(user, ability, args, decision)
        return decision

    def inspect_sync(self, user: Any, ability: str, *args: Any) -> Decision:
        steps = self._steps(user, ability, args)
        try:
            func, call_args = next(steps)
            while True:
                func, call_args = steps.send(_call_sync(func, *call_args))
        except StopIteration as done:
            decision: Decision = done.value
        self._evaluated(user, ability, args, decision)
        return decision

    async def allows(self, user: Any, ability: str, *args: Any) -> bool:
        """Async boolean answer; ``KeyError`` when nothing resolves ``ability``."""
        check = self._fast_check(ability)
        if check is not None:
            return bool(await _call_async(check, user, *args))
        return (await self.inspect(user, ability, *args)).allowed

    def allows_sync(self, user: Any, ability: str, *args: Any) -> bool:
        check = self._fast_check(ability)
        if check is not None:
            return bool(_call_sync(check, user, *args))
        return self.inspect_sync(user, ability, *args).allowed

    def _fast_check(self, ability: str) -> Check | None:
        """The defined check when it alone decides and nobody listens for decisions:
        then ``allows`` skips building a Decision (the hot path of most projects)."""
        if self._before or gate_evaluated.receivers:
            return None
        return self._abilities.get(ability)

    def _evaluated(
        self, user: Any, ability: str, args: tuple[Any, ...], decision: Decision
    ) -> None:
        if gate_evaluated.receivers:
            gate_evaluated.send(
                sender=self,
                user=user,
                ability=ability,
                arguments=args,
                allowed=decision.allowed,
                source=decision.source,
            )

    # -- querysets ---------------------------------------------------------------------
    def scope(self, user: Any, ability: str, queryset: Any) -> Any:
        """Narrow ``queryset`` to the objects ``user`` may ``ability``, through the policy
        method ``scope_<ability>(user, queryset)``; ``KeyError`` if there is none.

        The boolean method stays the source of truth; ``appframework.authorization.testing
        .assert_scope_matches`` checks the two agree on fixtures.
        """
        policy = self.policy_for(queryset.model)
        method = getattr(policy, f"scope_{ability_method_name(ability)}", None) if policy else None
        if not callable(method):
            raise KeyError(ability)
        # The hooks that would decide allows() for every object decide the scope too:
        # True keeps the whole queryset, False empties it. They get no object here.
        hooks = [*self._before, getattr(policy, "before", None)]
        for hook in hooks:
            if not callable(hook):
                continue
            verdict = _call_sync(hook, user, ability)
            if verdict is not None:
                return queryset if verdict else queryset.none()
        return method(user, queryset)
