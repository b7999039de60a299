"""schemathesis, a property-based API tester, generates requests from the served OpenAPI
document and sends them to a live demo (a separate ``runserver`` process, as
``./scripts/demo`` runs it, DEBUG on), for every operation of both clients, anonymous and
signed in: the app client with a real ``X-Session-Token``, the browser client with the
session cookie and the CSRF cookie echoed in its header (anonymous too, so that the
views, not only the CSRF check, see the requests).

No answer may be a 5xx, and each must be one the document gives: its status, its content
type, its body's schema, and for a problem document a ``code`` the document lists for that
status (``x-codes``). Examples are few and derandomized (the same requests every run),
with no shrinking and no example database: a failure names the operation and the answer.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from requests.adapters import HTTPAdapter
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from testproject.blog.management.commands.seed_demo import DEMO_USERS
from tests.e2e.conftest import DemoServer, GraphiqlAssets, serve_demo

PREFIX = "/api/auth"
#: Examples per operation; OPENAPI_FUZZ_EXAMPLES=50 for a deeper run (minutes).
MAX_EXAMPLES = int(os.environ.get("OPENAPI_FUZZ_EXAMPLES", "5"))
#: Codes that mean this client's session is gone (a generated logout, a sign-in that
#: cycled the key): sign in again before the next request.
SESSION_LOST = {"not_authenticated", "csrf_token_foreign", "csrf_token_mismatch"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    # GraphiQL's files are not needed here: the demo serves every other page without them.
    with serve_demo(tmp_path_factory.mktemp("openapi-demo"), GraphiqlAssets(None)) as server:
        yield server


@pytest.fixture(scope="module")
def api_schema(demo: DemoServer) -> Any:
    return schemathesis.openapi.from_url(f"{demo.url}{PREFIX}/openapi.json")


def documented_problem_code(ctx: Any, response: Any, case: Any) -> bool | None:
    """A problem document's ``code`` is one the document lists for its status."""
    # schemathesis's responses: lowercase header names, a list of values each.
    content_type = response.headers.get("content-type", [""])[0]
    if response.status_code < 400 or "problem+json" not in content_type:
        return None
    documented = case.operation.definition.raw["responses"].get(str(response.status_code), {})
    code = response.json().get("code")
    assert code in documented.get("x-codes", ()), (
        f"{case.method} {case.path}: {response.status_code} {code!r} is not among "
        f"{documented.get('x-codes')}"
    )
    return True


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    documented_problem_code,
]


class SourceAddress(HTTPAdapter):
    """Connects from another loopback address: the test's own sign-ins are not counted
    with the generated wrong passwords that share 127.0.0.1's login throttle."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def from_address(address: str) -> requests.Session:
    session = requests.Session()
    session.mount("http://", SourceAddress(address))
    session.trust_env = False
    return session


@dataclass
class ApiClient:
    """One client's credentials, signed in again whenever a generated request ended its
    session (a logout, a new sign-in, a password change): the next user of the demo's
    seeded ones then, in case the fuzzer changed a password."""

    demo: DemoServer
    client: str
    signed_in: bool
    users: list[Any]
    headers: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    sign_ins: int = 0
    lost: bool = False
    signing_in: requests.Session = field(default_factory=lambda: from_address("127.0.0.2"))

    def url(self, path: str) -> str:
        return f"{self.demo.url}{PREFIX}/{self.client}/v1/{path}"

    def start(self) -> None:
        self.cookies, self.headers = {}, {}
        self.signing_in.cookies.clear()
        if self.client == "app":
            self.headers["X-Session-Token"] = ""
        else:
            # The CSRF cookie from a GET of the browser API, echoed in the header; same
            # origin, as a single-page app's script sends it.
            self.headers["Origin"] = self.demo.url
            self._keep(self.signing_in.get(self.url("session"), timeout=10))
        if not self.signed_in:
            return
        for _turn in range(len(self.users)):
            user = self.users[0]
            answer = self.signing_in.post(
                self.url("auth/login"),
                json={"email": user.email, "password": user.password},
                headers=self.headers,
                cookies=self.cookies,
                timeout=10,
            )
            if answer.status_code == 200 and answer.json()["status"] == "authenticated":
                self._keep(answer)
                self.sign_ins += 1
                return
            # Its password changed by a generated request, or its login throttle spent
            # by generated wrong passwords (reauthenticate): the next user.
            self.users.append(self.users.pop(0))
        if not self.sign_ins:
            pytest.fail(f"no seeded user can sign in ({self.client})")
        # Deep runs only (OPENAPI_FUZZ_EXAMPLES): the rest of the run is anonymous.
        self.signed_in = False
        self.lost = True

    def _keep(self, answer: requests.Response) -> None:
        self.cookies.update(answer.cookies.get_dict())
        if self.client == "app":
            self.headers["X-Session-Token"] = answer.headers.get(
                "X-Session-Token", self.headers["X-Session-Token"]
            )
        elif "csrf_token" in self.cookies:
            self.headers["X-CSRF-Token"] = self.cookies["csrf_token"]

    def after(self, response: Any) -> None:
        if not self.signed_in or response.status_code not in (401, 403):
            return
        if "json" in response.headers.get("content-type", [""])[0]:
            code = response.json().get("code")
            if code in SESSION_LOST:
                self.start()


def _fuzz(operation: Any, call: Callable[[Any], None]) -> None:
    @settings(
        max_examples=MAX_EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @given(case=operation.as_strategy())
    def run(case: Any) -> None:
        call(case)

    run()


@pytest.mark.parametrize("signed_in", [False, True], ids=["anonymous", "signed-in"])
@pytest.mark.parametrize("client", ["browser", "app"])
def test_every_answer_is_one_the_document_gives(
    demo: DemoServer, api_schema: Any, client: str, signed_in: bool
) -> None:
    started = time.monotonic()
    users = list(DEMO_USERS) if client == "browser" else list(reversed(DEMO_USERS))
    credentials = ApiClient(demo, client, signed_in, users)
    credentials.start()

    def call(case: Any) -> None:
        response = case.call_and_validate(
            headers=dict(credentials.headers),
            cookies=dict(credentials.cookies),
            checks=CHECKS,
            timeout=20,
        )
        credentials.after(response)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

    failures = []
    statuses: dict[int, int] = {}
    operations = 0
    for result in api_schema.get_all_operations():
        operation = result.ok()
        if not operation.path.startswith(f"/{client}/"):
            continue
        operations += 1
        try:
            _fuzz(operation, call)
        except (Exception, BaseExceptionGroup) as exc:  # every operation tried, all reported
            failures.append(f"{operation.method.upper()} {operation.path}:\n{exc}")
    assert operations > 20
    assert not failures, "\n\n".join(failures) + f"\n\nserver log:\n{demo.output()[-3000:]}"
    print(
        f"{client} {'signed in' if signed_in else 'anonymous'}: {operations} operations, "
        f"{credentials.sign_ins} sign-ins{' (then lost)' if credentials.lost else ''}, "
        f"{time.monotonic() - started:.1f} s, {statuses}"
    )
