"""The real `reconcile` command, run as a user runs it: `python -m reconcile` in a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# The test machinery's own variables, which are no option of the command: kept, so that a
# process a test starts (the benchmark, a control plane) finds the caches the suite was given
# rather than build its own.
TEST_VARIABLES = frozenset(
    {
        "RECONCILE_SKIP_CONTROL_PLANE",
        "RECONCILE_CONTROL_PLANE_CACHE",
        "RECONCILE_CURRENT_RELEASE",
        "RECONCILE_HOOK_ENV_CACHE",
        "RECONCILE_KEEP_CONTROL_PLANE_DIR",
    }
)


def command_env(**extra: str) -> dict[str, str]:
    """This checkout importable, and no KUBECONFIG or RECONCILE_* option from the caller: tests
    say which cluster and which options."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("RECONCILE_") or k in TEST_VARIABLES
    }
    env.update(extra)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("KUBECONFIG", None)
    return env


def reconcile(
    *args: str, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real command, as a user runs it; `env`: variables to add (RECONCILE_* options)."""
    return subprocess.run(
        [sys.executable, "-m", "reconcile", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
        env=command_env(**(env or {})),
    )


# `python -m reconcile ARGS`, writing the program's own peak resident memory (VmHWM, KiB) to the
# file named by its first argument when it exits. Not getrusage's ru_maxrss: a child started by
# fork or vfork inherits the high-water mark of the test process's memory until its exec.
MEASURED = """
import re, runpy, sys
out = sys.argv.pop(1)
try:
    runpy.run_module("reconcile", run_name="__main__", alter_sys=True)
finally:
    status = open("/proc/self/status").read()
    open(out, "w").write(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
"""


def measured_command(figure: Path, *args: str) -> list[str]:
    """The argv of the real command whose peak memory (KiB) is written to `figure`."""
    return [sys.executable, "-c", MEASURED, str(figure), *args]


def says_refused(text: str) -> bool:
    """Whether a run's output says the API server refused it (403, Forbidden, either case); the
    milliseconds of a log line's timestamp (`...36.403Z`) or a duration (`"durationMs":403.5`)
    do not count."""
    return "forbidden" in text.lower() or re.search(r"(?<![\d.])403(?!\d|\.\d)", text) is not None


def unreachable_kubeconfig(directory: Path) -> Path:
    """A kubeconfig with a token user whose server nothing listens on (port 1)."""
    kubeconfig = directory / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
    )
    return kubeconfig
