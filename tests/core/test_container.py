"""appframework.container: bind / resolve, nothing more."""

from __future__ import annotations

import pytest

from appframework.auth import AuthManager, TokenManager
from appframework.container import Container, container


class Service:
    pass


def test_bind_then_resolve_by_class() -> None:
    c = Container()
    service = Service()
    c.bind(Service, service)
    assert c.resolve(Service) is service


def test_bind_then_resolve_by_string() -> None:
    c = Container()
    c.bind("mailer", 42)
    assert c.resolve("mailer") == 42


def test_bind_replaces_earlier_binding() -> None:
    c = Container()
    c.bind("x", 1)
    c.bind("x", 2)
    assert c.resolve("x") == 2


def test_bind_none_is_a_binding() -> None:
    c = Container()
    c.bind("nothing", None)
    assert "nothing" in c
    assert c.resolve("nothing") is None


def test_contains() -> None:
    c = Container()
    assert Service not in c
    c.bind(Service, Service())
    assert Service in c


def test_resolve_unbound_class_raises_lookup_error_naming_it() -> None:
    with pytest.raises(LookupError) as excinfo:
        Container().resolve(Service)
    message = str(excinfo.value)
    assert "Service" in message
    assert "INSTALLED_APPS" in message


def test_resolve_unbound_string_raises_lookup_error_naming_it() -> None:
    with pytest.raises(LookupError, match="'mailer'"):
        Container().resolve("mailer")


def test_containers_are_independent() -> None:
    a, b = Container(), Container()
    a.bind("k", 1)
    assert "k" not in b


def test_global_container_unbound_key() -> None:
    with pytest.raises(LookupError, match="NotBoundAnywhere"):
        container.resolve(type("NotBoundAnywhere", (), {}))


def test_auth_provider_bound_auth_manager() -> None:
    manager = container.resolve(AuthManager)
    assert isinstance(manager, AuthManager)
    assert container.resolve(AuthManager) is manager


def test_auth_provider_bound_token_manager() -> None:
    manager = container.resolve(TokenManager)
    assert isinstance(manager, TokenManager)
    assert container.resolve(TokenManager) is manager


def test_bound_auth_manager_is_usable(user, password) -> None:  # type: ignore[no-untyped-def]
    assert container.resolve(AuthManager).attempt_sync(user.email, password) == user
    assert container.resolve(AuthManager).attempt_sync(user.email, "wrong") is None


def test_bound_token_manager_round_trips(user) -> None:  # type: ignore[no-untyped-def]
    manager = container.resolve(TokenManager)
    assert manager.verify_sync(manager.issue(user)) == user
