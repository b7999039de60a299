"""Model mixins that add fields without taking over the model's ``Meta``."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["without_own_meta"]

M = TypeVar("M", bound=type)


def without_own_meta(mixin: M) -> M:
    """Drop the abstract mixin's inner ``Meta`` once Django has read it.

    A model inherits the ``Meta`` of the first base that has one: listed before
    ``AbstractUser``, a mixin's bare ``class Meta: abstract = True`` would replace
    ``AbstractUser``'s (its verbose names, its swappable setting), and ``makemigrations``
    would write a spurious ``AlterModelOptions``. Without it, the next base's ``Meta``
    is found, as if the mixin were not there.
    """
    if "Meta" in mixin.__dict__:
        delattr(mixin, "Meta")
    return mixin
