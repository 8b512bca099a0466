#!/usr/bin/env python3
"""Benchmark: N parents x K ConfigMap children (or, with `--scenario map`, one MapController
parent over N input ConfigMaps), hooks served by a webhook on loopback.

Runs `reconcile` (the real command, in a subprocess) three times per backend:
  1. the cold run: every child is created (pass 1), then the status catches up (pass 2),
     then a converged pass;
  2. the steady-state run: a fresh process whose first pass finds nothing to do;
  3. the same steady-state run with the hook answered in-process from memory (no HTTP), so that
     our own CPU is told apart from the hook's.
and prints, per pass: wall time, API requests by verb, time waiting for the API server (summed
over workers), hook calls and time in hooks, and per run: the reconcile process's CPU time and
peak RSS, and (live) the CPU time of kube-apiserver + etcd.

    .venv/bin/python scripts/benchmark.py --parents 1000 --children 5 [--backend live|memory|both]
    .venv/bin/python scripts/benchmark.py --parents 1000,10000 --backend live --no-compare
    .venv/bin/python scripts/benchmark.py --scenario map --inputs 1000 [--backend ...]
    .venv/bin/python scripts/benchmark.py --scenario command --parents 200,1000 [--baseline REV]

The command scenario runs `reconcile --local` over N parents whose sync hook is a three-line
Python command, once with `protocol: exec` (one process per call) and once with
`protocol: lines` (one process per worker), and prints side by side the cold run's wall time
and the time of its last pass, which finds nothing to do (the converged pass: one hook call
per parent, no writes). `--baseline REV` adds a first column: exec mode with the `reconcile`
package as it was at git revision REV.

With several `--parents` sizes, it ends with the ratios of time, CPU and peak RSS between the
smallest and the largest (linear in parents: the same ratio as the sizes).

It is not a test: it prints figures. The live backend uses the test control plane
(tests/support/controlplane.py), built on first use.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml
from benchmark_startup import (  # scripts/, this script's directory
    cpu_seconds,
    machine_times,
    stolen_share,
)
from benchmark_steps import print_steps, step_figures

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

GROUP = "bench.example.com"
RECONCILE_OPTIONS: list[str] = []  # --qps and --apply-strategy for reconcile; none: its defaults
WORKERS = ["8"]  # reconcile's --workers
NAMESPACE = "bench"


# -- the hook ------------------------------------------------------------------------------------


def sync_hook(children: int) -> Any:
    def sync(request: dict[str, Any]) -> dict[str, Any]:
        name = request["parent"]["metadata"]["name"]
        return {
            "status": {"configMaps": len(request["children"]["ConfigMap.v1"])},
            "children": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"{name}-{i}", "labels": {"bench": name}},
                    "data": {"index": str(i), "parent": name},
                }
                for i in range(children)
            ],
        }

    return sync


def map_hook(request: dict[str, Any]) -> dict[str, Any]:
    source = request["input"]
    return {
        "outputs": [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{source['metadata']['name']}-out"},
                "data": {"copy-of": source["metadata"]["name"], **(source.get("data") or {})},
            }
        ]
    }


def serve_hook(port: int, scenario: str, children: int) -> None:
    from hooklib import serve  # examples/hooklib.py: the examples' webhook server

    if scenario == "map":
        serve({"map": map_hook}, port)
    else:
        serve({"sync": sync_hook(children)}, port)


def run_with_hook_in_process(scenario: str, children: int, args: list[str]) -> None:
    """`reconcile ARGS` in this process, every webhook call answered by the hook function
    directly (no HTTP, no JSON): what is left of the process's CPU is our own."""
    from reconcile.cli.main import main as reconcile_main
    from reconcile.hooks import webhook
    from reconcile.hooks.errors import HookResult

    hook = map_hook if scenario == "map" else sync_hook(children)

    def answer(_self: Any, _hook: Any, _spec: Any, request: dict[str, Any]) -> HookResult:
        return HookResult(hook(request), 0.0)

    webhook.WebhookTransport.call = answer  # type: ignore[method-assign]
    sys.argv = ["reconcile", *args]
    reconcile_main()


