"""server/startup.py and server/command_line.py: every setting ``pysse-relay`` and
``python build.py serve`` can find wrong at start is one line on stderr, ``PROG: what is
wrong: what to do``, exit status 2, nothing on stdout (no banner) and no traceback.

The relay runs as the real command (``python -m pysse.server.relay``) in a subprocess: a
port really in use, a Redis port really closed, and a ``redis`` (or ``uvloop``) import that
really fails, through a ``sitecustomize`` that blocks it (nothing is uninstalled).
``build.py serve`` is tested through the function that makes its start-up errors
(``serve_startup``) and its parser, without building the site (minutes)."""

from __future__ import annotations

import argparse
import errno
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import free_port

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = ["--upstream", "http://127.0.0.1:9/v1"]
HELP = "(pysse-relay --help lists the options)"
OTHER_HOST = "pass --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)"

# Installed as sitecustomize: an import of any module named in PYSSE_BLOCK fails as if the
# package were not installed.
BLOCKER = """
import os, sys

class Blocked:
    names = set(os.environ["PYSSE_BLOCK"].split(","))

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Blocked())
"""


def relay(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``pysse-relay ARGS`` (the module the console script runs): its status and output.
    Every case here fails before listening, so it returns at once (the timeout is for a
    relay that wrongly started serving)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pysse.server.relay", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    return proc.returncode, proc.stdout, proc.stderr


def one_line(message: str) -> tuple[int, str, str]:
    return 2, "", f"pysse-relay: {message}\n"


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port another server listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


@pytest.fixture
def blocked(tmp_path: Path) -> dict[str, str]:
    """The environment of a process where ``import redis`` and ``import uvloop`` fail."""
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path, "PYSSE_BLOCK": "redis,uvloop"}


# -- pysse-relay, as a process ---------------------------------------------------------------


def test_store_redis_without_the_redis_package(blocked: dict[str, str]) -> None:
    got = relay(*UPSTREAM, "--store", "redis://127.0.0.1:6379/0", env=blocked)
    assert got == one_line("--store redis:// needs the redis package: pip install 'pysse[redis]'")


def test_the_blocker_blocks_only_what_it_names(blocked: dict[str, str]) -> None:
    """The control for the test above: in the same environment the relay runs (and the
    import really fails, from the finder)."""
    code = "import pysse.server.relay\ntry:\n import redis\nexcept ImportError as e:\n print(e)"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **blocked}
    )
    assert (proc.returncode, proc.stdout) == (0, "No module named 'redis'\n")


def test_loop_uvloop_without_the_uvloop_package(blocked: dict[str, str]) -> None:
    got = relay(*UPSTREAM, "--loop", "uvloop", env=blocked)
    assert got == one_line("--loop uvloop needs the uvloop package: pip install uvloop")


def test_a_port_in_use(busy_port: int) -> None:
    assert relay(*UPSTREAM, "--port", str(busy_port)) == one_line(
        f"port {busy_port} is in use (another pysse-relay or build.py serve?): pass --port N "
        "or stop the other server"
    )


def test_an_unreachable_redis_at_start() -> None:
    closed = free_port()
    got = relay(*UPSTREAM, "--store", f"redis://127.0.0.1:{closed}/0")
    assert got == one_line(
        f"--store redis://127.0.0.1:{closed}/0: cannot reach Redis (Connection refused): "
        "start redis-server there, or correct the host and port in --store"
    )


