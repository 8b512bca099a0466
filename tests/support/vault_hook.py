"""A command hook for the "Vault" test controller, whose behaviour each parent chooses.

A Vault parent's `spec` says what the sync hook does:

    behaviour: ok            # a Secret (password = spec.secret) and a ConfigMap as children
    behaviour: almost-json   # the ok response, then a debug line on stdout (not JSON any more)
    behaviour: stderr        # the ok response on stdout, the secret on stderr, then exit 3
    behaviour: bad-base64    # a Secret whose `data` value is not base64 (the API server refuses)
    behaviour: sleep         # sleep `spec.seconds`, then ok
    behaviour: detach        # start a process in its own session that keeps stdout and stderr
                             # open for `spec.seconds`, then answer ok and exit
    behaviour: detach-hang   # the same, and then hang (sleep `spec.seconds`) itself
    behaviour: long-stderr   # exit 3 after `spec.noise` bytes of stderr, the secret placed
                             # where the kept tail begins (split by the cut), then a last line
    marker: DIR              # if set, touch DIR/<parent name> when called (tests wait on it)

Standard library only: it runs as `python3 vault_hook.py` from a controller file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def children(parent: dict[str, Any], secret: str) -> list[dict[str, Any]]:
    name = parent["metadata"]["name"]
    labels = {"vault": name}
    return [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{name}-creds", "labels": labels},
            "type": "Opaque",
            "stringData": {"password": secret},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{name}-settings", "labels": labels},
            "data": {"mode": "test"},
        },
    ]


def main() -> int:
    request = json.load(sys.stdin)
    parent = request["parent"]
    spec = parent.get("spec") or {}
    if spec.get("marker"):
        (Path(spec["marker"]) / parent["metadata"]["name"]).touch()
    behaviour = spec.get("behaviour", "ok")
    secret = str(spec.get("secret", ""))
    response: dict[str, Any] = {"status": {"ok": True}, "children": children(parent, secret)}
    if behaviour == "sleep":
        time.sleep(float(spec.get("seconds", 30)))
    elif behaviour == "almost-json":
        sys.stdout.write(json.dumps(response) + "\ndebug: response written\n")
        return 0
    elif behaviour == "stderr":
        json.dump(response, sys.stdout)
        sys.stderr.write(f"connecting to the vault with password={secret}\n")
        return 3
    elif behaviour in ("detach", "detach-hang"):
        # the child inherits stdout and stderr, leaves the hook's process group, and outlives it
        subprocess.Popen(
            ["sleep", str(spec.get("seconds", 300))], start_new_session=True, close_fds=False
        )
        if behaviour == "detach-hang":
            time.sleep(float(spec.get("seconds", 300)))
    elif behaviour == "long-stderr":
        json.dump(response, sys.stdout)
        noise = int(spec.get("noise", 4000))
        before = "x" * (noise - len(secret) // 2)
        sys.stderr.write(f"{before}{secret}" + "y" * 10 + "\nfatal: the vault is sealed\n")
        return 3
    elif behaviour == "bad-base64":
        secret_child = response["children"][0]
        secret_child.pop("stringData")
        secret_child["data"] = {"password": secret}
    json.dump(response, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