def start_hook(scenario: str, children: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve-hook",
            "0",
            "--scenario",
            scenario,
            "--children",
            str(children),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    base = process.stdout.readline().split()[-1].rstrip("/")  # "serving on http://..."
    return process, f"{base}/{'map' if scenario == 'map' else 'sync'}"


# -- command hooks: exec vs lines ------------------------------------------------------------

COMMAND_HOOK = """import json, sys
for line in (sys.stdin if "--lines" in sys.argv else [sys.stdin.read()]):
    print(json.dumps({"status": {"n": 1}, "children": []}), flush=True)
"""


def command_inputs(directory: Path, parents: int, protocol: str) -> None:
    directory.mkdir(parents=True)
    (directory / "hook.py").write_text(COMMAND_HOOK)
    from tests.support.backends import crd_manifest

    crd = crd_manifest(GROUP, "Thing", "things")
    argv = [sys.executable, "hook.py", *(["--lines"] if protocol == "lines" else [])]
    # exec is the default: left unsaid, so a --baseline revision from before `protocol` reads it
    command: dict[str, Any] = {"argv": argv} | (
        {"protocol": protocol} if protocol != "exec" else {}
    )
    controller = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": "things"},
        "spec": {
            "generateSelector": True,
            "parentResource": {"apiVersion": f"{GROUP}/v1", "resource": "things"},
            "hooks": {"sync": {"command": command}},
        },
    }
    things = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}]
    things += [
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Thing",
            "metadata": {"name": f"thing-{i}", "namespace": NAMESPACE},
            "spec": {"i": i},
        }
        for i in range(parents)
    ]
    (directory / "crd.yaml").write_text(yaml.safe_dump(crd))
    (directory / "controller.yaml").write_text(yaml.safe_dump(controller))
    (directory / "things.yaml").write_text(yaml.safe_dump_all(things))


def baseline_tree(revision: str, into: Path) -> Path:
    """This repository's `reconcile` package as it was at `revision`, compiled, in `into`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "reconcile"],
        capture_output=True,
        check=True,
    ).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into)], check=True)
    return into


def run_command_scenario(inputs: Path, report: Path, code: Path) -> tuple[float, float, int]:
    """The cold run's wall time, its last pass's time and its pass count, with the `reconcile`
    package found in `code`."""
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reconcile",
            "--local",
            str(inputs),
            "--workers",
            WORKERS[0],
            "--max-duration",
            "3600s",
            "--report-file",
            f"json:{report}",
        ],
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{inputs.name}: reconcile failed: {done.stderr[-2000:]}")
    result = json.loads(report.read_text())
    return wall, result["passes"][-1]["durationSeconds"], len(result["passes"])


def bench_command(parents: int, baseline: tuple[str, Path] | None) -> None:
    """exec and lines side by side; with `baseline` (a revision and its `baseline_tree`), exec
    as the code at that revision ran it too (the first column)."""
    figures: dict[str, tuple[float, float, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        columns: list[tuple[str, str, Path]] = [("exec", "exec", ROOT), ("lines", "lines", ROOT)]
        if baseline is not None:
            columns.insert(0, (f"exec@{baseline[0][:9]}", "exec", baseline[1]))
        for label, protocol, code in columns:
            inputs = Path(tmp) / label
            command_inputs(inputs, parents, protocol)
            figures[label] = run_command_scenario(inputs, Path(tmp) / f"{label}.json", code)
    print(f"\n{parents} parents, a three-line Python command hook, --workers {WORKERS[0]}")
    labels = list(figures)
    print(f"{'':28}" + "".join(f"{label:>18}" for label in labels))
    for index, title in ((0, "cold run (wall, s)"), (1, "converged pass (s)")):
        print(f"{title:28}" + "".join(f"{figures[label][index]:18.2f}" for label in labels))
    print(f"{'passes':28}" + "".join(f"{figures[label][2]:18d}" for label in labels))
    exec_s, lines_s = figures["exec"], figures["lines"]
    print(
        f"lines is {times(exec_s[0], lines_s[0])} exec cold, "
        f"{times(exec_s[1], lines_s[1])} converged"
    )
    if baseline is not None:
        before = figures[labels[0]]
        print(
            f"exec is {times(before[0], exec_s[0])} exec@{baseline[0][:9]} cold, "
            f"{times(before[1], exec_s[1])} converged"
        )


def times(slower: float, faster: float) -> str:
    """How many times faster, or "n/a" when `faster` took no measurable time."""
    return f"{slower / faster:.2f}x" if faster > 0 else "n/a"


# -- the scenario ----------------------------------------------------------------------------


def manifests(parents: int, url: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from tests.support.backends import crd_manifest

    crd = crd_manifest(GROUP, "BenchParent", "benchparents")
    objects: list[dict[str, Any]] = [
        crd,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
    ]
    for i in range(parents):
        name = f"p{i:05d}"
        objects.append(
            {
                "apiVersion": f"{GROUP}/v1",
                "kind": "BenchParent",
                "metadata": {"name": name, "namespace": NAMESPACE},
                "spec": {"selector": {"matchLabels": {"bench": name}}},
            }
        )
    controller = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": "bench"},
        "spec": {
            "parentResource": {"apiVersion": f"{GROUP}/v1", "resource": "benchparents"},
            "childResources": [
                {
                    "apiVersion": "v1",
                    "resource": "configmaps",
                    "updateStrategy": {"method": "InPlace"},
                }
            ],
            "hooks": {"sync": {"webhook": {"url": url, "timeout": "30s"}}},
        },
    }
    return objects, controller


def map_manifests(inputs: int, url: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One parent selecting `inputs` ConfigMaps; its outputs are ConfigMaps too (and match the
    selector: the recursion guard is part of what is measured)."""
    from tests.support.backends import crd_manifest

    crd = crd_manifest(GROUP, "BenchMapper", "benchmappers")
    objects: list[dict[str, Any]] = [
        crd,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "BenchMapper",
            "metadata": {"name": "mapper", "namespace": NAMESPACE},
            "spec": {"selector": {"matchLabels": {"bench-input": "yes"}}},
        },
    ]
    for i in range(inputs):
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": f"in{i:05d}",
                    "namespace": NAMESPACE,
                    "labels": {"bench-input": "yes"},
                },
                "data": {"index": str(i)},
            }
        )
    controller = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "MapController",
        "metadata": {"name": "bench-map"},
        "spec": {
            "parentResource": {"apiVersion": f"{GROUP}/v1", "resource": "benchmappers"},
            "inputResources": [{"apiVersion": "v1", "resource": "configmaps"}],
            "outputResources": [
                {
                    "apiVersion": "v1",
                    "resource": "configmaps",
                    "updateStrategy": {"method": "InPlace"},
                }
            ],
            "hooks": {"map": {"webhook": {"url": url, "timeout": "30s"}}},
        },
    }
    return objects, controller


