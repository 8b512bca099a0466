"""A real Pushgateway (Debian's prometheus-pushgateway, installed by scripts/test), one per
test, keeping nothing on disk: Debian's build persists to /var/lib/prometheus by default, and
one test's pushes must not show up in the next one's gateway."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def pushgateway() -> Iterator[str]:
    binary = shutil.which("prometheus-pushgateway")
    assert binary, "prometheus-pushgateway is missing: scripts/install-test-tools.sh installs it"
    port = free_port()
    process = subprocess.Popen(
        [binary, f"--web.listen-address=127.0.0.1:{port}", "--persistence.file="],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{url}/-/ready", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(10)
