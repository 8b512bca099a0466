"""piersharding/metacontroller-mpi-operator (tests/data/mpi-operator): an MPIJob operator of the
Metacontroller v0.x era, run unchanged but for its hook URL, on both backends through the real
command, on Kubernetes 1.20 (its CRD is `apiextensions.k8s.io/v1beta1`, which 1.22 removed).

Its CompositeController makes six children per MPIJob (ServiceAccount, Role, RoleBinding,
ConfigMap, a worker StatefulSet and a launcher Job, all `OnDelete`) and copies the StatefulSet's
replica counts and the Job's state into the MPIJob's status; the CRD has no status subresource.
The hook is the chart's `configs/sync.py` (standard library only), started as the chart's
Deployment starts it (`python3 /hooks/sync.py <kubectl image>`); its `HTTPServer(('', 80))` is
made to listen on a loopback port, as Metacontroller's Node.js examples' `listen(80)` is in
tests/support/mc_nodejs.py. The chart is rendered as `make deploy` renders it (`helm template
--name test --namespace metacontroller`, values.yaml's defaults) and the MPIJob as `make test`
writes it (`envsubst < mpi-test-replicas.yaml`, the Makefile's REPLICAS and MPIBASE_IMAGE)."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controlplane import TESTED_USER, free_port
from tests.support.kubectl import kubectl
from tests.support.mc_examples import serving_process
from tests.support.poll import eventually

pytestmark = pytest.mark.releases(
    "1.20", why="the operator's CRD is apiextensions.k8s.io/v1beta1, served up to 1.21"
)

Obj = dict[str, Any]
MPI = Path(__file__).resolve().parents[1] / "data" / "mpi-operator"
CHART = MPI / "charts" / "mpi-operator"
SYNC = CHART / "configs" / "sync.py"
# `helm template charts/mpi-operator --name test --namespace metacontroller` (make deploy)
RELEASE, RELEASE_NAMESPACE = "test", "metacontroller"
HOOK_URL_TEMPLATE = (
    'http://mpi-controller-{{ template "mpi-operator.name" . }}-{{ .Release.Name }}'
    ".{{ .Release.Namespace }}/sync"
)
KUBECTL_IMAGE = "piersharding/kubectl-delivery:latest"  # values.yaml controller.kubectl_image
# the Makefile's defaults for `make test` (MYHOST is `hostname`)
ENVSUBST = {"MPIBASE_IMAGE": "piersharding/mpibase", "REPLICAS": "2", "MYHOST": "mpi-test"}
READS = frozenset({"list", "get", "watch", "discover"})
CHILDREN = {
    ("ServiceAccount", "mpioperator-test-mpi-launcher"),
    ("Role", "mpioperator-test-mpi-launcher"),
    ("RoleBinding", "mpioperator-test-mpi-launcher"),
    ("ConfigMap", "mpioperator-test-mpi-config"),
    ("StatefulSet", "mpioperator-test-mpi-worker"),
    ("Job", "mpioperator-test-mpi-launcher"),
}

# `python3 /hooks/sync.py IMAGE`, with the one change to its Pod: where it listens.
LAUNCHER = """\
import http.server, runpy, sys
port = int(sys.argv.pop(1))
class Loopback(http.server.HTTPServer):
    def __init__(self, address, handler, *args, **kwargs):
        super().__init__(("127.0.0.1", port), handler, *args, **kwargs)
http.server.HTTPServer = Loopback
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@contextlib.contextmanager
def mpi_hook(log: Path) -> Iterator[str]:
    port = free_port()
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, str(port), str(SYNC), KUBECTL_IMAGE],
            cwd=SYNC.parent,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            stdout=output,
            stderr=subprocess.STDOUT,  # it logs every request at DEBUG
        )

    def failed() -> str:
        return f"the MPI operator's sync.py did not serve on port {port}: {log.read_text()[-3000:]}"

    with serving_process(process, port, failed):
        yield f"http://127.0.0.1:{port}/sync"