# -- measuring -----------------------------------------------------------------------------------


def peak_rss_kib(pid: int) -> int:
    """The process's resident high-water mark (VmHWM), 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def watch_peak_rss(pid: int, done: threading.Event, peak: list[int]) -> None:
    """Samples VmHWM until `done`. Not wait4's ru_maxrss: a child started by fork or vfork
    inherits the high-water mark of the parent's memory until its exec, so for a small run it
    would report this script's own size."""
    while not done.is_set():
        peak[0] = max(peak[0], peak_rss_kib(pid))
        done.wait(0.05)


def run_reconcile(
    args: list[str],
    watch_pids: list[int],
    hook_in_process: tuple[str, int] | None = None,
    steps_to: Path | None = None,
) -> dict[str, Any]:
    """`reconcile ARGS` in a subprocess; with `hook_in_process` (scenario, children), its
    webhooks are answered in that process (`run_with_hook_in_process`); with `steps_to`, the
    CPU of each step of a parent's sync is written there (benchmark_steps)."""
    before = {pid: cpu_seconds(pid) for pid in watch_pids}
    machine_before = machine_times()
    args = [
        *args,
        "--report-format",
        "json",
        "--log-level",
        "warning",
        *RECONCILE_OPTIONS,
        "--workers",
        WORKERS[0],
        "--max-duration",
        "3600",
    ]
    if steps_to is not None:
        command = [sys.executable, __file__, "--steps-to", str(steps_to), "--", *args]
    elif hook_in_process is None:
        command = [sys.executable, "-m", "reconcile", *args]
    else:
        scenario, children = hook_in_process
        command = [
            sys.executable,
            __file__,
            "--scenario",
            scenario,
            "--children",
            str(children),
            "--hook-in-process",
            "--",
            *args,
        ]
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    done, peak = threading.Event(), [0]
    rss_watch = threading.Thread(target=watch_peak_rss, args=(process.pid, done, peak))
    rss_watch.start()
    out: list[str] = []
    err: list[str] = []
    readers = [
        threading.Thread(target=lambda: out.append(process.stdout.read())),  # type: ignore[union-attr]
        threading.Thread(target=lambda: err.append(process.stderr.read())),  # type: ignore[union-attr]
    ]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()  # its output ends as it exits
    done.set()
    rss_watch.join()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"reconcile exited {code}:\n{''.join(err)[-3000:]}")
    report = json.loads("".join(out))
    return {
        "report": report,
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": (peak[0] or usage.ru_maxrss) / 1024,
        "server_cpu": sum(cpu_seconds(pid) - before[pid] for pid in watch_pids),
        "stolen": stolen_share(machine_before, machine_times()),
    }


