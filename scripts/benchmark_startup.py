"""Start-up: `reconcile` from process start to its first API request, and `reconcile --help`.

The API server is a loopback socket that notes when the first request's bytes arrive (and
answers nothing: what comes after is not start-up). A live run asks the server's release in
the background as it connects: when that is the first request, the time to the next one (the
first about the run's controllers) is noted too. The run is a live one as a CronJob starts
it: a kubeconfig with a token, a controllers file, no cluster controllers. Each figure is the
median of `runs` processes; CPU is the process's user + system time at that moment.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CONTROLLER = """\
apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: {name: bench}
spec:
  parentResource: {apiVersion: bench.example.com/v1, resource: benchparents}
  childResources: [{apiVersion: v1, resource: configmaps}]
  hooks: {sync: {webhook: {url: "http://127.0.0.1:9/sync"}}}
"""


def cpu_seconds(pid: int) -> float:
    """A live process's user + system CPU time so far (the benchmark's too)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_times() -> tuple[int, int]:
    """The machine's CPU time so far in clock ticks, all of it and the part its host gave to
    other machines (`steal` in /proc/stat): (0, 0) where there is no such file."""
    try:
        line = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return 0, 0
    ticks = [int(field) for field in line[1:9]]  # user nice system idle iowait irq softirq steal
    return sum(ticks), ticks[7]


def stolen_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the machine's CPU time between two `machine_times` its host took."""
    total = after[0] - before[0]
    return (after[1] - before[1]) / total if total > 0 else 0.0


@dataclass(frozen=True)
class FirstRequests:
    """Medians: seconds and CPU seconds to the first request (and its line), and seconds to
    the first request about the run's controllers (and its line): the same request unless the
    first is the server's release, which a live run asks in the background as it connects."""

    wall: float
    cpu: float
    line: str
    work_wall: float
    work_line: str


def _request_line(connection: socket.socket) -> str:
    connection.settimeout(5)
    return connection.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace")


def first_request(runs: int) -> FirstRequests:
    with tempfile.TemporaryDirectory(prefix="reconcile-startup-") as tmp, socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.settimeout(10)
        port = server.getsockname()[1]
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                    "users": [{"name": "u", "user": {"token": "startup"}}],
                    "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                    "current-context": "c",
                }
            )
        )
        controllers = Path(tmp) / "controllers.yaml"
        controllers.write_text(CONTROLLER)
        command = [
            sys.executable,
            "-m",
            "reconcile",
            "--kubeconfig",
            str(kubeconfig),
            "--controllers",
            str(controllers),
            "--no-cluster-controllers",
            "--max-duration",
            "10s",
        ]
        walls: list[float] = []
        cpus: list[float] = []
        work_walls: list[float] = []
        line = work_line = ""
        for _ in range(runs):
            started = time.monotonic()
            process = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp
            )
            first, _ = server.accept()
            with first:
                line = _request_line(first)
                walls.append(time.monotonic() - started)
                cpus.append(cpu_seconds(process.pid))
                work_line = line
                if line.startswith("GET /version "):
                    # unanswered: the run goes on meanwhile, and its next request opens a
                    # connection of its own
                    second, _ = server.accept()
                    with second:
                        work_line = _request_line(second)
                work_walls.append(time.monotonic() - started)
            process.kill()
            process.wait()
    return FirstRequests(
        statistics.median(walls),
        statistics.median(cpus),
        line,
        statistics.median(work_walls),
        work_line,
    )


def help_seconds(runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of `reconcile --help`."""
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "reconcile", "--help"], stdout=subprocess.DEVNULL
        )
        _, _, usage = os.wait4(process.pid, 0)
        walls.append(time.monotonic() - started)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def report(runs: int) -> dict[str, float]:
    first = first_request(runs)
    help_wall, help_cpu = help_seconds(runs)
    print(f"start-up, median of {runs} processes each:")
    print(
        f"  process start to the first API request ({first.line}): {first.wall:.3f} s "
        f"(CPU {first.cpu:.2f} s; target <= 0.3 s)"
    )
    print(
        f"  to the first request about its controllers ({first.work_line}): {first.work_wall:.3f} s"
    )
    print(f"  reconcile --help: {help_wall:.3f} s (CPU {help_cpu:.2f} s; target <= 0.15 s)")
    return {
        "first_request": first.wall,
        "first_request_cpu": first.cpu,
        "first_controller_request": first.work_wall,
        "help": help_wall,
    }
