"""System checks of the tenancy app: the resolver, the middleware and its position, the
app order the Gate's tenant guard needs, and the tenant models' managers, tenant column,
uniqueness and many-to-many tables."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import models
from django.db.models import F
from django.db.models.functions import Lower
from django.test import override_settings
from django.test.utils import isolate_apps

from appframework_tenancy.checks import (
    TENANT_MIDDLEWARE,
    check_gate_order,
    check_middleware,
    check_models,
    check_resolver,
)
from appframework_tenancy.models import TenantManager, TenantModel, TenantModelMixin
from tests.system_checks import run_checks

AUTH_MIDDLEWARE = "django.contrib.auth.middleware.AuthenticationMiddleware"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "checks.md"

NOT_CALLABLE = {"not": "callable"}


def resolve_nothing(request: Any) -> None:
    return None


def _tenancy(**values: Any) -> Any:
    app = copy.deepcopy(settings.APPFRAMEWORK)
    app.setdefault("TENANCY", {}).update(values)
    return override_settings(APPFRAMEWORK=app)


def _ids(messages: list[checks.CheckMessage]) -> list[str]:
    return [m.id for m in messages if (m.id or "").startswith("appframework_tenancy.")]


def _assert_documented(message: checks.CheckMessage) -> None:
    anchor = message.id.replace(".", "-")
    assert message.hint.endswith(f"See docs/checks.md#{anchor}."), message.hint
    assert f'<a id="{anchor}"></a>' in DOCS.read_text(encoding="utf-8")


@pytest.fixture
def registry() -> Iterator[Any]:
    """A throwaway app registry: models declared in the test live only there."""
    with isolate_apps("tests.tenancy.lab") as isolated:
        yield isolated


def model_messages(registry: Any) -> list[checks.CheckMessage]:
    return check_models(app_configs=registry.get_app_configs())


# -- the demo's settings -----------------------------------------------------------------
# From Django 6.1 `manage.py check` asks each database whether it supports JSONField.
@pytest.mark.django_db
def test_the_demo_settings_pass_manage_py_check(demo_stack: None) -> None:
    call_command("check", stdout=StringIO())


def test_the_demo_settings_produce_no_tenancy_message(demo_stack: None) -> None:
    assert _ids(run_checks()) == []


def test_the_lab_models_produce_no_tenancy_message() -> None:
    lab = [apps.get_app_config("tenancy_lab")]
    assert check_models(app_configs=lab) == []


def test_the_tenancy_checks_are_registered() -> None:
    registered = checks.registry.registry.get_checks()
    for check in (check_resolver, check_middleware, check_gate_order, check_models):
        assert check in registered
    assert check_models in checks.registry.registry.get_checks(include_deployment_checks=False)
    assert "models" in check_models.tags  # type: ignore[attr-defined]


# -- E001: the resolver ------------------------------------------------------------------
def test_a_configured_callable_resolver_passes() -> None:
    with _tenancy(RESOLVER=f"{__name__}.resolve_nothing"):
        assert check_resolver() == []


def test_no_resolver_is_an_error() -> None:
    with _tenancy(RESOLVER=None):
        (message,) = check_resolver()
    assert message.id == "appframework_tenancy.E001"
    assert message.level == checks.ERROR
    assert "No tenant resolver" in message.msg
    _assert_documented(message)


def test_an_unimportable_resolver_is_an_error_naming_the_path() -> None:
    path = "tests.tenancy.nowhere.resolve"
    with _tenancy(RESOLVER=path):
        (message,) = check_resolver()
    assert message.id == "appframework_tenancy.E001"
    assert path in message.msg
    _assert_documented(message)


def test_a_resolver_that_is_not_callable_is_an_error() -> None:
    with _tenancy(RESOLVER=f"{__name__}.NOT_CALLABLE"):
        (message,) = check_resolver()
    assert message.id == "appframework_tenancy.E001"
    assert "not callable" in message.msg
    _assert_documented(message)


# -- E002/E003: the middleware -----------------------------------------------------------
def test_the_demo_middleware_stack_passes(demo_stack: None) -> None:
    assert check_middleware() == []


def test_a_missing_tenant_middleware_is_an_error(demo_stack: None) -> None:
    stack = [m for m in settings.MIDDLEWARE if m != TENANT_MIDDLEWARE]
    with override_settings(MIDDLEWARE=stack):
        (message,) = check_middleware()
    assert message.id == "appframework_tenancy.E002"
    assert message.level == checks.ERROR
    _assert_documented(message)


def test_the_tenant_middleware_before_authentication_is_an_error(demo_stack: None) -> None:
    stack = [m for m in settings.MIDDLEWARE if m != TENANT_MIDDLEWARE]
    stack.insert(stack.index(AUTH_MIDDLEWARE), TENANT_MIDDLEWARE)
    with override_settings(MIDDLEWARE=stack):
        (message,) = check_middleware()
    assert message.id == "appframework_tenancy.E003"
    _assert_documented(message)


def test_the_tenant_middleware_with_no_authentication_middleware_passes() -> None:
    with override_settings(MIDDLEWARE=[TENANT_MIDDLEWARE]):
        assert check_middleware() == []


# -- E006: the app order -----------------------------------------------------------------
def _reordered(first: str, second: str) -> Callable[[], list[Any]]:
    """``get_app_configs`` with ``first`` moved just before ``second``."""
    configs = list(apps.get_app_configs())
    moved = next(c for c in configs if c.name == first)
    configs.remove(moved)
    configs.insert(next(i for i, c in enumerate(configs) if c.name == second), moved)
    return lambda: configs


def test_the_installed_app_order_passes() -> None:
    assert check_gate_order() == []


def test_tenancy_listed_before_authorization_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        apps,
        "get_app_configs",
        _reordered("appframework_tenancy", "appframework.authorization"),
    )
    (message,) = check_gate_order()
    assert message.id == "appframework_tenancy.E006"
    assert message.level == checks.ERROR
    _assert_documented(message)


def test_the_app_order_does_not_matter_without_the_gate_guard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        apps,
        "get_app_configs",
        _reordered("appframework_tenancy", "appframework.authorization"),
    )
    with _tenancy(GATE_GUARD=False):
        assert check_gate_order() == []


# -- E004: the default manager -----------------------------------------------------------
def test_a_plain_manager_declared_first_is_an_error(registry: Any) -> None:
    class PlainFirst(TenantModel):
        everything = models.Manager()

        class Meta:
            app_label = "tenancy_lab"

    (message,) = model_messages(registry)
    assert message.id == "appframework_tenancy.E004"
    assert message.obj is PlainFirst
    assert "tenancy_lab.PlainFirst" in message.msg
    assert "everything" in message.msg
    _assert_documented(message)


def test_a_plain_manager_with_the_scoped_one_named_default_passes(registry: Any) -> None:
    class NamedDefault(TenantModel):
        everything = models.Manager()

        class Meta:
            app_label = "tenancy_lab"
            default_manager_name = "objects"

    assert model_messages(registry) == []
    assert isinstance(NamedDefault._default_manager, TenantManager)


def test_a_subclass_of_the_tenant_manager_passes(registry: Any) -> None:
    class Published(TenantManager):
        pass

    class OwnManager(TenantModel):
        objects = Published()

        class Meta:
            app_label = "tenancy_lab"

    assert model_messages(registry) == []
    assert isinstance(OwnManager._default_manager, Published)


# -- E005: the tenant column -------------------------------------------------------------
def test_a_nullable_tenant_id_is_an_error(registry: Any) -> None:
    class Nullable(TenantModelMixin):
        tenant_id = models.BigIntegerField(null=True)

        class Meta:
            app_label = "tenancy_lab"

    (message,) = model_messages(registry)
    assert message.id == "appframework_tenancy.E005"
    assert message.obj is Nullable
    assert "tenancy_lab.Nullable" in message.msg
    _assert_documented(message)


def test_a_tenant_model_without_a_tenant_column_is_an_error(registry: Any) -> None:
    class NoColumn(TenantModelMixin):
        name = models.CharField(max_length=10)

        class Meta:
            app_label = "tenancy_lab"

    assert _ids(model_messages(registry)) == ["appframework_tenancy.E005"]


def test_a_not_null_tenant_foreign_key_or_uuid_column_passes(registry: Any) -> None:
    class Organisation(models.Model):
        name = models.CharField(max_length=10)

        class Meta:
            app_label = "tenancy_lab"

        def __str__(self) -> str:
            return self.name

    class ByForeignKey(TenantModelMixin):
        tenant = models.ForeignKey(Organisation, on_delete=models.CASCADE)

        class Meta:
            app_label = "tenancy_lab"

    class ByUuid(TenantModelMixin):
        tenant_id = models.UUIDField(db_index=True)

        class Meta:
            app_label = "tenancy_lab"

    assert model_messages(registry) == []


def test_an_abstract_tenant_model_is_not_checked(registry: Any) -> None:
    class AbstractBase(TenantModelMixin):
        tenant_id = models.BigIntegerField(null=True)
        code = models.CharField(max_length=10, unique=True)

        class Meta:
            abstract = True
            app_label = "tenancy_lab"

    assert model_messages(registry) == []


# -- W001: uniqueness that ignores the tenant --------------------------------------------
def test_a_unique_field_without_the_tenant_is_a_warning(registry: Any) -> None:
    class GlobalSlug(TenantModel):
        slug = models.SlugField(unique=True)

        class Meta:
            app_label = "tenancy_lab"

    (message,) = model_messages(registry)
    assert message.id == "appframework_tenancy.W001"
    assert message.level == checks.WARNING
    assert message.obj is GlobalSlug
    assert "tenancy_lab.GlobalSlug" in message.msg
    assert "slug" in message.msg
    _assert_documented(message)


def test_a_unique_constraint_without_the_tenant_is_a_warning(registry: Any) -> None:
    class GlobalCode(TenantModel):
        code = models.CharField(max_length=10)

        class Meta:
            app_label = "tenancy_lab"
            constraints = [models.UniqueConstraint(fields=["code"], name="global_code")]

    (message,) = model_messages(registry)
    assert message.id == "appframework_tenancy.W001"
    assert "global_code" in message.msg


def test_unique_together_without_the_tenant_is_a_warning(registry: Any) -> None:
    class GlobalPair(TenantModel):
        first = models.CharField(max_length=10)
        second = models.CharField(max_length=10)

        class Meta:
            app_label = "tenancy_lab"
            unique_together = [("first", "second")]

    (message,) = model_messages(registry)
    assert message.id == "appframework_tenancy.W001"
    assert "first, second" in message.msg


def test_a_conditional_unique_constraint_without_the_tenant_is_a_warning(registry: Any) -> None:
    class ActiveCode(TenantModel):
        code = models.CharField(max_length=10)
        active = models.BooleanField(default=True)

        class Meta:
            app_label = "tenancy_lab"
            constraints = [
                models.UniqueConstraint(
                    fields=["code"], condition=models.Q(active=True), name="active_code"
                )
            ]

    (message,) = model_messages(registry)
    assert message.id == "appframework_tenancy.W001"
    assert "active_code" in message.msg


def test_an_expression_unique_constraint_without_the_tenant_is_a_warning(registry: Any) -> None:
    class LowerCode(TenantModel):
        code = models.CharField(max_length=10)

        class Meta:
            app_label = "tenancy_lab"
            constraints = [models.UniqueConstraint(Lower("code"), name="lower_code")]

    (message,) = model_messages(registry)
    assert message.id == "appframework_tenancy.W001"
    assert "lower_code" in message.msg


def test_conditional_or_expression_uniqueness_that_includes_the_tenant_passes(
    registry: Any,
) -> None:
    class ScopedCodes(TenantModel):
        code = models.CharField(max_length=10)
        active = models.BooleanField(default=True)

        class Meta:
            app_label = "tenancy_lab"
            constraints = [
                models.UniqueConstraint(
                    fields=["tenant_id", "code"],
                    condition=models.Q(active=True),
                    name="active_code_per_tenant",
                ),
                models.UniqueConstraint(
                    F("tenant_id"), Lower("code"), name="lower_code_per_tenant"
                ),
            ]

    assert model_messages(registry) == []


def test_uniqueness_that_includes_the_tenant_passes(registry: Any) -> None:
    class PerTenantCode(TenantModel):
        code = models.CharField(max_length=10)
        first = models.CharField(max_length=10)

        class Meta:
            app_label = "tenancy_lab"
            constraints = [
                models.UniqueConstraint(fields=["tenant_id", "code"], name="code_per_tenant")
            ]
            unique_together = [("tenant_id", "first")]

    class Organisation(models.Model):
        class Meta:
            app_label = "tenancy_lab"

        def __str__(self) -> str:
            return str(self.pk)

    class PerTenantFk(TenantModelMixin):
        tenant = models.ForeignKey(Organisation, on_delete=models.CASCADE)
        code = models.CharField(max_length=10)

        class Meta:
            app_label = "tenancy_lab"
            constraints = [models.UniqueConstraint(fields=["tenant", "code"], name="fk_code")]

    assert model_messages(registry) == []


def test_a_one_to_one_field_is_not_a_uniqueness_warning(registry: Any) -> None:
    class Parent(TenantModel):
        class Meta:
            app_label = "tenancy_lab"

    class Child(TenantModel):
        parent = models.OneToOneField(Parent, on_delete=models.CASCADE)

        class Meta:
            app_label = "tenancy_lab"

    assert model_messages(registry) == []


def test_each_global_uniqueness_gets_its_own_warning(registry: Any) -> None:
    class Several(TenantModel):
        slug = models.SlugField(unique=True)
        code = models.CharField(max_length=10)
        first = models.CharField(max_length=10)

        class Meta:
            app_label = "tenancy_lab"
            constraints = [models.UniqueConstraint(fields=["code"], name="several_code")]
            unique_together = [("first", "code")]

    messages = model_messages(registry)
    assert _ids(messages) == ["appframework_tenancy.W001"] * 3
    assert [re.search(r"uniqueness of (.+?) spans", m.msg)[1] for m in messages] == [  # type: ignore[index]
        "slug",
        "first, code",
        "several_code",
    ]


# -- W002: many-to-many through an auto-created table ------------------------------------
def test_a_many_to_many_between_tenant_models_through_an_auto_created_table_is_a_warning(
    registry: Any,
) -> None:
    class Label(TenantModel):
        class Meta:
            app_label = "tenancy_lab"

    class Article(TenantModel):
        labels = models.ManyToManyField(Label)

        class Meta:
            app_label = "tenancy_lab"

    (message,) = model_messages(registry)
    assert message.id == "appframework_tenancy.W002"
    assert message.level == checks.WARNING
    assert message.obj is Article
    assert "tenancy_lab.Article.labels" in message.msg
    _assert_documented(message)


def test_a_many_to_many_through_a_tenant_model_or_to_a_global_model_passes(
    registry: Any,
) -> None:
    class Label(TenantModel):
        class Meta:
            app_label = "tenancy_lab"

    class Country(models.Model):
        class Meta:
            app_label = "tenancy_lab"

        def __str__(self) -> str:
            return str(self.pk)

    class Article(TenantModel):
        labels = models.ManyToManyField(Label, through="ArticleLabel")
        countries = models.ManyToManyField(Country)

        class Meta:
            app_label = "tenancy_lab"

    class ArticleLabel(TenantModel):
        article = models.ForeignKey(Article, on_delete=models.CASCADE)
        label = models.ForeignKey(Label, on_delete=models.CASCADE)

        class Meta:
            app_label = "tenancy_lab"

    assert model_messages(registry) == []


# -- the base test settings --------------------------------------------------------------
# From Django 6.1 `manage.py check` asks each database whether it supports JSONField.
@pytest.mark.django_db
def test_without_the_tenant_middleware_manage_py_check_fails_with_only_the_middleware_error() -> (
    None
):
    assert TENANT_MIDDLEWARE not in settings.MIDDLEWARE
    assert _ids(run_checks()) == ["appframework_tenancy.E002"]
    with pytest.raises(SystemCheckError, match=re.escape("appframework_tenancy.E002")):
        call_command("check", stdout=StringIO(), stderr=StringIO())