def describe_pass(pass_: dict[str, Any]) -> str:
    hooks = [h for c in pass_["controllers"] for p in c["parents"] for h in p["hooks"]]
    hook_seconds = sum(h["durationMs"] for h in hooks) / 1000
    requests = ", ".join(f"{verb} {n}" for verb, n in pass_["requests"].items())
    return (
        f"wall {pass_['durationSeconds']:.2f} s; requests: {requests or 'none'} "
        f"(waiting on the server {pass_['requestSeconds']:.1f} s summed over workers); "
        f"hook calls {len(hooks)} ({hook_seconds:.1f} s summed)"
    )


def print_run(title: str, run: dict[str, Any], live: bool) -> None:
    report = run["report"]
    print(
        f"  {title}: {len(report['passes'])} pass(es), process wall {run['wall']:.2f} s, "
        f"reconcile CPU {run['cpu']:.2f} s, peak RSS {run['rss_mib']:.0f} MiB"
        + (f", kube-apiserver+etcd CPU {run['server_cpu']:.2f} s" if live else "")
        + f"; the host took {run['stolen']:.0%} of the machine's CPU time meanwhile"
    )
    for pass_ in report["passes"]:
        print(f"    pass {pass_['number']}: {describe_pass(pass_)}")


def print_own_cpu(scenario: Scenario, steady: dict[str, Any], in_process: dict[str, Any]) -> None:
    parents = scenario[2]
    print(
        f"  our CPU per parent, steady run, hook answered in-process (excluding hook time): "
        f"{in_process['cpu'] / parents * 1000:.2f} ms (target <= 0.5 ms), start-up included; "
        f"with the webhook over HTTP: {steady['cpu'] / parents * 1000:.2f} ms"
    )


Runs = dict[str, dict[str, Any]]  # "cold", "steady", "in-process" -> what run_reconcile returns;
# "floors", "others" -> their figures by name


# -- backends ------------------------------------------------------------------------------------


Scenario = tuple[str, str, int, int]  # (scenario, title, parents or inputs, children)