def helm_template(template: Path, hook_url: str = "") -> str:
    """The chart's template as `helm template` renders it with values.yaml's defaults: the
    `controller.enabled` guard (true) dropped, the hook's Service URL replaced by `hook_url`.
    Only what these templates use is rendered; anything else fails."""
    lines = [
        line
        for line in template.read_text().splitlines()
        if line.strip() not in ("{{ if .Values.controller.enabled }}", "{{ end }}")
    ]
    text = "\n".join(lines) + "\n"
    if hook_url:
        assert HOOK_URL_TEMPLATE in text, template
        text = text.replace(HOOK_URL_TEMPLATE, hook_url)
    assert "{{" not in text, f"{template}: not rendered: {text}"
    return text


def envsubst(text: str, variables: dict[str, str]) -> str:
    """GNU envsubst: every `$NAME` and `${NAME}`, unset ones as empty strings."""
    return re.sub(
        r"\$(?:\{(\w+)\}|(\w+))", lambda m: variables.get(m.group(1) or m.group(2), ""), text
    )


def mpijob(source: str, namespace: str) -> Obj:
    job: Obj = yaml.safe_load(envsubst((MPI / source).read_text(), ENVSUBST))
    job["metadata"]["namespace"] = namespace  # `kubectl apply -n`
    return job


def report(done: subprocess.CompletedProcess[str]) -> Obj:
    assert done.stdout, done.stderr[-3000:]
    loaded: Obj = json.loads(done.stdout)
    return loaded


def actions(run: Obj) -> list[Obj]:
    return [
        action
        for pass_ in run.get("passes") or []
        for controller in pass_["controllers"]
        for parent in controller["parents"]
        for action in parent["actions"]
    ]


def writes(run: Obj) -> dict[str, int]:
    requests: dict[str, int] = run["requests"]
    return {verb: n for verb, n in requests.items() if verb not in READS}


@pytest.fixture
def mpi_namespace(backend: Backend) -> Iterator[str]:
    name = f"mpi-{uuid.uuid4().hex[:8]}"
    yield name
    if backend.plane is not None:
        with contextlib.suppress(AssertionError):
            # gone before the next test runs its cluster-wide controller
            kubectl(backend.plane, "delete", "namespace", name, "--timeout=120s")


def _crd(tmp_path: Path, *, status_subresource: bool) -> Path:
    crd: Obj = yaml.safe_load(helm_template(CHART / "templates" / "crd.yaml"))
    if status_subresource:  # what the refusal asks for, and Metacontroller 4 needs too
        crd["spec"]["subresources"] = {"status": {}}
    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump(crd))
    return path


def _objects(tmp_path: Path, example: str, namespace: str) -> Path:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all([ns, mpijob(example, namespace)]))
    return path


def _runs(
    backend: Backend, release: str, tmp_path: Path, crd: Path, objects: Path
) -> tuple[subprocess.CompletedProcess[str], ...]:
    with mpi_hook(tmp_path / "hook.log") as url:
        controller = tmp_path / "composite-controller.yaml"
        controller.write_text(helm_template(CHART / "templates" / "composite-controller.yaml", url))
        if backend.name == "memory":
            return _local_runs(release, tmp_path, [crd, objects], controller)
        return _live_runs(backend, tmp_path, crd, objects, controller)


def test_mpi_operator_as_published_is_refused_as_metacontroller_4_ignores_it(
    backend: Backend, kube_release: str, tmp_path: Path, mpi_namespace: str
) -> None:
    """Its CRD has no status subresource: Metacontroller 4 (since v1.5.4) ignores such a
    CompositeController with a SyncError Event, and makes nothing; the run says so, names the
    fix, and writes nothing."""
    crd = _crd(tmp_path, status_subresource=False)
    objects = _objects(tmp_path, "mpi-test-replicas.yaml", mpi_namespace)
    made, _, preview = _runs(backend, kube_release, tmp_path, crd, objects)
    for done in (made, preview):
        assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
        run = report(done)
        (error,) = run["errors"]
        assert "mpijobs.skatelescope.org has no status subresource" in error, error
        assert "subresources: {status: {}}" in error, error
        assert writes(run) == {} and actions(run) == [], run["requests"]


