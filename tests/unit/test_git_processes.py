"""The git processes GitPython starts for a checkout, against real repositories and a real
silent server: none is left running when the checkout returns (GitPython's long-lived
`cat-file --batch` processes included), and at the budget's end git is killed with its whole
process group (the HTTP transport helper it started too), in time."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconcile.budget import Budget
from reconcile.gitsource import GitSourceError, checkout
from tests.support.gitrepo import git


def processes_in(cache: Path) -> list[str]:
    """The command lines of live processes whose environment names a repository in `cache`
    (every git process of a checkout has its GIT_DIR there, helpers included)."""
    found = []
    marker = f"GIT_DIR={cache}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "State:\tZ" in status:  # ended, not yet reaped by whoever started it
            continue
        if any(item.startswith(marker) for item in environ.split(b"\0")):
            found.append(command)
    return found


def test_no_git_process_outlives_the_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    for index in range(20):
        (repo / "apps" / f"app{index}.yaml").write_text(f"name: app{index}\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "apps")
    cache = tmp_path / "cache"
    done = checkout(repo.as_uri(), None, cache)
    assert len(list((done.path / "apps").iterdir())) == 20  # read through cat-file --batch
    assert processes_in(cache) == []


@pytest.fixture
def silent_url() -> Iterator[str]:
    """An HTTP server that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/team/repo.git"
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


def test_the_budget_s_end_kills_git_with_its_transport_helper(
    silent_url: str, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    seen: list[list[str]] = []
    finished = threading.Event()

    def look() -> None:  # what runs while git waits on the server
        while not finished.wait(0.05):
            seen.append(processes_in(cache))

    watcher = threading.Thread(target=look, daemon=True)
    watcher.start()
    started = time.monotonic()
    try:
        with pytest.raises(GitSourceError, match=r"stopped, the run's time budget \(2s\)"):
            checkout(silent_url, None, cache, budget=Budget(2.0))
    finally:
        finished.set()
        watcher.join(5)
    assert time.monotonic() - started < 2 + 5
    helpers = [line for lines in seen for line in lines if "remote-http" in line]
    assert helpers, f"git never started its HTTP helper: {seen}"  # what the group kill is for
    assert processes_in(cache) == []


def test_a_command_past_its_timeout_is_killed(silent_url: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    started = time.monotonic()
    with pytest.raises(GitSourceError, match=r"no answer within 1s"):
        checkout(silent_url, None, cache, timeout=1.0)
    assert time.monotonic() - started < 1 + 5
    assert processes_in(cache) == []
    assert os.path.isdir(cache)


class _HalfAnswering(http.server.BaseHTTPRequestHandler):
    """Smart HTTP whose ref listing is the repository's own (git http-backend) and whose
    ls-refs request gets a NAK, then nothing: git's command gives up on its own while its
    remote helper, in its process group and holding its pipes, waits on the server."""

    protocol_version = "HTTP/1.0"
    root = ""

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        environment = {
            **os.environ,
            "GIT_PROJECT_ROOT": self.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": "GET",
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
        }
        answer = subprocess.run(
            ["git", "http-backend"], capture_output=True, env=environment, check=True
        ).stdout
        head, _, body = answer.partition(b"\r\n\r\n")
        self.send_response(200)
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(":")
            if name and name.lower() != "status":
                self.send_header(name.strip(), value.strip())
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-git-upload-pack-result")
        self.end_headers()
        self.wfile.write(b"0008NAK\n")
        self.wfile.flush()
        time.sleep(30)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_helper_left_by_a_command_that_gave_up_is_killed_with_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    (repo / "apps" / "app.yaml").write_text("name: app\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "apps")
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "served" / "repo.git"))
    handler = type("Handler", (_HalfAnswering,), {"root": str(tmp_path / "served")})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    cache = tmp_path / "cache"
    started = time.monotonic()
    try:
        with pytest.raises(GitSourceError):
            url = f"http://127.0.0.1:{server.server_address[1]}/repo.git"
            checkout(url, None, cache, budget=Budget(20.0))
    finally:
        server.shutdown()
        server.server_close()
    assert time.monotonic() - started < 10  # not held until the budget's end, nor for ever
    assert processes_in(cache) == []
