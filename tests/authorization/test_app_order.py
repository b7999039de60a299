"""An app that defines abilities in its ready() may be listed before the suite's apps
without a LookupError, and check appframework.W011 tells it to move."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps

from appframework.authorization import Gate
from appframework.authorization.checks import check_app_order
from appframework.container import container


@pytest.fixture
def gate_notes() -> Any:
    gate: Gate = container.resolve(Gate)
    before = set(gate.registered_from)
    yield gate
    gate.registered_from.clear()
    gate.registered_from.update(before)


def test_the_gate_is_bound_before_any_app_is_ready() -> None:
    # Bound when the provider's module is imported, which Django does for every app
    # before the first ready(): an earlier app's ready() finds it.
    import appframework.authorization.apps as provider_module

    assert Gate in container
    provider_module._bind_gate_early()  # idempotent: the bound Gate is kept
    assert container.resolve(Gate) is container.resolve(Gate)


def test_the_demo_app_after_the_suite_raises_no_warning() -> None:
    assert "testproject.blog.policies" in container.resolve(Gate).registered_from
    assert check_app_order() == []


def test_an_app_listed_before_the_suite_that_registers_abilities_is_w011(
    gate_notes: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The demo's blog app, moved to the front of INSTALLED_APPS.
    configs = list(apps.get_app_configs())
    blog = next(c for c in configs if c.name == "testproject.blog")
    reordered = [blog, *[c for c in configs if c is not blog]]
    monkeypatch.setattr(apps, "get_app_configs", lambda: reordered)
    warnings = check_app_order()
    assert [w.id for w in warnings] == ["appframework.W011"]
    assert "testproject.blog" in warnings[0].msg and "tenant guard" in warnings[0].msg


def test_registrations_remember_the_module_that_made_them(gate_notes: Gate) -> None:
    gate_notes.define("w011-probe", lambda user: True)
    try:
        assert __name__ in gate_notes.registered_from
    finally:
        gate_notes._abilities.pop("w011-probe")
