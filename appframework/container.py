"""The application's service container: bind a value under a key, resolve it back."""

from __future__ import annotations

from typing import Any, TypeVar, overload

__all__ = ["Container", "container"]

T = TypeVar("T")


class Container:
    """Bind/resolve, nothing more. Providers bind their managers in ``ready()``."""

    def __init__(self) -> None:
        self._bindings: dict[object, Any] = {}

    def bind(self, key: object, value: Any) -> None:
        """Bind ``value`` under ``key`` (a class or a string), replacing any earlier one."""
        self._bindings[key] = value

    @overload
    def resolve(self, key: type[T]) -> T: ...
    @overload
    def resolve(self, key: str) -> Any: ...

    def resolve(self, key: object) -> Any:
        try:
            return self._bindings[key]
        except KeyError:
            name = getattr(key, "__qualname__", key)
            raise LookupError(
                f"Nothing is bound to {name!r} in the container; is its provider in INSTALLED_APPS?"
            ) from None

    def __contains__(self, key: object) -> bool:
        return key in self._bindings


container = Container()
