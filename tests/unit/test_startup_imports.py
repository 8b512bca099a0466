"""What a run imports before it does anything: only what it uses (start-up is most of a short
run's CPU). A `--local` run of command hooks loads no pydantic (typer's option adapters), no
HTTP client, no rich off a terminal, no report format it does not write and no controller kind
it does not run; a live
run loads the kubernetes client's configuration and REST parts, not the rest of the client."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.support.cli import unreachable_kubeconfig

ROOT = Path(__file__).resolve().parents[2]

# Runs the command line given after the probe's own arguments, then prints the modules of
# `watched` that it loaded; with `--at-connect`, it stops at the first connection the run opens.
PROBE = """
import os, runpy, sys
watched = sys.argv[1].split(',')
at_connect = sys.argv[2] == '--at-connect'

def loaded():
    return sorted(m for m in sys.modules if m in watched or m.split('.')[0] in watched)

def report():
    sys.stderr.write('LOADED %s\\n' % loaded())
    sys.stderr.flush()

if at_connect:
    def hook(event, args):
        if event == 'socket.connect':
            report()
            os._exit(0)
    sys.addaudithook(hook)
sys.argv = ['reconcile', *sys.argv[3:]]
try:
    runpy.run_module('reconcile', run_name='__main__')
except SystemExit:
    pass
report()
"""


def loaded_by(args: list[str], watched: list[str], *, at_connect: bool = False) -> list[str]:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            ",".join(watched),
            "--at-connect" if at_connect else "--to-the-end",
            *args,
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("LOADED ")]
    assert lines, done.stderr[-2000:]
    return list(ast.literal_eval(lines[0].removeprefix("LOADED ")))


def test_a_local_run_of_command_hooks_loads_only_what_it_uses() -> None:
    unused = [
        "pydantic",  # typer's option adapters (cli/conversion.py converts without them)
        "kubernetes",
        "urllib3",  # the webhook transport
        "ssl",
        "reconcile.hooks.webhook",
        "rich",  # a progress bar and a coloured report only: on a terminal
        "reconcile.gitsource",
        "reconcile.report.json_report",
        "reconcile.report.markdown",
        "reconcile.engine.decorator",
        "reconcile.engine.map_controller",
        "reconcile.engine.composite.rollout",
        "reconcile.engine.composite.revisions",
    ]
    args = ["--local", "examples/hello-world", "--dry-run", "--workers", "2", "--verbose"]
    assert loaded_by(args, unused) == []


def test_a_live_run_loads_the_client_parts_it_uses_and_no_in_process_cluster(
    tmp_path: Path,
) -> None:
    kubeconfig = unreachable_kubeconfig(tmp_path)
    unused = [
        "kubernetes.dynamic",
        "kubernetes.stream",
        "kubernetes.watch",
        "kubernetes.informer",
        "kubernetes.leaderelection",
        "jsonschema",
        "websocket",
        "reconcile.cluster.memory",
        "reconcile.files.seed",
        # the client's kubeconfig loader and what it brings, for a token kubeconfig
        "kubernetes.config",
        "requests",
        "oauthlib",
        "pydantic",
        "dateutil",
    ]
    args = ["--kubeconfig", str(kubeconfig), "--report-format", "json"]
    assert loaded_by(args, unused, at_connect=True) == []
    assert loaded_by(args, ["kubernetes.client"], at_connect=True) == ["kubernetes.client"]


def test_the_kubernetes_package_is_whole_for_whoever_imports_it_after_a_connection(
    tmp_path: Path,
) -> None:
    kubeconfig = unreachable_kubeconfig(tmp_path)
    probe = (
        "import sys\n"
        "from reconcile.cluster.kubeconfig import load_connection\n"
        "load_connection(sys.argv[1])\n"
        "assert 'kubernetes.dynamic' not in sys.modules\n"
        "import kubernetes\n"
        "from kubernetes import watch\n"
        "print(kubernetes.__version__, kubernetes.dynamic.DynamicClient.__name__, watch.Watch)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(kubeconfig)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    version, dynamic_client, _ = done.stdout.split(maxsplit=2)
    assert version[0].isdigit() and dynamic_client == "DynamicClient"


def test_a_run_leaves_its_memory_to_the_process_s_end_uncollected() -> None:
    """What is in memory when a command returns (or exits) is frozen out of the cyclic
    collector: the interpreter's own collection at exit would traverse all of it."""
    probe = (
        "import gc, sys\n"
        "from reconcile.cli.main import main\n"
        "sys.argv = ['reconcile', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(gc.get_freeze_count())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert int(done.stdout.split()[-1]) > 10_000
