"""``@register_policy(Model)`` records the class; ``discover_policies(gate)`` applies every
recorded one to the Gate it is given, even when the decorating module was imported
before that Gate existed (a policies module imported early by an ``admin.py``, say).

This module is such a module: ``ParcelPolicy`` below is decorated when pytest imports
it, long before any test creates its Gate; ``discover_policies`` never imports it again.
"""

from __future__ import annotations

from typing import Any

import pytest

from appframework.authorization import Gate, discover_policies, discovery, register_policy
from appframework.container import container

from .conftest import Person


class Parcel:
    """A model-like class only this module knows."""

    def __init__(self, owner_id: int | None = None) -> None:
        self.owner_id = owner_id


class Crate(Parcel):
    """A subclass: finds Parcel's policy."""


@register_policy(Parcel)
class ParcelPolicy:
    def deliver_parcel(self, user: Any, parcel: Parcel) -> bool:
        return parcel.owner_id == user.pk


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> list[tuple[type, Any]]:
    """A copy of the record for a test that decorates classes of its own; the real
    record is put back afterwards."""
    copy = list(discovery._DECORATED)
    monkeypatch.setattr(discovery, "_DECORATED", copy)
    return copy


@pytest.fixture
def no_gate_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Gate in the container (as before the authorization provider's ready())."""
    monkeypatch.delitem(container._bindings, Gate)
    assert Gate not in container


def test_policy_decorated_at_import_is_recorded() -> None:
    assert (Parcel, ParcelPolicy) in discovery._DECORATED


def test_discover_policies_gives_a_fresh_gate_the_policy_decorated_at_an_earlier_import() -> None:
    gate = Gate()
    assert gate.policy_for(Parcel) is None

    discover_policies(gate)

    assert isinstance(gate.policy_for(Parcel()), ParcelPolicy)
    assert isinstance(gate.policy_for(Crate()), ParcelPolicy)
    assert gate.has("deliver-parcel", Parcel())
    assert gate.allows_sync(Person(1), "deliver-parcel", Parcel(owner_id=1)) is True
    assert gate.allows_sync(Person(2), "deliver-parcel", Parcel(owner_id=1)) is False


def test_every_gate_discovery_is_given_gets_the_recorded_policies() -> None:
    first, second = Gate(), Gate()

    discover_policies(first)
    discover_policies(second)

    assert isinstance(first.policy_for(Parcel), ParcelPolicy)
    assert isinstance(second.policy_for(Parcel), ParcelPolicy)
    assert first.policy_for(Parcel) is not second.policy_for(Parcel)  # one instance each


def test_discover_policies_applies_the_record_to_the_given_gate_not_the_bound_one(
    bound_gate: Gate,
) -> None:
    given = Gate()

    discover_policies(given)

    assert isinstance(given.policy_for(Parcel), ParcelPolicy)
    assert bound_gate.policy_for(Parcel) is None


@pytest.mark.usefixtures("no_gate_bound")
def test_decorating_while_no_gate_is_bound_does_not_fail_and_is_recorded(
    scratch_registry: list[tuple[type, Any]],
) -> None:
    class Letter:
        pass

    @register_policy(Letter)
    class LetterPolicy:
        def read_letter(self, user: Any, letter: Letter) -> bool:
            return True

    assert LetterPolicy.__name__ == "LetterPolicy"  # the class itself, unchanged
    assert (Letter, LetterPolicy) in scratch_registry
    gate = Gate()
    discover_policies(gate)
    assert isinstance(gate.policy_for(Letter()), LetterPolicy)
    assert gate.has("read-letter", Letter())


@pytest.mark.usefixtures("scratch_registry")
def test_decorating_while_a_gate_is_bound_registers_on_it_at_once(bound_gate: Gate) -> None:
    class Memo:
        pass

    @register_policy(Memo)
    class MemoPolicy:
        def file_memo(self, user: Any, memo: Memo) -> bool:
            return True

    assert isinstance(bound_gate.policy_for(Memo()), MemoPolicy)