def test_the_redis_password_is_never_printed() -> None:
    closed = free_port()
    status, out, err = relay(*UPSTREAM, "--store", f"redis://:hunter2@127.0.0.1:{closed}/0")
    assert (status, out) == (2, "")
    assert err.startswith(f"pysse-relay: --store redis://***@127.0.0.1:{closed}/0: cannot reach")
    assert "hunter2" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--store", "postgres://db/0"],
            "--store 'postgres://db/0': expected 'memory' or a URL like redis://127.0.0.1:6379/0",
        ),
        (
            ["--store", "redis://127.0.0.1:notaport/0"],
            "--store redis://127.0.0.1:notaport/0: Port could not be cast to integer value as "
            "'notaport'; give a URL like redis://127.0.0.1:6379/0",
        ),
        (
            ["--api-key-env", "PYSSE_NO_SUCH_KEY"],
            "the environment variable PYSSE_NO_SUCH_KEY is not set: export it with the "
            "upstream's API key, or leave out --api-key-env for a keyless upstream",
        ),
        (
            ["--secret-env", "PYSSE_NO_SUCH_SECRET"],
            "the environment variable PYSSE_NO_SUCH_SECRET is not set: export the shared "
            "secret the page must send, or leave out --secret-env",
        ),
        (
            ["--format", "nope"],
            "argument --format: invalid choice: 'nope' (choose from 'openai-chat', "
            f"'openai-responses', 'anthropic', 'gemini') {HELP}",
        ),
        (
            ["--allow-origin", "chat.example"],
            "--allow-origin 'chat.example' is not an origin like https://chat.example",
        ),
        (
            ["--allow-origin", "https://chat.example:99999"],
            "--allow-origin 'https://chat.example:99999' is not an origin: its port is not 1 "
            "to 65535",
        ),
        (
            ["--host", "192.0.2.1"],
            f"--host 192.0.2.1 is not an address of this machine; {OTHER_HOST}",
        ),
        (["--host", "no..such"], f"--host no..such: no such host name or address; {OTHER_HOST}"),
        (
            ["--port", "70000"],
            f"argument --port: expected a port number from 1 to 65535, not 70000 {HELP}",
        ),
        (
            ["--port", "http"],
            f"argument --port: expected a port number from 1 to 65535, not 'http' {HELP}",
        ),
        (
            ["--ca-bundle", "/no/such/ca.pem"],
            "--ca-bundle /no/such/ca.pem: cannot be read (No such file or directory): give the "
            "PEM file of the authorities that signed the upstream's certificate",
        ),
        (
            ["--ca-bundle", str(ROOT / "pyproject.toml")],
            f"--ca-bundle {ROOT / 'pyproject.toml'}: no certificate in it "
            "(NO_CERTIFICATE_OR_CRL_FOUND): give the PEM file of the authorities that signed "
            "the upstream's certificate",
        ),
        (
            ["--max-connections", "0"],
            f"argument --max-connections: expected a whole number above 0, not 0 {HELP}",
        ),
        (
            ["--allow-header", "x-user-id: 7"],
            "argument --allow-header: 'x-user-id: 7' is not a header name: give the name "
            f"alone, e.g. x-user-id {HELP}",
        ),
        (
            ["--max-body", "1MB"],
            f"argument --max-body: expected a whole number above 0, not '1MB' {HELP}",
        ),
        (
            ["--header-timeout", "-1"],
            f"argument --header-timeout: expected a number of seconds above 0, not -1 {HELP}",
        ),
        (
            ["--answer-ttl", "nan"],
            f"argument --answer-ttl: expected a number of seconds above 0, not nan {HELP}",
        ),
        (
            ["--metrics-every", "-5"],
            f"argument --metrics-every: expected a number of seconds, 0 for never, not -5 {HELP}",
        ),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "says",
)
def test_a_wrong_setting_is_one_line_naming_it_and_the_fix(args: list[str], message: str) -> None:
    env = {"PYSSE_NO_SUCH_KEY": "", "PYSSE_NO_SUCH_SECRET": ""}
    assert relay(*UPSTREAM, *args, env=env) == one_line(message)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], f"the following arguments are required: --upstream {HELP}"),
        (
            ["--upstream", "api.openai.com/v1"],
            "--upstream 'api.openai.com/v1' is not a URL: give the provider's base URL, "
            "e.g. https://api.openai.com/v1",
        ),
    ],
)
def test_a_missing_or_wrong_upstream_is_one_line(args: list[str], message: str) -> None:
    assert relay(*args) == one_line(message)


# -- the pieces, in this process --------------------------------------------------------------