def scenario_manifests(scenario: Scenario, url: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    kind, _, count, _ = scenario
    return map_manifests(count, url) if kind == "map" else manifests(count, url)


def bench_memory(scenario: Scenario) -> Runs:
    hook, url = start_hook(scenario[0], scenario[3])
    try:
        with tempfile.TemporaryDirectory(prefix="reconcile-bench-") as tmp:
            source, state = Path(tmp) / "source", Path(tmp) / "state"
            source.mkdir()
            objects, controller = scenario_manifests(scenario, url)
            (source / "objects.yaml").write_text(yaml.safe_dump_all(objects))
            (Path(tmp) / "controller.yaml").write_text(yaml.safe_dump(controller))
            cold = run_reconcile(
                [
                    "--local",
                    str(source),
                    "--controllers",
                    str(Path(tmp) / "controller.yaml"),
                    "--output-dir",
                    str(state),
                ],
                [],
            )
            steady_args = [
                "--local",
                str(state),
                "-R",
                "--controllers",
                str(Path(tmp) / "controller.yaml"),
            ]
            steady = run_reconcile(steady_args, [])
            in_process = run_reconcile(steady_args, [], (scenario[0], scenario[3]))
    finally:
        hook.terminate()
    print(f"memory backend, {scenario[1]}")
    print("  (the in-process API server's work, reading the manifests included, is inside")
    print("  reconcile's own CPU time here)")
    print_run("cold run", cold, live=False)
    print_run("steady-state run", steady, live=False)
    print_run("steady-state run, hook answered in-process", in_process, live=False)
    print_own_cpu(scenario, steady, in_process)
    return {"cold": cold, "steady": steady, "in-process": in_process}


def bench_live(scenario: Scenario, compare_others: bool = True) -> Runs:
    """One repetition on a control plane of its own: our cold, steady and in-process runs,
    then (composite) the raw client's floors and the other tools."""
    from reconcile.cluster.kubeconfig import load_connection
    from reconcile.cluster.live import LiveCluster, LiveOptions
    from tests.support.controlplane import ADMIN_USER, TESTED_USER, ControlPlane, build
    from tests.support.poll import eventually

    plane = ControlPlane(build())
    plane.start()
    hook, url = start_hook(scenario[0], scenario[3])
    try:
        admin = LiveCluster(
            load_connection(str(plane.kubeconfig), context=ADMIN_USER).configuration,
            LiveOptions(qps=0),
        )
        objects, controller = scenario_manifests(scenario, url)
        for obj in objects:
            resource = eventually(lambda o=obj: admin.discover(o["apiVersion"], o["kind"]))
            admin.create(resource, obj)
        with tempfile.TemporaryDirectory(prefix="reconcile-bench-") as tmp:
            path = Path(tmp) / "controller.yaml"
            path.write_text(yaml.safe_dump(controller))
            args = [
                "--kubeconfig",
                str(plane.kubeconfig),
                "--context",
                TESTED_USER,
                "--controllers",
                str(path),
                "--no-cluster-controllers",
            ]
            servers = [plane.processes["kube-apiserver"].pid, plane.processes["etcd"].pid]
            cold = run_reconcile(args, servers)
            steady_from = len(plane.audit_events())
            steady = run_reconcile(args, servers)
            steady_lists = sorted(
                {
                    str(e["requestURI"])
                    for e in plane.audit_events()[steady_from:]
                    if e.get("verb") == "list"
                }
            )
            in_process = run_reconcile(args, servers, (scenario[0], scenario[3]))
            # before the floors, whose parents and children our controller would also find
            steps = Path(tmp) / "steps.json"
            stepped = (
                run_reconcile(args, servers, steps_to=steps) if scenario[0] == "composite" else None
            )
            runs: Runs = {"cold": cold, "steady": steady, "in-process": in_process}
            print(
                f"live backend (kube-apiserver {plane.release} + etcd on loopback), {scenario[1]}"
            )
            print_run("cold run", cold, live=True)
            print_run("steady-state run", steady, live=True)
            print_run("steady-state run, hook answered in-process", in_process, live=True)
            print_own_cpu(scenario, steady, in_process)
            print(f"  our steady run's LISTs: {', '.join(steady_lists)}")
            if scenario[0] == "composite":
                runs["floors"] = floors(plane, admin, scenario, controller, url, cold)
                print(f"  floors: {runs['floors']}")
                assert stepped is not None
                runs["steps"] = step_figures(steps, stepped["cpu"], scenario[2])
                print_steps(runs["steps"], runs["floors"]["floor_steady_hook_cpu_us"])
            if compare_others and scenario[0] == "composite":
                runs["others"] = compare(plane, admin, scenario, Path(tmp))
                print(f"  other tools: {runs['others']}")
    finally:
        hook.terminate()
        plane.stop()
    return runs


def floors(
    plane: Any,
    admin: Any,
    scenario: Scenario,
    controller: dict[str, Any],
    url: str,
    cold: dict[str, Any],
) -> dict[str, float]:
    """The raw client's cold run (every pass of ours, back to back) and steady pass, in a
    namespace of its own (benchmark_floors)."""
    from benchmark_floors import Floor, RawClient, Shape, child_templates, pass_shapes

    from tests.support.controlplane import TESTED_USER

    _, _, parents, _ = scenario
    configmaps = admin.discover("v1", "configmaps")
    templates, uid = child_templates(
        lambda: admin.list(configmaps, namespace=NAMESPACE, label_selector="bench=p00000").items
    )
    ours = admin.list(admin.discover("v1", "events"), namespace=NAMESPACE, limit=1).items
    event = {k: v for k, v in ours[0].items() if k not in ("metadata",)} if ours else {}
    floor = Floor(
        raw=RawClient(plane.server, plane.tokens[TESTED_USER], 2 * int(WORKERS[0])),
        hook_url=url,
        controller=controller,
        group=GROUP,
        namespace="bench-floor",
        workers=int(WORKERS[0]),
        child_templates=templates,
        template_uid=uid,
        event_template=event,
    )
    floor.create_parents(parents)
    cold_passes = floor.run_floor(pass_shapes(cold["report"], parents, len(templates)))
    machine_before = machine_times()
    steady = floor.pass_floor(Shape(creates_per_parent=0, events=0, status_updates=False))
    return {
        "floor_steady_stolen": stolen_share(machine_before, machine_times()),
        "floor_cold_pass1": cold_passes[0],
        "floor_cold_run": sum(cold_passes),
        "floor_steady": steady,
        "floor_steady_hook_cpu_us": floor.hook_cpu_per_call * 1e6,
    }


# -- the same children by other means ------------------------------------------------------------


def children_of(scenario: Scenario, namespace: str) -> list[dict[str, Any]]:
    _, _, parents, children = scenario
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": f"p{p:05d}-{i}",
                "namespace": namespace,
                "labels": {"bench": f"p{p:05d}"},
            },
            "data": {"index": str(i), "parent": f"p{p:05d}"},
        }
        for p in range(parents)
        for i in range(children)
    ]


