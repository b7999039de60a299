"""Settings fragments (``<!-- sample: settings -->``): the namespace they run in and what
is checked once they ran.

The namespace is what ``django-admin startproject myproject`` writes: its settings.py and
its urls.py (``urlpatterns``, ``path``; ``include`` too, which urls.py's own docstring
tells a reader to import), plus ``APPFRAMEWORK = {}``. After the fragment ran, every
setting it added or changed is checked against Django and the suite, and then applied
over the test settings to run Django's system checks.
"""

from __future__ import annotations

import ast
import copy
import functools
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import django
from django.apps import AppConfig
from django.conf import global_settings
from django.template import Context, Engine
from django.test import RequestFactory, override_settings
from django.utils.module_loading import import_string

from tests.system_checks import run_checks

_TEMPLATE_DIR = Path(django.__file__).parent / "conf" / "project_template" / "project_name"
_HANDLER = re.compile(r"^handler(?P<status>\d{3})$")
#: Settings a fragment may set beyond Django's own: the suite's, Celery's (read by
#: Celery's Django integration with the CELERY_ namespace), DRF's and django-ninja's.
_EXTRA_SETTING = re.compile(r"^(APPFRAMEWORK|CELERY_[A-Z0-9_]+|REST_FRAMEWORK|NINJA_[A-Z0-9_]+)$")


def _render(template: str, base_dir: Path) -> str:
    text = (_TEMPLATE_DIR / template).read_text(encoding="utf-8")
    context = Context(
        {
            "project_name": "myproject",
            "secret_key": "django-insecure-docs-sample-key-" + "x" * 30,
            "django_version": django.get_version(),
            "docs_version": ".".join(django.get_version().split(".")[:2]),
        },
        autoescape=False,
    )
    return Engine().from_string(text).render(context)


def startproject_namespace(base_dir: Path) -> dict[str, Any]:
    """settings.py and urls.py of a new project in ``base_dir``, in one namespace."""
    namespace: dict[str, Any] = {
        "__name__": "myproject.settings",
        "__file__": str(base_dir / "myproject" / "settings.py"),
    }
    exec(compile(_render("settings.py-tpl", base_dir), "settings.py", "exec"), namespace)
    urls: dict[str, Any] = {"__name__": "myproject.urls"}
    exec(compile(_render("urls.py-tpl", base_dir), "urls.py", "exec"), urls)
    from django.urls import include

    namespace.update(urlpatterns=urls["urlpatterns"], path=urls["path"], include=include)
    namespace["APPFRAMEWORK"] = {}
    return namespace


def snapshot(namespace: dict[str, Any]) -> dict[str, Any]:
    """The settings before the fragment ran (deep copies: ``+=`` changes lists in place)."""
    taken = {}
    for name, value in namespace.items():
        if name.isupper():
            taken[name] = copy.deepcopy(value)
        elif name == "urlpatterns":
            taken[name] = list(value)  # URL resolvers hold modules: a shallow copy
    return taken


