"""Runs a Metacontroller example's hook server (`sync.py`, which serves on a port of its Pod)
unchanged, on the loopback port given instead:

    python tests/support/hook_launcher.py PORT path/to/sync.py ['{"CERT_DIR": "/tmp/certs"}']

The optional JSON names module constants that stand for a Pod's mounts (paths) and the local
paths to use; the script then runs as a module whose `main()` is called after they are set.
"""

from __future__ import annotations

import http.server
import json
import runpy
import sys
from pathlib import Path
from typing import Any

PORT = int(sys.argv[1])
SCRIPT = sys.argv[2]
OVERRIDES: dict[str, str] = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}


class _OnLoopback(http.server.HTTPServer):
    def __init__(self, address: Any, handler: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(("127.0.0.1", PORT), handler, *args, **kwargs)


http.server.HTTPServer = _OnLoopback  # type: ignore[misc,assignment]
sys.argv = [SCRIPT]
if not OVERRIDES:
    runpy.run_path(SCRIPT, run_name="__main__")
else:
    namespace: dict[str, Any] = {"__name__": "hook", "__file__": SCRIPT}
    exec(compile(Path(SCRIPT).read_text(), SCRIPT, "exec"), namespace)
    for name, value in OVERRIDES.items():
        namespace[name] = Path(value)
    namespace["main"]()