def compare(plane: Any, admin: Any, scenario: Scenario, tmp: Path) -> dict[str, float]:
    """`kubectl apply -f` of the same children (cold, then unchanged) and the raw client's
    16-thread creates, each in a namespace of its own."""
    from concurrent.futures import ThreadPoolExecutor

    namespaces = admin.discover("v1", "namespaces")
    configmaps = admin.discover("v1", "configmaps")
    for name in ("bench-kubectl", "bench-raw"):
        admin.create(
            namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )
    manifest = tmp / "children.yaml"
    manifest.write_text(yaml.safe_dump_all(children_of(scenario, "bench-kubectl")))
    # Server-side, without client-side validation: kubectl 1.32 against a 1.37 server spends
    # 60 to 200 ms of CPU per object on the server's OpenAPI v3 document when it validates or
    # computes a client-side patch (200 ConfigMaps: 11 s cold, 34 s unchanged), which would
    # make the comparison about that; this way it is 4 ms an object, the apply work itself.
    kubectl = [
        "kubectl",
        "--kubeconfig",
        str(plane.kubeconfig),
        "apply",
        "--server-side",
        "--validate=false",
        "-f",
        str(manifest),
    ]
    figures: dict[str, float] = {}
    for key in ("kubectl_cold", "kubectl_unchanged"):
        started = time.monotonic()
        subprocess.run(kubectl, check=True, capture_output=True)
        figures[key] = time.monotonic() - started
    raw = children_of(scenario, "bench-raw")
    started = time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda obj: admin.create(configmaps, obj), raw))
    figures["raw_creates"] = time.monotonic() - started
    return figures


def live_figures(runs: Runs) -> dict[str, float]:
    """The figures of one repetition that the summary, the JSON and the chart use."""
    cold, steady = runs["cold"], runs["steady"]
    first = cold["report"]["passes"][0]
    figures = {
        "cold_run": cold["wall"],
        "cold_pass1": first["durationSeconds"],
        "cold_creates": float(first["requests"].get("create", 0)),
        "steady_run": steady["wall"],
        "steady_pass": steady["report"]["passes"][0]["durationSeconds"],
        "steady_in_process": runs["in-process"]["wall"],
        "cold_cpu": cold["cpu"],
        "steady_cpu": steady["cpu"],
        "cold_rss_mib": cold["rss_mib"],
        "steady_rss_mib": steady["rss_mib"],
        "cold_stolen": cold["stolen"],
        "steady_stolen": steady["stolen"],
    }
    for extra in ("floors", "others", "steps"):
        if extra in runs:
            figures |= runs[extra]
    return figures


def print_summary(parents: int, children: int, repeats: list[dict[str, float]]) -> dict[str, float]:
    """The median of each figure over the repetitions, against the targets."""
    keys = {key for r in repeats for key in r}
    median = {key: statistics.median(r[key] for r in repeats if key in r) for key in keys}
    print(
        f"\nlive, {parents} parents x {children} ConfigMaps: median of {len(repeats)} run(s), "
        "each on a control plane of its own (a figure not in every run: of those it is in)"
    )
    print(
        f"  cold run {median['cold_run']:.2f} s (pass 1 {median['cold_pass1']:.2f} s); "
        f"steady run {median['steady_run']:.2f} s (its pass {median['steady_pass']:.2f} s)"
    )
    if "floor_steady" in median:
        pass1 = median["floor_cold_pass1"] / median["cold_pass1"]
        whole = median["floor_cold_run"] / median["cold_run"]
        own = own_ratios(repeats)
        print(
            f"  cold pass 1 vs the raw client sending its requests "
            f"({median['floor_cold_pass1']:.2f} s): {pass1:.0%} of its rate (target >= 90%); "
            f"the runs' own: {own['pass1']}"
        )
        print(
            f"  cold run vs the raw client sending all of its requests, no waits "
            f"({median['floor_cold_run']:.2f} s): {whole:.0%} (target >= 80%); "
            f"the runs' own: {own['whole']}"
        )
        print(
            f"  steady run vs its floor, the same LISTs and hook calls "
            f"({median['floor_steady']:.2f} s): "
            f"{median['steady_run'] / median['floor_steady']:.2f}x (its pass alone "
            f"{median['steady_pass'] / median['floor_steady']:.2f}x; "
            f"target <= 1.3x); the runs' own: {own['steady']}"
        )
    if "steady_stolen" in median:
        stolen = ", ".join(f"{r['steady_stolen']:.0%}" for r in repeats if "steady_stolen" in r)
        floors = ", ".join(
            f"{r['floor_steady_stolen']:.0%}" for r in repeats if "floor_steady_stolen" in r
        )
        print(
            "  the machine's CPU time its host took for other machines (steal): "
            f"{median['cold_stolen']:.0%} during the cold runs, during the steady runs "
            f"{stolen}, during their floors {floors or 'not measured'}"
        )
    if "kubectl_unchanged" in median:
        print(
            f"  kubectl apply -f: cold {median['kubectl_cold']:.1f} s, unchanged "
            f"{median['kubectl_unchanged']:.1f} s "
            f"({median['kubectl_unchanged'] / median['steady_run']:.1f}x our steady run); "
            "the raw client's creates alone, 16 threads: "
            f"{median['raw_creates']:.1f} s"
        )
    return median


