"""Runs a Metacontroller example's hook server (`sync.py`, which serves on port 80 of its Pod)
unchanged, on the loopback port given instead:

    python tests/support/hook_launcher.py PORT path/to/sync.py
"""

from __future__ import annotations

import http.server
import runpy
import sys
from typing import Any

PORT = int(sys.argv[1])
SCRIPT = sys.argv[2]


class _OnLoopback(http.server.HTTPServer):
    def __init__(self, address: Any, handler: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(("127.0.0.1", PORT), handler, *args, **kwargs)


http.server.HTTPServer = _OnLoopback  # type: ignore[misc,assignment]
sys.argv = [SCRIPT]
runpy.run_path(SCRIPT, run_name="__main__")
