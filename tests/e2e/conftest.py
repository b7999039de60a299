"""End-to-end fixtures: the demo served as a user starts it, and a real headless Chromium.

The demo runs as a separate process (``manage.py migrate``, ``seed_demo``, then
``runserver``) on a fresh SQLite file, or on a fresh PostgreSQL database when
``DATABASE_URL`` is set, with GraphiQL's files served from a local copy so that no page
reaches a CDN. Chromium is the system's (``/usr/bin/chromium``), driven by Playwright:
nothing is downloaded at test time.

One server and one browser serve the whole folder (package scope, so both are gone
before the rest of the suite runs); every test gets fresh browser contexts (no cookies
or storage shared between tests). Each step a test records is saved as a screenshot
under ``<artifacts>/e2e/<test name>/NN-step.png`` (``E2E_ARTIFACTS``, else
``artifacts/`` at the repository root), and a failing test also saves the page it failed
on. Missing Node.js/npm (for GraphiQL's files and axe-core), Chromium or Playwright skip
these tests on a developer machine and fail them under ``CI=true``.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pyotp
import pytest

from appframework_graphql.graphiql import LOCAL_FILES
from testproject.prepare import DemoSetupError, demo_environment, prepare_database
from tests.conftest import skip_or_fail_on_ci
from tests.peer_server import PeerServer
from tests.processes import free_port, read_log, stop_process

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture reports it: a skip, or a failure under CI
    expect = None

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parents[1]

#: Where each of GraphiQL's four files is inside ``npm install``'s node_modules.
NPM_FILES: dict[str, str] = {
    "react": "react/umd/react.production.min.js",
    "react_dom": "react-dom/umd/react-dom.production.min.js",
    "graphiql_js": "graphiql/graphiql.min.js",
    "graphiql_css": "graphiql/graphiql.min.css",
}
#: axe-core's browser build, which test_accessibility.py injects into each page.
AXE_FILE = "axe-core/axe.min.js"

#: Without the background-networking switches Chromium keeps calling Google's services,
#: which in a closed network only adds noise and delay.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

START_TIMEOUT = 60.0
#: Playwright's wait for an element or a navigation; generous for a loaded CI machine.
PAGE_TIMEOUT_MS = 20_000

def artifacts_dir() -> Path:
    return Path(os.environ.get("E2E_ARTIFACTS") or REPO_ROOT / "artifacts") / "e2e"


_saved: dict[str, int] = {"screenshots": 0}


# -- GraphiQL's files and axe-core, from the npm registry -----------------------------------
@dataclass
class GraphiqlAssets:
    """The directory GRAPHIQL_ASSETS_DIR names, or None and why there is none."""

    directory: Path | None
    problem: str = ""


@functools.cache
def install_npm_packages() -> str:
    """``npm install`` of package.json unless its files are there (once a process); the
    problem, or "". A node_modules from before a package was added lacks that package's
    file, so it is installed then."""
    modules = E2E_DIR / "node_modules"
    if all((modules / source).is_file() for source in [*NPM_FILES.values(), AXE_FILE]):
        return ""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return "Node.js/npm not installed: GraphiQL's files and axe-core cannot be installed"
    try:
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-package-lock", "--silent"],
            cwd=E2E_DIR,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        return "npm install of GraphiQL's files and axe-core did not finish within 300 s"
    if done.returncode != 0:
        return (
            f"npm install of GraphiQL's files and axe-core failed (status {done.returncode}):\n"
            f"{done.stdout}\n{done.stderr}"
        )
    return ""


@pytest.fixture(scope="package")
def graphiql_assets(tmp_path_factory: pytest.TempPathFactory) -> GraphiqlAssets:
    """The four files GRAPHIQL_ASSETS_DIR names, copied from ``npm install`` of
    package.json (run once; node_modules is kept, and ignored by git). Without them the
    demo still serves every other page: only the GraphiQL test needs them."""
    problem = install_npm_packages()
    if problem:
        return GraphiqlAssets(None, problem)
    target = tmp_path_factory.mktemp("graphiql-assets")
    for key, source in NPM_FILES.items():
        shutil.copyfile(E2E_DIR / "node_modules" / source, target / LOCAL_FILES[key])
    return GraphiqlAssets(target)


@pytest.fixture(scope="package")
def axe_script() -> Path:
    """axe-core's browser build from ``npm install`` of package.json (pinned there), for
    ``page.add_script_tag(path=...)``: the pages load no checker from a CDN."""
    problem = install_npm_packages()
    if problem:
        skip_or_fail_on_ci(problem)
    return E2E_DIR / "node_modules" / AXE_FILE


# -- the demo, as a separate process ---------------------------------------------------------
@dataclass
class DemoServer:
    url: str  # http://127.0.0.1:PORT
    log_path: Path
    process: subprocess.Popen[bytes] = field(repr=False)

    @property
    def localhost(self) -> str:
        """The demo as http://localhost:PORT: browsers refuse passkeys on an IP address,
        and the passkeys' RP id is the host the demo is opened on."""
        return self.url.replace("//127.0.0.1:", "//localhost:")

    def output(self) -> str:
        """What the server printed so far (its request log, tracebacks)."""
        return read_log(self.log_path)

    def stop(self) -> None:
        """Terminate the server and wait for it; safe to call twice."""
        stop_process(self.process)