def test_listen_says_which_port_needs_privileges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ports below 1024 for a user without the right: this suite may run as root, where no
    port is refused, so the refusal is made by ``bind`` itself."""
    from pysse.errors import ConfigError
    from pysse.server.serve import listen

    def refuse(self: socket.socket, address: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(socket.socket, "bind", refuse)
    with pytest.raises(ConfigError) as caught:
        listen("127.0.0.1", 80)
    assert str(caught.value) == (
        "port 80 needs privileges this user does not have (ports below 1024 usually do): "
        "pass --port N with N from 1024 to 65535"
    )


def test_listen_holds_the_port_it_returns() -> None:
    from pysse.server.serve import listen

    sockets = listen("localhost", free_port())
    try:
        families = {s.family for s in sockets}
        assert socket.AF_INET in families  # and ::1 too where the machine has IPv6
        with socket.create_connection(sockets[0].getsockname()[:2], timeout=5):
            pass  # listening already: the kernel accepts before the server runs
    finally:
        for s in sockets:
            s.close()


def test_the_store_url_is_printed_without_its_password() -> None:
    from pysse.server.store import printable_store

    assert printable_store("redis://:pw@h:6379/0") == "redis://***@h:6379/0"
    assert printable_store("rediss://user:pw@h/0?password=x&db=1") == (
        "rediss://***@h/0?password=***&db=1"
    )
    assert printable_store("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


# -- build.py serve ---------------------------------------------------------------------------


def serve_args(*argv: str) -> argparse.Namespace:
    import build

    return build.parser().parse_args(["serve", *argv])


def serve_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line ``build.py serve ARGV`` says before building anything, checked to be
    exactly one line with status 2."""
    import build

    with pytest.raises(SystemExit) as stopped:
        build.serve_startup(serve_args(*argv))
    out, err = capsys.readouterr()
    assert (stopped.value.code, out, err.count("\n")) == (2, "", 1), err
    return err


def test_build_serve_port_in_use(capsys: pytest.CaptureFixture[str], busy_port: int) -> None:
    assert serve_error(capsys, "--port", str(busy_port)) == (
        f"build.py serve: port {busy_port} is in use (another pysse-relay or build.py serve?): "
        "pass --port N or stop the other server\n"
    )


def test_build_serve_bad_host(capsys: pytest.CaptureFixture[str]) -> None:
    assert serve_error(capsys, "--host", "192.0.2.1", "--port", str(free_port())) == (
        f"build.py serve: --host 192.0.2.1 is not an address of this machine; {OTHER_HOST}\n"
    )


def test_build_serve_relay_settings(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYSSE_NO_SUCH_KEY", raising=False)
    port = str(free_port())
    assert serve_error(capsys, *UPSTREAM, "--api-key-env", "PYSSE_NO_SUCH_KEY", "--port", port) == (
        "build.py serve: the environment variable PYSSE_NO_SUCH_KEY is not set: export it "
        "with the upstream's API key, or leave out --api-key-env for a keyless upstream\n"
    )
    closed = free_port()
    store = f"redis://127.0.0.1:{closed}/0"
    assert serve_error(capsys, *UPSTREAM, "--store", store, "--port", port) == (
        f"build.py serve: --store {store}: cannot reach Redis (Connection refused): start "
        "redis-server there, or correct the host and port in --store\n"
    )


def test_build_serve_wrong_options_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in [
        (["--format", "nope"], "argument --format: invalid choice: 'nope' (choose from"),
        (["--port", "0"], "argument --port: expected a port number from 1 to 65535, not 0"),
    ]:
        with pytest.raises(SystemExit) as stopped:
            serve_args(*argv)
        out, err = capsys.readouterr()
        assert stopped.value.code == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith(f"build.py serve: {message}")
        assert err.endswith("(build.py serve --help lists the options)\n")


def test_build_serve_starts_when_nothing_is_wrong() -> None:
    """The control: the same function with good settings hands over a listening socket
    on the port asked for, and the relay made from the options."""
    import build

    port = free_port()
    start = build.serve_startup(serve_args(*UPSTREAM, "--port", str(port)))
    try:
        assert [s.getsockname()[1] for s in start.sockets] == [port]
        assert start.relay.upstream == "http://127.0.0.1:9/v1"
        assert start.forwarder.answers.store.kind == "memory"
    finally:
        for s in start.sockets:
            s.close()
