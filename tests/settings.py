"""Test settings: the demo project's, with the test apps added."""

from testproject.settings import *  # noqa: F403

DEBUG = False
# Several tests log in/out many times; messages would only add noise.
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "CRITICAL"}}
