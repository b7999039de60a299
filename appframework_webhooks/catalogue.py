"""The event catalogue: which events exist, what each means and what its ``data`` holds.

Apps declare their events on their ``AppConfig`` (``webhook_events``: a list of
:class:`WebhookEvent`, or the import string of one), as the webhooks provider declares
``user.registered``. The catalogue reads every installed app's list on first use;
``register`` adds one from code (a test, a plugin). Endpoints subscribe to a registered
name, a prefix wildcard (``order.*``) or ``*``; firing a name the catalogue lacks is an
error under ``STRICT_EVENTS`` (DEBUG and tests by default), and logged otherwise.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import mail
from django.utils.module_loading import import_string

from appframework.conf import AUTO, app_settings
from appframework.exceptions import ValidationException

__all__ = [
    "EVENT_NAME",
    "EventCatalogue",
    "WebhookEvent",
    "catalogue",
    "strict_events",
]

logger = logging.getLogger("appframework.webhooks")

#: Visible ASCII, inner spaces allowed: a header value every HTTP client can send.
EVENT_NAME = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?")
#: What a catalogue entry may be named: dotted lower-case words (``order.shipped``).
CATALOGUE_NAME = re.compile(r"[a-z0-9_]+(?:[.-][a-z0-9_]+)*")


@dataclass(frozen=True)
class WebhookEvent:
    """One event of the catalogue: ``name`` (``order.shipped``), a ``description`` for
    the customers who subscribe to it, and the JSON Schema of its ``data``."""

    name: str
    description: str = ""
    schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "schema": dict(self.schema)}


def _declared(value: Any, source: str) -> list[WebhookEvent]:
    if isinstance(value, str):
        value = import_string(value)
    if callable(value) and not isinstance(value, WebhookEvent):
        value = value()
    events = list(value or ())
    for event in events:
        if not isinstance(event, WebhookEvent):
            raise TypeError(f"{source}.webhook_events holds {event!r}, not a WebhookEvent.")
    return events


class EventCatalogue:
    """Every registered event by name. Read from the installed apps on first use."""

    def __init__(self) -> None:
        self._events: dict[str, WebhookEvent] = {}
        self._loaded = False
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        #: Problems found while loading (a bad name, two different events of one
        #: name): check appframework_webhooks.E002 reports them.
        self.problems: list[str] = []

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            for config in apps.get_app_configs():
                declared = getattr(config, "webhook_events", None)
                if declared is None:
                    continue
                try:
                    events = _declared(declared, type(config).__name__)
                except Exception as exc:
                    self.problems.append(f"{config.label}: {exc}")
                    continue
                for event in events:
                    self._add(event, config.label)
            self._loaded = True

    def _add(self, event: WebhookEvent, source: str) -> None:
        if not CATALOGUE_NAME.fullmatch(event.name) or len(event.name) > 255:
            self.problems.append(
                f"{source}: {event.name!r} is not an event name (dotted lower-case words)"
            )
            return
        if not isinstance(event.schema, Mapping):
            self.problems.append(f"{source}: the schema of {event.name!r} is not a JSON object")
            return
        known = self._events.get(event.name)
        if known is not None and known != event:
            self.problems.append(f"{source}: {event.name!r} is registered twice, differently")
            return
        self._events[event.name] = event

    def _ensure(self) -> dict[str, WebhookEvent]:
        if not self._loaded:
            self._load()
        return self._events

    # -- registration -------------------------------------------------------------------
    def register(self, *events: WebhookEvent) -> None:
        """Add events from code; a name already registered with another definition is a
        ``ValueError``."""
        known = self._ensure()
        for event in events:
            if not CATALOGUE_NAME.fullmatch(event.name):
                raise ValueError(f"{event.name!r} is not an event name (dotted lower-case words).")
            if event.name in known and known[event.name] != event:
                raise ValueError(f"{event.name!r} is registered already, differently.")
            known[event.name] = event

    def unregister(self, *names: str) -> None:
        known = self._ensure()
        for name in names:
            known.pop(name, None)

    def reset(self) -> None:
        """Forget everything; the next use reads the installed apps again."""
        with self._lock:
            self._events = {}
            self._loaded = False
            self._warned = set()
            self.problems = []

    # -- lookup -------------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self._ensure()

    def get(self, name: str) -> WebhookEvent | None:
        return self._ensure().get(name)

    def events(self) -> list[WebhookEvent]:
        return sorted(self._ensure().values(), key=lambda event: event.name)

    def names(self) -> list[str]:
        return sorted(self._ensure())

    def matching(self, pattern: str) -> list[str]:
        """The registered names a subscription pattern receives."""
        if pattern == "*":
            return self.names()
        if pattern.endswith(".*"):
            prefix = pattern[:-1]
            return [name for name in self.names() if name.startswith(prefix)]
        return [pattern] if pattern in self else []

    def check_pattern(self, pattern: Any) -> str:
        """``pattern`` when it subscribes to something in the catalogue: a registered
        name, a prefix wildcard over registered names (``order.*``), or ``*``. Raises
        ``ValidationException`` (``unknown_event``) otherwise."""
        if not isinstance(pattern, str) or not EVENT_NAME.fullmatch(pattern):
            raise ValidationException(
                "event: an event name, a prefix wildcard (order.*) or *.", code="invalid_event"
            )
        if pattern != "*" and not self.matching(pattern):
            raise ValidationException(
                f"event: {pattern!r} matches no event of the catalogue.", code="unknown_event"
            )
        return pattern

    def check_fired(self, name: str) -> None:
        """Firing ``name``: fine when registered; otherwise an error under
        STRICT_EVENTS, and a warning (once per name and process) without it."""
        if name in self:
            return
        if strict_events():
            raise ValidationException(
                f"event_name: {name!r} is not in the webhook event catalogue; declare it in "
                "an AppConfig's webhook_events.",
                code="unknown_event",
            )
        if name not in self._warned:
            self._warned.add(name)
            logger.warning("Webhook event %r is not in the event catalogue.", name)

    def as_json(self) -> dict[str, Any]:
        return {"events": [event.as_json() for event in self.events()]}

    def unregistered(self, patterns: Iterable[str]) -> list[str]:
        """The patterns among ``patterns`` that match no registered event."""
        return sorted({p for p in patterns if p != "*" and not self.matching(p)})


#: The process's catalogue.
catalogue = EventCatalogue()


def strict_events() -> bool:
    """STRICT_EVENTS, with AUTO meaning under DEBUG or Django's test environment
    (``setup_test_environment``, which pytest-django and ``manage.py test`` call, gives
    ``django.core.mail`` its ``outbox``)."""
    value = app_settings.WEBHOOKS.STRICT_EVENTS
    if value is AUTO:
        return bool(settings.DEBUG) or hasattr(mail, "outbox")
    return bool(value)
