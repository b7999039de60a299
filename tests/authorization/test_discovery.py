"""Policy discovery: the opt-in provider imports each app's ``policies`` module."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps

from appframework.authorization import Gate, discover_policies, register_policy
from appframework.authorization.apps import (
    AuthorizationServiceProvider,
    AutodiscoverAuthorizationServiceProvider,
)
from appframework.container import container
from testproject.blog.models import Post


@pytest.fixture
def fresh_gate(bound_gate: Gate) -> Gate:
    return bound_gate


def test_plain_app_label_selects_the_provider_without_discovery() -> None:
    config = apps.get_app_config("appframework_authorization")
    assert type(config) is AuthorizationServiceProvider


def test_discover_policies_imports_each_apps_policies_module_and_calls_register(
    fresh_gate: Gate,
) -> None:
    found = discover_policies(fresh_gate)
    assert "testproject.blog.policies" in found
    assert fresh_gate.policy_for(Post) is not None
    assert fresh_gate.has("publish-post")


def test_autodiscover_provider_registers_policies_without_project_code(
    fresh_gate: Gate,
) -> None:
    import appframework.authorization as package

    config = AutodiscoverAuthorizationServiceProvider("appframework.authorization", package)
    config.ready()
    gate = container.resolve(Gate)
    # ready() binds a new, empty Gate and then fills it from the policies modules.
    assert gate is not fresh_gate
    assert gate.policy_for(Post) is not None
    assert gate.has("publish-post")


def test_register_policy_decorator_registers_the_class_on_the_containers_gate(
    fresh_gate: Gate,
) -> None:
    class Thing:
        pass

    @register_policy(Thing)
    class ThingPolicy:
        def touch(self, user: Any, thing: Thing) -> bool:
            return True

    assert isinstance(fresh_gate.policy_for(Thing()), ThingPolicy)
    assert fresh_gate.has("touch", Thing())
