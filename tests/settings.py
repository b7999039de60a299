"""Test settings: the demo project's, with the test apps added."""

from testproject.settings import *  # noqa: F403

DEBUG = False
# Several tests log in/out many times; messages would only add noise.
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "CRITICAL"}}

# The tenancy leak matrix's models (no migrations: the test runner creates their tables).
INSTALLED_APPS = [*INSTALLED_APPS, "tests.tenancy.lab"]  # noqa: F405
# The webhook event names the tests fire, in the catalogue (firing others raises in tests).
INSTALLED_APPS += ["tests.webhooks.events_app"]

# Tests written before tenancy override APPFRAMEWORK wholesale (dropping the demo's
# tenant resolver) and run as the demo's public tenant (tests/conftest.py), so the base
# test settings leave the TenantMiddleware out; tests/tenancy puts the demo's full stack
# back (its ``demo_stack`` fixture).
MIDDLEWARE = [m for m in MIDDLEWARE if not m.endswith(".TenantMiddleware")]  # noqa: F405

# The webhook tests start from the library's defaults (loopback receivers blocked); the
# demo's allowance for its own receiver on 127.0.0.1 is not part of them.
APPFRAMEWORK = {k: v for k, v in APPFRAMEWORK.items() if k != "WEBHOOKS"}  # noqa: F405