@pytest.mark.parametrize("example", ["mpi-test-replicas.yaml", "mpi-test-daemons.yaml"])
def test_mpi_operator_converges(
    backend: Backend, kube_release: str, tmp_path: Path, mpi_namespace: str, example: str
) -> None:
    """With the status subresource the refusal asks for, the operator makes its six children
    for `make test`'s MPIJobs and ends converged; a second run and a `--dry-run` send no
    write (on the real server, once the StatefulSet controller has reported the workers)."""
    crd = _crd(tmp_path, status_subresource=True)
    objects = _objects(tmp_path, example, mpi_namespace)
    made, again, preview = _runs(backend, kube_release, tmp_path, crd, objects)
    assert made.returncode == 0, made.stdout[-6000:] + made.stderr[-3000:]
    first = report(made)
    assert first["errors"] == [] and first["converged"], first["errors"]
    created = {
        (a["object"]["kind"], a["object"]["name"])
        for a in actions(first)
        if a["action"] == "create" and a["object"]["namespace"] == mpi_namespace
    }
    assert created == CHILDREN
    for done in (again, preview):
        assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
        run = report(done)
        assert writes(run) == {}, (run["requests"], [a["object"] for a in actions(run)])
        assert run["summary"]["applied"] == 0 and run["summary"]["pending"] == 0


def _local_runs(
    release: str, tmp_path: Path, inputs: list[Path], controller: Path
) -> tuple[subprocess.CompletedProcess[str], ...]:
    state = tmp_path / "state"
    common = ("--report-format", "json", "--kubernetes-version", release)
    seeds = [arg for path in (*inputs, controller) for arg in ("--local", str(path))]
    made = reconcile(*seeds, "--output-dir", str(state), *common, cwd=tmp_path)
    again = reconcile(
        *("--local", str(state), "-R", "--output-dir", str(tmp_path / "again")),
        *common,
        cwd=tmp_path,
    )
    preview = reconcile("--local", str(state), "-R", "--dry-run", *common, cwd=tmp_path)
    return made, again, preview


def _live_runs(
    backend: Backend, tmp_path: Path, crd: Path, objects: Path, controller: Path
) -> tuple[subprocess.CompletedProcess[str], ...]:
    plane = backend.plane
    assert plane is not None
    kubectl(plane, "apply", "-f", str(crd))
    served = functools.partial(backend.admin.discover, "skatelescope.org/v1", "mpijobs")
    eventually(served, what="mpijobs")
    kubectl(plane, "apply", "-f", str(objects))
    args = (
        *("--kubeconfig", str(plane.kubeconfig), "--context", TESTED_USER),
        *("--controllers", str(controller), "--no-cluster-controllers"),
        *("--report-format", "json", "--max-duration", "60"),
    )
    made = reconcile(*args, cwd=tmp_path)
    if made.returncode == 0:
        # The StatefulSet controller runs here: it makes the workers' Pods and reports them in
        # the StatefulSet's status, which the hook copies into the MPIJob's; a run after that
        # writes the MPIJob's new status (the world changed), and the runs after it are quiet.
        namespace = yaml.safe_load_all(objects.read_text()).__next__()["metadata"]["name"]
        eventually(functools.partial(_workers_reported, backend, namespace), what="workers")
        follow = reconcile(*args, cwd=tmp_path)
        assert follow.returncode == 0, follow.stdout[-6000:] + follow.stderr[-3000:]
    mark = backend.mark()
    again = reconcile(*args, cwd=tmp_path)
    preview = reconcile(*args, "--dry-run", cwd=tmp_path)
    if again.returncode == 0 and writes(report(again)) == {}:
        assert backend.mutations_since(mark) == {}
    return made, again, preview


def _workers_reported(backend: Backend, namespace: str) -> bool:
    sets = backend.admin.discover("apps/v1", "statefulsets")
    workers = backend.admin.get(sets, "mpioperator-test-mpi-worker", namespace=namespace)
    status = workers.get("status") or {}
    return bool(
        status.get("observedGeneration") == workers["metadata"]["generation"]
        and status.get("replicas") == int(ENVSUBST["REPLICAS"])
    )
