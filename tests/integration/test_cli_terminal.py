"""On a terminal the command shows a progress bar and colours its report; piped, neither."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from tests.support.examples import EXAMPLES

ARGS = [sys.executable, "-m", "reconcile", "--local", str(EXAMPLES / "indexed-job")]


def read_all(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def test_progress_bar_and_colour_on_a_terminal(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    process = subprocess.Popen(
        ARGS, stdout=follower, stderr=follower, stdin=subprocess.DEVNULL, cwd=tmp_path, env=env
    )
    os.close(follower)
    output = read_all(leader)
    os.close(leader)
    assert process.wait(timeout=60) == 0
    # The bar: the controller's name and its parents done out of the total (one IndexedJob).
    assert re.search(rb"indexedjob-controller .*[01]/1", output)
    assert b"\x1b[" in output  # ANSI escapes


def test_no_progress_bar_or_colour_when_piped(tmp_path: Path) -> None:
    result = subprocess.run(ARGS, capture_output=True, cwd=tmp_path, check=False)
    assert result.returncode == 0
    assert b"\x1b[" not in result.stdout + result.stderr
    assert not re.search(rb"[01]/1", result.stderr)
