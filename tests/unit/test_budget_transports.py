"""Every wait in the transports is bounded by the run's budget: real loopback HTTP servers, a
TCP port that never answers, real subprocesses. Timing asserts leave slack for a busy machine
but fail when a wait is not bounded (the unbounded waits here are 30 s or more)."""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from kubernetes import client

from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.errors import Unavailable
from reconcile.cluster.live import LiveCluster, LiveOptions
from reconcile.hooks import HookCaller, HookError
from reconcile.hooks.errors import MAX_RESPONSE_BYTES
from reconcile.specs.hooks import CommandSpec, HookSpec, WebhookSpec

SLACK = 3.0  # seconds a busy 2-core machine may add


def webhook_hook(url: str, timeout: float = 10.0) -> HookSpec:
    return HookSpec("sync", "CompositeController t", webhook=WebhookSpec(url=url, timeout=timeout))


def command_hook(code: str, timeout: float = 30.0) -> HookSpec:
    spec = CommandSpec(argv=(sys.executable, "-c", code), timeout=timeout)
    return HookSpec("sync", "CompositeController t", command=spec)


class _Answer(BaseHTTPRequestHandler):
    status = 200
    headers_out: ClassVar[dict[str, str]] = {}
    delay = 0.0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(self.delay)
        self.send_response(self.status)
        for key, value in self.headers_out.items():
            self.send_header(key, value)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def do_GET(self) -> None:
        self.do_POST()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(status: int, headers: dict[str, str], delay: float = 0.0) -> ThreadingHTTPServer:
    handler = type("H", (_Answer,), {"status": status, "headers_out": headers, "delay": delay})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def silent_port() -> Iterator[int]:
    """Accepts connections, never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield sock.getsockname()[1]
    sock.close()


def timed(call: Any) -> tuple[float, BaseException | None]:
    started = time.monotonic()
    try:
        call()
    except (BudgetExhausted, HookError, Unavailable) as exc:
        return time.monotonic() - started, exc
    return time.monotonic() - started, None


# -- webhooks ------------------------------------------------------------------------------


def test_a_retry_after_past_the_budget_fails_at_once() -> None:
    server = serve(429, {"Retry-After": "100000"})
    try:
        caller = HookCaller(budget=Budget(2))
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        elapsed, error = timed(lambda: caller.call(webhook_hook(url, 3), {}))
    finally:
        server.shutdown()
    assert isinstance(error, HookError) and "past the end of the run's time budget" in str(error)
    assert elapsed < 2 + SLACK


def test_a_webhook_that_never_answers_stops_with_the_budget(silent_port: int) -> None:
    caller = HookCaller(budget=Budget(1))
    url = f"http://127.0.0.1:{silent_port}/"
    elapsed, error = timed(lambda: caller.call(webhook_hook(url, 10), {}))
    assert isinstance(error, BudgetExhausted), error
    assert elapsed < 1 + SLACK


def test_a_webhook_timeout_shorter_than_the_budget_is_a_hook_error(silent_port: int) -> None:
    caller = HookCaller(budget=Budget(60))
    url = f"http://127.0.0.1:{silent_port}/"
    elapsed, error = timed(lambda: caller.call(webhook_hook(url, 0.5), {}))
    assert isinstance(error, HookError) and error.reason == "timeout"
    assert elapsed < 0.5 + SLACK


def test_no_call_starts_after_the_budget() -> None:
    budget = Budget(60)
    budget.cancel("SIGTERM")
    with pytest.raises(BudgetExhausted, match="interrupted \\(SIGTERM\\)"):
        HookCaller(budget=budget).call(command_hook("print('{}')"), {})


# -- commands ------------------------------------------------------------------------------


def test_a_hanging_command_is_killed_when_the_budget_ends(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = f"import os,time; open({str(pid_file)!r},'w').write(str(os.getpid())); time.sleep(30)"
    elapsed, error = timed(lambda: HookCaller(budget=Budget(1)).call(command_hook(code), {}))
    assert isinstance(error, BudgetExhausted) and "process group killed" in str(error)
    assert elapsed < 1 + SLACK
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_cancel_from_another_thread_stops_a_running_command() -> None:
    budget = Budget(60)
    threading.Timer(0.3, budget.cancel, args=("SIGTERM",)).start()
    elapsed, error = timed(
        lambda: HookCaller(budget=budget).call(command_hook("import time; time.sleep(30)"), {})
    )
    assert isinstance(error, BudgetExhausted)
    assert elapsed < 0.3 + SLACK


def test_too_much_output_is_refused_with_bounded_memory() -> None:
    code = "import sys\nwhile True: sys.stdout.write('x' * 65536)"
    elapsed, error = timed(lambda: HookCaller().call(command_hook(code), {}))
    assert isinstance(error, HookError) and error.reason == "too-large"
    assert str(MAX_RESPONSE_BYTES // (1024 * 1024)) in str(error)
    assert elapsed < 10 + SLACK


def test_a_flood_on_stderr_keeps_only_its_tail() -> None:
    code = (
        "import sys\nfor _ in range(800): sys.stderr.write('e' * 65536)\n"
        "sys.stderr.write('the last line\\n'); print('{\"status\": {}}')"
    )
    result = HookCaller().call(command_hook(code), {})
    assert result.response == {"status": {}}


def test_a_failing_command_keeps_the_tail_of_stderr() -> None:
    code = "import sys\nsys.stderr.write('x' * 100000 + '\\nboom\\n'); sys.exit(4)"
    with pytest.raises(HookError) as failed:
        HookCaller().call(command_hook(code), {})
    assert failed.value.reason == "exit-status" and "boom" in str(failed.value)


# -- the live backend -----------------------------------------------------------------------


def live(port: int, budget: Budget, **options: Any) -> LiveCluster:
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{port}"
    return LiveCluster(configuration, LiveOptions(qps=0, **options), budget=budget)


def test_an_api_server_that_never_answers_stops_with_the_budget(
    silent_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    cluster = live(silent_port, Budget(2.5), request_timeout=1.0, max_backoff=0.2)
    with caplog.at_level(logging.WARNING, logger="reconcile.cluster.live"):
        elapsed, error = timed(lambda: cluster.discover("v1", "pods"))
    assert isinstance(error, BudgetExhausted | Unavailable), error
    assert elapsed < 2.5 + SLACK
    assert any("no response within 1s; retry 1/" in r.getMessage() for r in caplog.records)


def test_a_retry_after_past_the_budget_ends_the_read_at_once() -> None:
    server = serve(503, {"Retry-After": "1000"})
    try:
        cluster = live(server.server_address[1], Budget(2), max_backoff=2000)
        elapsed, error = timed(lambda: cluster.discover("v1", "pods"))
    finally:
        server.shutdown()
    assert isinstance(error, Unavailable)
    assert elapsed < 1 + SLACK


def test_a_refused_connection_is_not_called_a_timeout() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    cluster = live(port, Budget(10), request_timeout=5.0, max_retries=1, max_backoff=0.1)
    elapsed, error = timed(lambda: cluster.discover("v1", "pods"))
    assert isinstance(error, Unavailable) and "no response within" not in str(error), error
    assert elapsed < 1 + SLACK