@contextlib.contextmanager
def fresh_database(tmp: Path) -> Iterator[dict[str, str]]:
    """The database variables of the child: a SQLite file in ``tmp``, or, when
    ``DATABASE_URL`` is set (the PostgreSQL run), a new database ``e2e_<random>`` on that
    server, dropped afterwards."""
    parent_url = os.environ.get("DATABASE_URL")
    if not parent_url:
        yield {"SQLITE_PATH": str(tmp / "demo.sqlite3")}
        return
    try:
        import psycopg
    except ImportError:
        skip_or_fail_on_ci("psycopg is not installed: no PostgreSQL database can be created")
    name = f"e2e_{secrets.token_hex(6)}"
    try:
        with psycopg.connect(parent_url, autocommit=True, connect_timeout=10) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        skip_or_fail_on_ci(f"PostgreSQL at DATABASE_URL is unreachable: {exc}")
    parts = urlsplit(parent_url)
    try:
        yield {"DATABASE_URL": urlunsplit(parts._replace(path=f"/{name}"))}
    finally:
        with psycopg.connect(parent_url, autocommit=True, connect_timeout=10) as admin:
            # FORCE: a connection the server left behind must not keep the database.
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def start_demo(env: dict[str, str], port: int, log_path: Path) -> DemoServer:
    """``manage.py runserver`` on ``port``, once ``/`` answers 200; RuntimeError with the
    server's output when it exits or does not answer within START_TIMEOUT."""
    command = [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
    # A file, not a pipe: nobody reads a pipe once the server is up, and a full one
    # would block the server's request log and so its requests.
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    server = DemoServer(url=f"http://127.0.0.1:{port}", log_path=log_path, process=process)
    deadline = time.monotonic() + START_TIMEOUT
    while not _answers(server.url + "/"):
        if process.poll() is not None:
            raise RuntimeError(
                f"the demo exited with status {process.returncode} before it answered; "
                f"its output:\n{server.output()}"
            )
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(
                f"the demo did not answer within {START_TIMEOUT:.0f} s; its output:\n"
                f"{server.output()}"
            )
        time.sleep(0.1)
    # A session that ends without the fixture's teardown (an interrupted run) must not
    # leave the server listening.
    atexit.register(server.stop)
    return server


@contextlib.contextmanager
def serve_demo(
    tmp: Path, graphiql_assets: GraphiqlAssets, **extra_env: str
) -> Iterator[DemoServer]:
    """The demo as ``scripts/demo`` would run it — migrated, seeded, served (DEBUG=1) —
    with ``extra_env`` on top; its request log copied to the artifacts afterwards."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with fresh_database(tmp) as database:
        env = demo_environment(
            **database,
            APP_SECRET_KEY=secrets.token_urlsafe(50),
            DEBUG="1",
            # seed_demo points the user.registered endpoint at this server's receiver.
            DEMO_BASE_URL=url,
            # This server's outbox, read on /mailbox.
            DEMO_MAILBOX=str(tmp / "mail"),
            **extra_env,
        )
        if graphiql_assets.directory is not None:
            env["GRAPHIQL_ASSETS_DIR"] = str(graphiql_assets.directory)
        try:
            prepare_database(env)
        except DemoSetupError as exc:
            pytest.fail(str(exc))
        server = start_demo(env, port, tmp / "server.log")
        try:
            yield server
        finally:
            server.stop()
            # The request log, next to the screenshots: what the server saw and said.
            folder = artifacts_dir()
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(server.log_path, folder / f"server-{tmp.name}.log")


@pytest.fixture(scope="package")
def demo(
    graphiql_assets: GraphiqlAssets, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DemoServer]:
    """The demo as a user starts it, shared by the browser tests."""
    with serve_demo(tmp_path_factory.mktemp("e2e-demo"), graphiql_assets) as server:
        yield server


# -- another origin: a tiny HTTP server on another port --------------------------------------
class OtherOrigin:
    """Serves ``pages[path]`` as HTML from ``http://127.0.0.1:<another port>``: an origin
    other than the demo's, yet the same site (cookies do not separate ports), so the
    browser sends the demo's cookies with its cross-origin form posts and only the CSRF
    check stands between them and the demo."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        pages = self.pages

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = pages.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return None  # the test's own output is enough

        self.server = PeerServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture(scope="package")
def other_origin() -> Iterator[OtherOrigin]:
    server = OtherOrigin()
    try:
        yield server
    finally:
        server.close()


# -- the browser -------------------------------------------------------------------------------
def chromium_path() -> str | None:
    if os.path.isfile("/usr/bin/chromium"):
        return "/usr/bin/chromium"
    return shutil.which("chromium")


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """Headless Chromium (the system's), one for the whole folder."""
    executable = chromium_path()
    if executable is None:
        skip_or_fail_on_ci("Chromium not installed (/usr/bin/chromium): no browser to test with")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail_on_ci("Playwright for Python is not installed (pip install playwright)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.failed:
        item.stash[_FAILED] = True
    return report


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:100] or "step"


class Steps:
    """``steps(page, "what the page shows")`` saves ``NN-what-the-page-shows.png``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def __call__(self, page: Any, name: str) -> Path:
        self.count += 1
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{self.count:02d}-{_slug(name)}.png"
        page.screenshot(path=str(path), full_page=True)
        _saved["screenshots"] += 1
        return path


@dataclass
class Browsing:
    """A test's browser: ``new_page()`` opens a page in a fresh context (its own cookies)
    on the demo; ``external`` lists every request to another host (all refused), so the
    tests run, and can prove they run, with no network beyond this machine."""

    demo: DemoServer
    steps: Steps
    browser: Any
    pages: list[Any] = field(default_factory=list)
    contexts: list[Any] = field(default_factory=list)
    external: list[str] = field(default_factory=list)

    def new_page(self, **options: Any) -> Any:
        """``options`` are Playwright's ``new_context`` arguments: another ``base_url``
        (``demo.localhost``), a ``storage_state`` (signed in), a ``color_scheme``, a
        ``viewport``."""
        context = self.browser.new_context(**{"base_url": self.demo.url, **options})
        context.set_default_timeout(PAGE_TIMEOUT_MS)
        context.route("**/*", self._only_this_machine)
        self.contexts.append(context)
        page = context.new_page()
        self.pages.append(page)
        return page

    def _only_this_machine(self, route: Any) -> None:
        if urlsplit(route.request.url).hostname in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            self.external.append(route.request.url)
            route.abort("blockedbyclient")

    def close(self) -> None:
        for context in self.contexts:
            with contextlib.suppress(Exception):
                context.close()


@pytest.fixture
def browsing(request: pytest.FixtureRequest, browser: Any, demo: DemoServer) -> Iterator[Browsing]:
    # `browser` first: without Chromium the test stops before the demo is started.
    folder = artifacts_dir() / _slug(request.node.name)
    # A rerun's screenshots replace the last run's, never mix with them.
    shutil.rmtree(folder, ignore_errors=True)
    session = Browsing(demo=demo, steps=Steps(folder), browser=browser)
    try:
        yield session
    finally:
        if request.node.stash.get(_FAILED, False):
            for page in session.pages:
                if not page.is_closed():
                    with contextlib.suppress(Exception):
                        session.steps(page, f"failure-{page.url}")
        session.close()


@pytest.fixture
def new_page(browsing: Browsing) -> Callable[[], Any]:
    return browsing.new_page


@pytest.fixture
def page(browsing: Browsing) -> Any:
    return browsing.new_page()


@pytest.fixture
def steps(browsing: Browsing) -> Steps:
    return browsing.steps


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _saved["screenshots"]:
        terminalreporter.write_sep(
            "-", f"end-to-end screenshots ({_saved['screenshots']}): {artifacts_dir()}"
        )


# -- helpers the tests share -------------------------------------------------------------------
def log_in(page: Any, email: str, password: str) -> None:
    """The /login form, as a user fills it in; returns on the page it redirects to."""
    page.goto("/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()


def form_token(page: Any, form: str) -> str:
    """The CSRF token field of ``form`` (a selector) on the current page."""
    value = page.eval_on_selector(
        form,
        "f => (f.querySelector('input[name=_token], input[name=csrfmiddlewaretoken]') || {}).value",
    )
    assert isinstance(value, str) and value, f"no CSRF token field in {form}"
    return value


#: A base32 TOTP secret as /account/mfa shows it.
SECRET = re.compile(r"^[A-Z2-7]{16,}=*$")
STEP = 30  # seconds per TOTP code


def sign_up(page: Any, steps: Steps, email: str = "", *, site: str = "") -> tuple[str, str]:
    """A new account through /signup (``email``, else a random one), its address
    confirmed with the link the demo mailed (read on /mailbox); returns (email,
    password), signed in. ``site``: another origin of the same demo (localhost)."""
    email = email or f"e2e-{secrets.token_hex(4)}@example.com"
    password = f"e2e-{secrets.token_urlsafe(12)}"
    page.goto(f"{site}/signup")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    steps(page, "signup form")
    with page.expect_navigation():
        page.get_by_role("button", name="Create the account").click()
    expect(page.get_by_role("heading", name="Check your inbox")).to_be_visible()
    page.goto(f"{site}/mailbox")
    mail = page.locator("article.mail", has_text=email).first
    with page.expect_navigation():
        mail.locator("a[href*='/email/confirm/']").click()
    steps(page, "confirm the address")
    with page.expect_navigation():
        page.get_by_role("button", name="Confirm").click()
    expect(page.locator("nav")).to_contain_text(email)
    return email, password


def turn_on_totp(page: Any, steps: Steps) -> tuple[pyotp.TOTP, int, list[str]]:
    """On /account/mfa as the signed-in user: QR code, confirm, recovery codes. Returns
    the authenticator, the 30-second step the confirming code spent and the codes."""
    page.goto("/account/mfa")
    totp_row = page.locator("li", has_text="Authenticator app")
    expect(totp_row).to_contain_text("Off")
    steps(page, "mfa off")
    with page.expect_navigation():
        totp_row.get_by_role("link", name="Turn on").click()
    expect(page.locator("svg").first).to_be_visible()  # the QR code
    secrets_shown = [t.strip() for t in page.locator("code").all_inner_texts()]
    secret = next(t for t in secrets_shown if SECRET.match(t))
    steps(page, "mfa enrol QR code and secret")

    totp = pyotp.TOTP(secret)
    confirm_step = int(time.time()) // STEP
    page.fill("input[name=code]", totp.at(confirm_step * STEP))
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_text("recovery codes are shown")).to_be_visible()
    recovery = page.locator("pre").inner_text().split()
    assert len(recovery) >= 5, recovery
    steps(page, "mfa on recovery codes")
    return totp, confirm_step, recovery


def virtual_authenticator(page: Any) -> tuple[Any, str]:
    """A platform authenticator with resident keys and user verification (a phone or a
    laptop's fingerprint reader), answering without a person."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    added = cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    return cdp, str(added["authenticatorId"])


def add_passkey(page: Any, name: str) -> None:
    """On /account/passkeys as the signed-in user, whose page has a virtual authenticator."""
    page.goto("/account/passkeys")
    page.fill("form[data-passkey=register] input[name=name]", name)
    with page.expect_navigation():
        page.get_by_role("button", name="Add a passkey").click()
    expect(page.locator("table.af-passkeys input[name=name]")).to_have_value(name)


# -- account holders for the pages' own checks (accessibility, look) -------------------------
@dataclass
class AccountHolder:
    """A signed-up account and a signed-in browser state for it on ``demo.localhost``
    (Playwright's ``storage_state``: give it to ``new_page`` to open its pages)."""

    email: str
    password: str
    signed_in: dict[str, Any]


@dataclass
class AccountHolders:
    plain: AccountHolder  # a password, nothing else
    protected: AccountHolder  # a password, TOTP on and one passkey


@pytest.fixture(scope="package")
def account_holders(browser: Any, demo: DemoServer) -> Iterator[AccountHolders]:
    """Two accounts made once for every test that looks at the account pages. Signed up
    here rather than seeded: turning TOTP on for a seeded user would change the other
    tests' logins; and two sign-ups, not one a test, because the demo allows five from
    an address in ten minutes (test_accounts and test_passkeys use three)."""
    folder = artifacts_dir() / "account-holders"
    shutil.rmtree(folder, ignore_errors=True)
    session = Browsing(demo=demo, steps=Steps(folder), browser=browser)
    try:
        page = session.new_page(base_url=demo.localhost)
        email, password = sign_up(page, session.steps, "ada@example.com")
        plain = AccountHolder(email, password, page.context.storage_state())

        page = session.new_page(base_url=demo.localhost)
        virtual_authenticator(page)
        email, password = sign_up(page, session.steps, "grace@example.com")
        # Both changes want a recent sign-in: the sign-up's, a moment ago.
        add_passkey(page, "Laptop")
        turn_on_totp(page, session.steps)
        protected = AccountHolder(email, password, page.context.storage_state())
        yield AccountHolders(plain=plain, protected=protected)
    finally:
        session.close()
