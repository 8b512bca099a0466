"""Credentials and Secret bytes in free text, through the real command on both backends: a
password in a webhook URL or a Pushgateway URL reaches no report, log, metric or Event (and the
Pushgateway gets it as basic auth); a Secret value split by the cut of a hook's stderr excerpt
leaves no piece behind; a value's JSON-escaped forms are scrubbed like the value."""

from __future__ import annotations

import base64
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.hookserver import serve
from tests.support.vault import Vault

WEBHOOK_PASSWORD = "w3bh00k-PASSW0RD-e81c"
GATEWAY_PASSWORD = "g4teway-PASSW0RD-5d2a"


def outputs(vault: Vault, done: Any, out: Path | None) -> dict[str, str]:
    """Every place text leaves the run: stdout, the log, the report files, the metrics file,
    the Events (live; --local keeps none). The output directory is the cluster's state: the
    controller objects there hold their URLs as written, as the cluster does."""
    found = {"stdout": done.stdout, "log": done.stderr}
    for path in [*sorted(vault.directory.glob("report.*")), vault.directory / "metrics.prom"]:
        if path.is_file():
            found[path.name] = path.read_text()
    if out is not None:
        assert (out / ".reconcile-output").is_file() or done.returncode != 0
    if vault.backend is not None:
        for event in vault.events():
            found[f"Event {event['metadata']['name']}"] = json.dumps(event)
    return found


def pieces(value: str, size: int = 6) -> list[str]:
    return [value[i : i + size] for i in range(len(value) - size + 1)]


def assert_nowhere(value: str, texts: dict[str, str]) -> None:
    for where, text in texts.items():
        for piece in pieces(value):
            assert piece not in text, f"{piece!r} of a credential leaked into {where}"


def run_args(vault: Vault) -> tuple[list[str], Path | None]:
    args = [
        "--log-level",
        "debug",
        "--report-file",
        f"json:{vault.directory / 'report.json'}",
        "--report-file",
        f"markdown:{vault.directory / 'report.md'}",
        "--report-file",
        f"text:{vault.directory / 'report.txt'}",
        "--metrics-file",
        str(vault.directory / "metrics.prom"),
    ]
    if vault.backend is None:
        out = vault.directory / "out"
        return [*args, "--output-dir", str(out)], out
    return args, None


@pytest.mark.parametrize("answer", [200, 500, 401])
def test_a_password_in_a_webhook_url_is_used_and_shown_nowhere(vault: Vault, answer: int) -> None:
    def handler(request: dict[str, Any]) -> Any:
        return (answer, {"status": {}, "children": []}) if answer != 200 else {"children": []}

    vault.parent("hooked")
    vault.write()
    with serve(handler) as server:
        url = server.url.replace("http://", f"http://hooker:{WEBHOOK_PASSWORD}@")
        controller = vault.controller()
        controller["spec"]["hooks"] = {"sync": {"webhook": {"url": url, "timeout": "5s"}}}
        vault.controller_path.write_text(yaml.safe_dump(controller))
        args, out = run_args(vault)
        done = vault.run(*args)
        seen = server.authorizations
    assert done.returncode == (0 if answer == 200 else 1), done.stderr[-2000:]
    basic = base64.b64encode(f"hooker:{WEBHOOK_PASSWORD}".encode()).decode()
    assert seen and all(h == f"Basic {basic}" for h in seen)  # sent as basic auth
    texts = outputs(vault, done, out)
    assert "hooker:<redacted>@127.0.0.1" in texts["report.json"]
    assert_nowhere(WEBHOOK_PASSWORD, texts)
    assert_nowhere(basic, texts)


class _Gateway(http.server.ThreadingHTTPServer):
    """A Pushgateway's push endpoint that asks for basic auth (401 without it)."""

    def __init__(self, expected: str) -> None:
        self.expected = expected
        self.pushes: list[bytes] = []
        super().__init__(("127.0.0.1", 0), _GatewayHandler)


class _GatewayHandler(http.server.BaseHTTPRequestHandler):
    server: _Gateway

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Authorization") != self.server.expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="pushgateway"')
            self.end_headers()
            return
        self.server.pushes.append(body)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def gateway() -> Iterator[_Gateway]:
    basic = base64.b64encode(f"pusher:{GATEWAY_PASSWORD}".encode()).decode()
    server = _Gateway(f"Basic {basic}")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("password", [GATEWAY_PASSWORD, "wrong-PASSW0RD-77"])
def test_a_password_in_the_pushgateway_url_is_basic_auth_and_shown_nowhere(
    vault: Vault, gateway: _Gateway, password: str
) -> None:
    vault.parent("pushed")
    vault.write()
    port = gateway.server_address[1]
    args, out = run_args(vault)
    url = f"http://pusher:{password}@127.0.0.1:{port}"
    done = vault.run(*args, "--metrics-pushgateway", url)
    texts = outputs(vault, done, out)
    if password == GATEWAY_PASSWORD:
        assert done.returncode == 0, done.stderr[-2000:]
        assert len(gateway.pushes) == 1 and b"reconcile_run_exit_code" in gateway.pushes[0]
    else:
        assert done.returncode == 1
        assert gateway.pushes == []
        assert "could not write the metrics: --metrics-pushgateway" in done.stderr
        assert f"http://127.0.0.1:{port}" in done.stderr
    assert_nowhere(password, texts)


SPLIT_SECRET = "Zq8vXkWm3pRJt6yLcHn2bFdKs9gTaQv"


@pytest.mark.parametrize("shift", [0, 3, 11, 17, 30])
def test_a_secret_split_by_the_stderr_excerpt_leaves_no_piece(vault: Vault, shift: int) -> None:
    """The excerpt keeps stderr's last 999 characters: the Secret's value is placed so that
    the cut falls inside it, `shift` characters from its end."""
    last = "\nfatal: the vault is sealed"
    after = 999 - shift - len(last)
    vault.parent("leaky", "long-stderr", secret=SPLIT_SECRET, after=after)
    vault.write()
    args, out = run_args(vault)
    done = vault.run(*args)
    assert done.returncode == 1, done.stderr[-2000:]
    texts = outputs(vault, done, out)
    assert "fatal: the vault is sealed" in texts["report.json"]
    for where, text in texts.items():
        for piece in pieces(SPLIT_SECRET, 4):
            assert piece not in text.replace("<redacted>", ""), f"{piece!r} leaked into {where}"


ESCAPED_SECRET = 'qu"ote\\back-sl4sh/ünï-SECRET'


def test_the_json_escaped_forms_of_a_secret_are_scrubbed(vault: Vault) -> None:
    vault.parent("leaky", "almost-json", secret=ESCAPED_SECRET)
    vault.write()
    args, out = run_args(vault)
    done = vault.run(*args)
    assert done.returncode == 1, done.stderr[-2000:]
    texts = outputs(vault, done, out)
    once = json.dumps(ESCAPED_SECRET)[1:-1]
    forms = {
        ESCAPED_SECRET,
        once,
        json.dumps(ESCAPED_SECRET, ensure_ascii=False)[1:-1],
        json.dumps(once)[1:-1],
    }
    for where, text in texts.items():
        for form in forms:
            assert form not in text, f"the form {form!r} leaked into {where}"
        assert "back-sl4sh" not in text, where