def own_ratios(repeats: list[dict[str, float]]) -> dict[str, str]:
    """Each run's ratios to the floor measured beside it, and their median: the machine's speed
    drifts between runs, and a run and its floor share one machine's moment."""
    shares = {
        "pass1": ("floor_cold_pass1", "cold_pass1", "{:.0%}"),
        "whole": ("floor_cold_run", "cold_run", "{:.0%}"),
        "steady": ("steady_run", "floor_steady", "{:.2f}x"),
    }
    shown = {}
    for name, (top, bottom, form) in shares.items():
        values = [r[top] / r[bottom] for r in repeats if top in r and bottom in r]
        listed = ", ".join(form.format(v) for v in values)
        shown[name] = f"{listed} (median {form.format(statistics.median(values))})"
    return shown


def print_ratios(backend: str, sizes: dict[int, Runs]) -> None:
    """Between the smallest and the largest size: linear means the same ratio as the sizes."""
    small, large = min(sizes), max(sizes)
    if small == large:
        return
    a, b = sizes[small], sizes[large]

    def ratio(run: str, figure: str) -> str:
        return f"{b[run][figure] / a[run][figure]:.1f}x"

    def pass_ratio(run: str) -> str:
        first = [r[run]["report"]["passes"][0]["durationSeconds"] for r in (a, b)]
        return f"{first[1] / first[0]:.1f}x"

    print(f"{backend} backend, {small} -> {large} parents ({large / small:.0f}x the parents):")
    print(
        f"  cold run wall {ratio('cold', 'wall')}, CPU {ratio('cold', 'cpu')}, "
        f"peak RSS {ratio('cold', 'rss_mib')}"
    )
    print(
        f"  steady run wall {ratio('steady', 'wall')} (pass {pass_ratio('steady')}), "
        f"CPU {ratio('steady', 'cpu')}, peak RSS {ratio('steady', 'rss_mib')}"
    )
    print(
        f"  steady run, hook in-process: wall {ratio('in-process', 'wall')}, "
        f"CPU {ratio('in-process', 'cpu')}, peak RSS {ratio('in-process', 'rss_mib')}"
    )


def write_chart(
    path: Path, medians: dict[int, dict[str, float]], machine: str, repeats: int
) -> None:
    from benchmark_chart import chart

    lines = {
        "reconcile, cold run": "cold_run",
        "floor: its requests, raw client": "floor_cold_run",
        "reconcile, steady run": "steady_run",
        "floor: its LISTs and hooks": "floor_steady",
        "kubectl apply, cold": "kubectl_cold",
        "kubectl apply, unchanged": "kubectl_unchanged",
        "raw client, creates only": "raw_creates",
    }
    series = {
        name: {parents: figures[key] for parents, figures in medians.items() if key in figures}
        for name, key in lines.items()
    }
    series = {name: line for name, line in series.items() if line}
    runs = "median of 3 runs" if repeats == 3 else f"median of {repeats} run(s)"
    subtitle = f"{machine}; {runs}" if machine else runs
    path.write_text(chart("reconcile against the floor of its work", subtitle, series))
    print(f"chart: {path}")


def chart_from(files: list[Path], path: Path | None, machine: str) -> None:
    """One chart of every size the files measured, each figure the median of every run of
    that size in any of the files (printed as the runs print it)."""
    if path is None:
        sys.exit("--chart-from needs --chart FILE")
    every: dict[int, list[dict[str, float]]] = {}
    for file in files:
        for size, runs in json.loads(file.read_text())["runs"].items():
            every.setdefault(int(size), []).extend(runs)
    medians = {size: print_summary(size, 5, runs) for size, runs in sorted(every.items())}
    write_chart(path, medians, machine, min(len(runs) for runs in every.values()))