def changed_settings(namespace: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    changed = {}
    for name, value in namespace.items():
        if not name.isupper():
            continue
        if name not in before or before[name] != value:
            changed[name] = value
    return changed


def check_names(changed: dict[str, Any]) -> None:
    known = {name for name in dir(global_settings) if name.isupper()}
    unknown = [name for name in changed if name not in known and not _EXTRA_SETTING.match(name)]
    assert not unknown, f"not a Django, appframework, Celery, DRF or ninja setting: {unknown}"


def check_appframework(value: Any) -> None:
    """Every section and key is one the suite knows; import strings import."""
    from appframework.conf import AppSettings, import_from_setting

    assert isinstance(value, dict), "APPFRAMEWORK must be a dict"
    with override_settings(APPFRAMEWORK=value):
        app_settings = AppSettings()
        for section, keys in value.items():
            for key, configured in keys.items():
                getattr(getattr(app_settings, section), key)  # unknown: ImproperlyConfigured
                if key == "PROVIDERS" and isinstance(configured, str):
                    import_from_setting(configured, section, key)


def check_rest_framework(value: Any) -> None:
    """DRF's import strings (classes, the exception handler) import."""
    assert isinstance(value, dict), "REST_FRAMEWORK must be a dict"
    for key, configured in value.items():
        entries = configured if isinstance(configured, list | tuple) else [configured]
        for entry in entries:
            if isinstance(entry, str) and "." in entry and key != "DEFAULT_THROTTLE_RATES":
                import_string(entry)


def check_import_lists(changed: dict[str, Any]) -> None:
    for name in ("MIDDLEWARE", "AUTHENTICATION_BACKENDS"):
        for entry in changed.get(name, ()):
            import_string(entry)
    apps = changed.get("INSTALLED_APPS")
    if apps is not None:
        labels = [AppConfig.create(entry).label for entry in apps]
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        assert not duplicates, f"INSTALLED_APPS lists these apps twice: {duplicates}"


def check_handlers(namespace: dict[str, Any]) -> None:
    """``handlerNNN`` answers status NNN, in the suite's problem format."""
    from django.core.exceptions import PermissionDenied, SuspiciousOperation
    from django.http import Http404

    exceptions = {400: SuspiciousOperation("x"), 403: PermissionDenied(), 404: Http404()}
    for name, value in namespace.items():
        match = _HANDLER.match(name)
        if not match:
            continue
        status = int(match.group("status"))
        view = import_string(value) if isinstance(value, str) else value
        request = RequestFactory().get("/no-such-page", HTTP_ACCEPT="application/json")
        response = view(request) if status == 500 else view(request, exceptions[status])
        assert response.status_code == status, f"{name} answered {response.status_code}"
        assert response["Content-Type"].startswith("application/problem+json"), (
            f"{name} did not answer in the problem format: {response['Content-Type']}"
        )


def _messages() -> set[tuple[str, str]]:
    from django.core import checks

    return {
        (str(message.id), str(message.msg))
        for message in run_checks()
        if message.level >= checks.WARNING and not message.is_silenced()
    }


@functools.cache
def _urlconf_counter() -> Iterator[int]:
    import itertools

    return itertools.count()


def merged_list(current: list[Any], before: list[Any], after: list[Any]) -> list[Any]:
    """The fragment's change of a list (entries it added, at the place it put them;
    entries it removed) made to the test settings' list."""
    result = [entry for entry in current if not (entry in before and entry not in after)]
    for index, entry in enumerate(after):
        if entry in result or entry in before:
            continue
        position = len(result)
        earlier = [e for e in after[:index] if e in result]
        later = [e for e in after[index + 1 :] if e in result]
        if earlier:
            position = result.index(earlier[-1]) + 1
        elif later:
            position = result.index(later[0])
        result.insert(position, entry)
    return result


def assigned_names(sources: list[str]) -> set[str]:
    """Names the fragment assigns whole (``MIDDLEWARE = [...]``), as opposed to changing
    the project's value (``INSTALLED_APPS += [...]``, ``MIDDLEWARE.insert(...)``)."""
    names = set()
    for source in sources:
        for node in ast.parse(source).body:
            if isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def applied(name: str, value: Any, before: Any, whole: bool) -> Any:
    """What the fragment's ``name`` becomes on top of the test settings. A list the
    fragment assigns whole replaces the test settings' list; a list it changes is
    changed the same way (its additions, at the place it put them, and its removals).
    APPFRAMEWORK merges by key and CACHES by alias (the test project installs apps the
    fragment may not, whose settings must stay); the rest is replaced."""
    from django.conf import settings

    current = getattr(settings, name, None)
    if isinstance(value, list) and isinstance(current, (list, tuple)) and not whole:
        return merged_list(list(current), list(before or []), value)
    if name == "APPFRAMEWORK" and isinstance(current, dict):
        return {
            section: {**current.get(section, {}), **value.get(section, {})}
            for section in {**current, **value}
        }
    if name == "CACHES" and isinstance(current, dict):
        return {**current, **value}
    return value


def system_checks(
    namespace: dict[str, Any], changed: dict[str, Any], before: dict[str, Any], whole: set[str]
) -> None:
    """The fragment's settings over the test settings: Django's system checks (the
    suite's among them) must report no error or warning the test settings do not.

    INSTALLED_APPS is the exception: replacing the apps of a running process would run
    every app's ready() again; the names were checked above, and the test project
    installs each of the suite's apps, so their checks run anyway."""
    overrides = {
        name: applied(name, value, before.get(name), name in whole)
        for name, value in changed.items()
        if name != "INSTALLED_APPS"
    }
    handlers = {name: v for name, v in namespace.items() if _HANDLER.match(name)}
    if handlers or namespace.get("urlpatterns") != before.get("urlpatterns"):
        module = types.ModuleType(f"tests.docs._sample_urls_{next(_urlconf_counter())}")
        module.urlpatterns = namespace.get("urlpatterns", [])  # type: ignore[attr-defined]
        for name, value in handlers.items():
            setattr(module, name, value)
        sys.modules[module.__name__] = module
        overrides["ROOT_URLCONF"] = module.__name__
    # Measured here, not once per process: a sample's setup may have changed settings.
    baseline = _messages()
    with override_settings(**overrides):
        new = sorted(_messages() - baseline)
    assert not new, f"the system checks report, with this fragment applied: {new}"


def check_fragment(
    namespace: dict[str, Any], before: dict[str, Any], sources: list[str]
) -> dict[str, Any]:
    changed = changed_settings(namespace, before)
    check_names(changed)
    if "APPFRAMEWORK" in changed:
        check_appframework(changed["APPFRAMEWORK"])
    if "REST_FRAMEWORK" in changed:
        check_rest_framework(changed["REST_FRAMEWORK"])
    check_import_lists(changed)
    check_handlers(namespace)
    system_checks(namespace, changed, before, assigned_names(sources))
    return changed
