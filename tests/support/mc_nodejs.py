"""Metacontroller's Node.js examples' hook server (`examples/nodejs/server.js`, which loads
`./hooks/*.js` and serves on port 80 of its Pod) run unchanged with `node` on a loopback port,
with an example's `manifest/sync.js` as its one hook."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.controlplane import free_port
from tests.support.mc_examples import EXAMPLES, serving_process

SERVER = EXAMPLES / "nodejs" / "server.js"
PORT_VARIABLE = "RECONCILE_NODE_HOOK_PORT"

# Written next to the copy of server.js: the one change to its Pod is where it listens, so
# `listen(80)` is made to listen on the loopback port of PORT_VARIABLE; server.js itself is
# required as it is.
LAUNCHER = f"""\
'use strict';
const http = require('http');
const port = parseInt(process.env.{PORT_VARIABLE}, 10);
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function () {{
  return listen.call(this, port, '127.0.0.1');
}};
require('./server.js');
"""


def node() -> str:
    """The `node` executable; the test fails, saying so, when there is none (CI has one)."""
    found = shutil.which("node")
    if found is None:
        pytest.fail(
            "`node` (Node.js) is not on PATH: Metacontroller's Node.js examples run their "
            "hooks with it; install Node.js (`node --version` must work)",
            pytrace=False,
        )
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
    if version.returncode != 0:
        pytest.fail(f"`{found} --version` failed: {version.stderr.strip()}", pytrace=False)
    return found


@contextlib.contextmanager
def node_hook_server(example_dir: Path) -> Iterator[str]:
    """`server.js`, unchanged, serving the example's `manifest/sync.js` (unchanged, as
    `hooks/sync.js`, where its Pod mounts it from a ConfigMap) on a loopback port: its base
    URL (`/sync` is the hook)."""
    executable = node()
    with tempfile.TemporaryDirectory(prefix="reconcile-nodejs-") as temporary:
        root = Path(temporary)
        # copies, not symlinks: node resolves a symlinked server.js to its real directory,
        # and server.js requires `./hooks/<name>` relative to itself
        shutil.copyfile(SERVER, root / "server.js")
        (root / "hooks").mkdir()
        shutil.copyfile(example_dir / "manifest" / "sync.js", root / "hooks" / "sync.js")
        (root / "launch.js").write_text(LAUNCHER)
        port = free_port()
        log = root / "server.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [executable, "launch.js"],
                cwd=root,  # server.js reads ./hooks from its working directory
                env={**os.environ, PORT_VARIABLE: str(port)},
                stdout=subprocess.DEVNULL,  # it logs every request body
                stderr=output,
            )

        def failed() -> str:
            return (
                f"node server.js with {example_dir.name}'s sync.js did not start serving on "
                f"port {port}:\n{log.read_text(errors='replace')[-2000:]}"
            )

        with serving_process(process, port, failed):
            yield f"http://127.0.0.1:{port}"