def parent_counts(text: str) -> list[int]:
    try:
        counts = sorted({int(n) for n in text.split(",") if n.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"parent counts must be >= 1: {text!r}")
    return counts


def main() -> None:
    if "--steps-to" in sys.argv:
        # the steady run whose steps are timed: `--steps-to PATH --`, then reconcile's
        from benchmark_steps import run_with_steps

        split = sys.argv.index("--")
        run_with_steps(Path(sys.argv[sys.argv.index("--steps-to") + 1]), sys.argv[split + 1 :])
        return
    if "--hook-in-process" in sys.argv:
        # the in-process steady run: benchmark options, then `--`, then reconcile's
        split = sys.argv.index("--")
        own, reconcile_args = sys.argv[1:split], sys.argv[split + 1 :]
        scenario = own[own.index("--scenario") + 1]
        children = int(own[own.index("--children") + 1])
        run_with_hook_in_process(scenario, children, reconcile_args)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--parents",
        type=parent_counts,
        default=[1000],
        help="how many parents; a comma-separated list runs each size, then prints the ratios",
    )
    parser.add_argument("--children", type=int, default=5)
    parser.add_argument("--backend", choices=["memory", "live", "both"], default="both")
    parser.add_argument(
        "--scenario",
        choices=["composite", "map", "command", "startup"],
        default="composite",
        help="composite: parents x children; map: one MapController parent over --inputs; "
        "command: --local, a command hook in exec mode vs lines mode; startup: process start "
        "to the first API request, and --help",
    )
    parser.add_argument("--inputs", type=int, default=1000, help="inputs of the map scenario")
    parser.add_argument(
        "--qps", help="reconcile's --qps (default: none given, so its adaptive default)"
    )
    parser.add_argument("--workers", type=int, default=8, help="reconcile's --workers")
    parser.add_argument(
        "--apply-strategy",
        choices=["client-side", "server-side"],
        help="reconcile's --apply-strategy (default: none given, so client-side)",
    )
    parser.add_argument(
        "--no-compare",
        action="store_true",
        help="live: skip kubectl apply and the raw client's creates (the slowest part)",
    )
    parser.add_argument(
        "--baseline",
        metavar="REVISION",
        help="command scenario: also run exec mode with the code of this git revision",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="live: runs per size, each on a control plane of its own; the median is reported",
    )
    parser.add_argument("--json", type=Path, help="live: write the figures (all runs) here")
    parser.add_argument(
        "--chart", type=Path, help="live: draw wall time against parents here (SVG)"
    )
    parser.add_argument("--machine", default="", help="the chart's note of the machine")
    parser.add_argument(
        "--chart-from",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="draw --chart from the figures of earlier runs (their --json files), run nothing",
    )
    parser.add_argument("--serve-hook", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # figures as they come
    if args.serve_hook is not None:
        serve_hook(args.serve_hook, args.scenario, args.children)
        return
    if args.qps is not None:
        RECONCILE_OPTIONS.extend(["--qps", args.qps])
    if args.apply_strategy is not None:
        RECONCILE_OPTIONS.extend(["--apply-strategy", args.apply_strategy])
    WORKERS[0] = str(args.workers)
    if args.chart_from:
        chart_from(args.chart_from, args.chart, args.machine)
        return
    if args.scenario == "startup":
        from benchmark_startup import report

        report(runs=11)
        return
    if args.scenario == "command":
        with tempfile.TemporaryDirectory() as tmp:
            baseline = None
            if args.baseline is not None:  # extracted once for every size
                baseline = (args.baseline, baseline_tree(args.baseline, Path(tmp) / "baseline"))
            for parents in args.parents:
                bench_command(parents, baseline)
        return
    scenarios: list[Scenario] = []
    if args.scenario == "map":
        title = f"1 MapController parent x {args.inputs} input ConfigMaps (1 output each)"
        scenarios.append(("map", title, args.inputs, 1))
    else:
        for parents in args.parents:
            title = f"{parents} parents x {args.children} ConfigMaps"
            scenarios.append(("composite", title, parents, args.children))
    memory: dict[int, Runs] = {}
    live: dict[int, Runs] = {}
    medians: dict[int, dict[str, float]] = {}
    every: dict[int, list[dict[str, float]]] = {}
    for scenario in scenarios:
        if args.backend in ("memory", "both"):
            memory[scenario[2]] = bench_memory(scenario)
        if args.backend in ("live", "both"):
            for _ in range(max(1, args.repeat)):
                live[scenario[2]] = bench_live(scenario, compare_others=not args.no_compare)
                every.setdefault(scenario[2], []).append(live_figures(live[scenario[2]]))
            if scenario[0] == "composite":
                medians[scenario[2]] = print_summary(scenario[2], scenario[3], every[scenario[2]])
    for backend, sizes in (("memory", memory), ("live", live)):
        if len(sizes) > 1:
            print_ratios(backend, sizes)
    if args.json is not None and every:
        args.json.write_text(json.dumps({"runs": every, "medians": medians}, indent=1) + "\n")
    if args.chart is not None and medians:
        write_chart(args.chart, medians, args.machine, max(1, args.repeat))


if __name__ == "__main__":
    main()
