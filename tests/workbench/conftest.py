"""Fixtures of the workbench's browser tests: a folder of example models in a temporary
directory, `eqm serve` on it (a free port, the URL from its first line of output), and a
headless Chromium page logged in with the server's token.

Chromium is Debian's (`/usr/bin/chromium`, or EQM_CHROMIUM): Playwright's own browser builds
are not used. Without a browser the tests fail in CI (the CI variable is set) and are skipped
elsewhere, with the reason."""

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SHOTS = REPO / "docs" / "images" / "workbench"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The examples the tests open; each test that writes uses a file of its own.
COPIED = ["decay.eqm", "spring_mass.eqm", "rc_circuit.eqm", "pendulum.eqm"]


def chromium_path():
    for candidate in [os.environ.get("EQM_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"]:
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def eqm_bin():
    return os.environ.get("EQM_BIN", str(REPO / "target" / "debug" / "eqm"))


class Server:
    """`eqm serve` on a temporary folder; `url` carries the token, `base` does not."""

    def __init__(self, root: Path):
        self.root = root
        self.process = subprocess.Popen(
            [eqm_bin(), "serve", str(root), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self._first_line(timeout=60)
        prefix = "EQM workbench: "
        assert line.startswith(prefix), f"unexpected first line of `eqm serve`: {line!r}"
        self.url = line[len(prefix):].strip()
        self.base = self.url.split("?")[0]
        self.token = self.url.split("token=")[1]
        # The rest of stdout and stderr are drained so the server never blocks on a full pipe.
        for stream in (self.process.stdout, self.process.stderr):
            threading.Thread(target=stream.read, daemon=True).start()

    def _first_line(self, timeout):
        result = {}

        def read():
            result["line"] = self.process.stdout.readline()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if "line" not in result or not result["line"]:
            self.process.kill()
            raise AssertionError(f"`eqm serve` printed no address within {timeout} s: {self.process.stderr.read()}")
        return result["line"]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="session")
def chromium():
    path = chromium_path()
    if path is None:
        message = "no Chromium at /usr/bin/chromium (apt-get install chromium, or set EQM_CHROMIUM)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("the Python package playwright is not installed")
        pytest.skip("the Python package playwright is not installed (pip install playwright)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("workbench")
    for name in COPIED:
        shutil.copy(EXAMPLES / name, root / name)
    server = Server(root)
    yield server
    server.stop()


@pytest.fixture
def page(chromium, server):
    context = chromium.new_context(viewport={"width": 1500, "height": 900}, accept_downloads=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(server.url)
    page.wait_for_selector("body[data-ready=true]", timeout=30000)
    yield page
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def screenshot(page, name):
    """Saves the page as docs/images/workbench/NAME.png when EQM_WORKBENCH_SCREENSHOTS is set."""
    if os.environ.get("EQM_WORKBENCH_SCREENSHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"))
