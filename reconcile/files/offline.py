"""kustomize off the network: where a kustomization may name no remote entry, the kustomize
process itself cannot reach one, whatever field names it.

Two ways, tried in this order (`--kustomize-isolation auto`), each checked once per process by
running a probe the same way (the probe must find no network interface but loopback, or be
refused an internet socket):

- a network namespace of its own, with no interface but a loopback that is down: `unshare
  --net` as root (or with CAP_SYS_ADMIN), else `unshare --map-root-user --net` where user
  namespaces are allowed;
- a seccomp filter refusing every socket but a Unix one (`offline_exec.py`), which any process
  may install: it works in a container's default seccomp profile and where user namespaces are
  turned off.

Where neither can be had, kustomize is not run: the directory is an error saying why, unless
`--kustomize-isolation none` runs it on the network. Whichever way it runs, its environment
points every proxy at a closed port of loopback and lets git use no transport, without the
system's or the user's git configuration (no URL rewriting, no credential helper).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from reconcile.config import KustomizeIsolation

PROBE_TIMEOUT = 20.0  # seconds
_HELPER = Path(__file__).with_name("offline_exec.py")
# Exits 0 when this process can reach no network: no internet socket at all, or none but a
# loopback interface.
_PROBE = (
    "import socket, sys\n"
    "try:\n"
    "    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()\n"
    "except OSError:\n"
    "    sys.exit(0)\n"
    "sys.exit(0 if [n for _, n in socket.if_nameindex()] == ['lo'] else 3)\n"
)
_NOWHERE = "http://127.0.0.1:9"  # the discard port, closed; unreachable in a namespace
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY")


class IsolationUnavailable(Exception):
    """kustomize cannot be cut off from the network here; the message says why for each way
    that was tried."""


def offline_environment(base: Mapping[str, str]) -> dict[str, str]:
    """`base` with every proxy pointing nowhere and git allowed no transport."""
    env = {k: v for k, v in base.items() if k.upper() not in (*_PROXIES, "NO_PROXY")}
    for name in _PROXIES:
        env[name] = env[name.lower()] = _NOWHERE
    env.update(
        {
            "GIT_ALLOW_PROTOCOL": "none",  # no transport: file, http(s), ssh, git, ext all refused
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PROTOCOL_FROM_USER": "0",
        }
    )
    return env


def offline_command(
    argv: list[str], mode: KustomizeIsolation, search_path: str
) -> tuple[list[str], str]:
    """`argv` as run off the network under `mode`, and how (for the log). Raises
    IsolationUnavailable when `mode` asks for a way this machine does not allow."""
    if mode is KustomizeIsolation.NONE:
        return argv, "on the network (--kustomize-isolation none)"
    ways = {
        KustomizeIsolation.AUTO: ("namespace", "seccomp"),
        KustomizeIsolation.NAMESPACE: ("namespace",),
        KustomizeIsolation.SECCOMP: ("seccomp",),
    }[mode]
    problems: list[str] = []
    for way in ways:
        prefix, problem = _available(way, search_path)
        if prefix is not None:
            return [*prefix, *argv], way
        problems.append(problem)
    raise IsolationUnavailable("; ".join(problems))


_lock = threading.Lock()
_found: dict[tuple[str, str], tuple[tuple[str, ...] | None, str]] = {}


def _available(way: str, search_path: str) -> tuple[tuple[str, ...] | None, str]:
    """The command prefix of `way` when this machine allows it (else None), and why not."""
    key = (way, search_path)
    with _lock:
        if key not in _found:
            _found[key] = _namespace(search_path) if way == "namespace" else _seccomp()
        return _found[key]


def _namespace(search_path: str) -> tuple[tuple[str, ...] | None, str]:
    unshare = shutil.which("unshare", path=search_path)
    if unshare is None:
        return None, "no network namespace: unshare is not on PATH"
    attempts = [("--net",), ("--map-root-user", "--net")]
    if os.geteuid() != 0:
        attempts.reverse()
    problems = []
    for flags in attempts:
        prefix = (unshare, *flags, "--")
        problem = _probe(prefix)
        if problem is None:
            return prefix, ""
        problems.append(f"unshare {' '.join(flags)}: {problem}")
    return None, "no network namespace (" + "; ".join(problems) + ")"


def _seccomp() -> tuple[tuple[str, ...] | None, str]:
    prefix = (sys.executable, "-I", "-S", str(_HELPER))
    problem = _probe(prefix)
    if problem is None:
        return prefix, ""
    return None, f"no seccomp filter ({problem})"


def _probe(prefix: tuple[str, ...]) -> str | None:
    """None when a probe run under `prefix` finds no network, else what happened."""
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-I", "-S", "-c", _PROBE],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            env={"PATH": os.environ.get("PATH", os.defpath)},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    if done.returncode == 3:
        return "the network was still reachable"
    lines = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
    return lines[-1][:200] if lines else f"exit status {done.returncode}"
