"""keip (tests/data/keip): an IntegrationRoute operator, run unchanged but for its hook URLs, on
both backends through the real command.

Its CompositeController makes a Deployment and a Service for each IntegrationRoute
(`generateSelector`, `RollingRecreate` with a `Ready` status check, revisions over
`spec.routeConfigMap`), and its cert-manager add-on, a DecoratorController over the same
parents, attaches a cert-manager Certificate to a route annotated for one. The webhook is the
project's Starlette app, started as its Dockerfile starts it (uvicorn, its pinned requirements).

Installed as the project's README and Makefile install it (the CRD, `kubectl apply -k
controller` and the add-on, the `keip-controller-props` ConfigMap, Metacontroller's CRDs), with
each of its two examples applied (`kubectl apply -k`) in a namespace of the test's own. The first
run makes what the examples' READMEs list and ends converged; a second run and a `--dry-run`
send no write."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controlplane import TESTED_USER, free_port
from tests.support.hook_envs import python_hook_env
from tests.support.kubectl import kubectl
from tests.support.mc_examples import serving_process
from tests.support.poll import eventually

Obj = dict[str, Any]
DATA = Path(__file__).resolve().parents[1] / "data"
KEIP = DATA / "keip"
OPERATOR = KEIP / "operator"
WEBHOOK = OPERATOR / "webhook"
CORE = OPERATOR / "controller" / "core-controller.yaml"
ADDON = OPERATOR / "controller" / "addons" / "certmanager" / "keip-certmanager-controller.yaml"
CRDS = (
    OPERATOR / "crd" / "crd.yaml",
    KEIP / "cert-manager" / "cert-manager.io_certificates.yaml",
    DATA / "metacontroller" / "metacontroller-crds-v1.yaml",
)
# The webhook's Service in the controller's manifest: both controllers call it
HOOK_BASE = "http://integrationroute-webhook.keip"
# operator/Makefile's KEIP_INTEGRATION_IMAGE, which `controller/deploy` puts in the
# keip-controller-props ConfigMap the webhook's Deployment reads INTEGRATION_IMAGE from
INTEGRATION_IMAGE = "ghcr.io/octoconsulting/keip/minimal-app:latest"
METACONTROLLER_GROUP = "metacontroller.k8s.io/v1alpha1"
READS = frozenset({"list", "get", "watch", "discover"})


@dataclass(frozen=True)
class Example:
    """One of operator/examples and what its README says the keip controllers make."""

    directory: str
    children: frozenset[tuple[str, str]]  # (kind, name)


EXAMPLES = {
    "basic": Example(
        "basic", frozenset({("Deployment", "testroute"), ("Service", "testroute-actuator")})
    ),
    "certmanager-addon": Example(
        "certmanager-addon",
        frozenset(
            {
                ("Deployment", "testroute"),
                ("Service", "testroute-actuator"),
                ("Certificate", "testroute-certs"),
            }
        ),
    ),
}


@contextlib.contextmanager
def keip_webhook(log: Path) -> Iterator[str]:
    """operator/webhook, unchanged, as its Dockerfile runs it (`python -m uvicorn app:app
    --app-dir /code` from /code/webhook, here `operator/` and `operator/webhook`), with its
    Deployment's environment, on a loopback port: the base URL both hooks are under."""
    python = python_hook_env("keip", WEBHOOK / "requirements.txt")
    port = free_port()
    env = {
        **os.environ,
        "INTEGRATION_IMAGE": INTEGRATION_IMAGE,
        "LOG_LEVEL": "INFO",
        "PYTHONDONTWRITEBYTECODE": "1",  # nothing written into the vendored tree
    }
    env.pop("PYTHONPATH", None)
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                *(python, "-m", "uvicorn", "app:app", "--app-dir", str(OPERATOR)),
                *("--host", "127.0.0.1", "--port", str(port)),
            ],
            cwd=WEBHOOK,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )

    def failed() -> str:
        return f"keip's webhook did not serve on port {port}: {log.read_text()[-3000:]}"

    with serving_process(process, port, failed):
        yield f"http://127.0.0.1:{port}"


def pointed(source: Path, base_url: str, directory: Path) -> Path:
    """The controller file with its hooks' Service URL replaced by the webhook's address."""
    text = source.read_text()
    assert HOOK_BASE in text, source
    path = directory / source.name
    path.write_text(text.replace(HOOK_BASE, base_url))
    return path


def controller_props(directory: Path) -> Path:
    """`kubectl -n keip create cm keip-controller-props --from-literal=integration-image=...`
    (operator/Makefile's controller/deploy)."""
    path = directory / "keip-controller-props.yaml"
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "keip-controller-props", "namespace": "keip"},
        "data": {"integration-image": INTEGRATION_IMAGE},
    }
    path.write_text(yaml.safe_dump(cm))
    return path


def example_overlay(example: Example, namespace: str, directory: Path) -> Path:
    """A kustomization applying the example unchanged in `namespace` (the README's `kubectl
    apply -k .`, with `-n`), with the namespace itself."""
    overlay = directory / "overlay"
    overlay.mkdir()
    source = OPERATOR / "examples" / example.directory
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    (overlay / "namespace.yaml").write_text(yaml.safe_dump(ns))
    kustomization = {
        "namespace": namespace,
        "resources": ["namespace.yaml", os.path.relpath(source, overlay)],
    }
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return overlay


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


Reader = Callable[[str, str, str], Obj]  # (plural.group, namespace, name) -> object


@dataclass
class Runs:
    made: subprocess.CompletedProcess[str]
    again: subprocess.CompletedProcess[str]
    preview: subprocess.CompletedProcess[str]
    read: Reader  # the objects after the second run


def _local_runs(tmp_path: Path, inputs: list[Path], controllers: list[Path]) -> Runs:
    state, again_state = tmp_path / "state", tmp_path / "again"
    common = ("--report-format", "json")
    seeds = [arg for path in (*CRDS, *controllers, *inputs) for arg in ("--local", str(path))]
    made = reconcile(*seeds, "--output-dir", str(state), *common, cwd=tmp_path)
    again = reconcile(
        *("--local", str(state), "-R", "--output-dir", str(again_state)), *common, cwd=tmp_path
    )
    preview = reconcile("--local", str(state), "-R", "--dry-run", *common, cwd=tmp_path)

    def read(resource: str, namespace: str, name: str) -> Obj:
        loaded: Obj = yaml.safe_load(
            (again_state / namespace / resource / f"{name}.yaml").read_text()
        )
        return loaded

    return Runs(made, again, preview, read)


def _live_runs(
    backend: Backend, tmp_path: Path, inputs: list[Path], controllers: list[Path]
) -> Runs:
    plane = backend.plane
    assert plane is not None
    for crd in CRDS:
        kubectl(plane, "apply", "--server-side", "-f", str(crd))
    for group_version, plural in (
        ("keip.octo.com/v1alpha1", "integrationroutes"),
        ("cert-manager.io/v1", "certificates"),
        (METACONTROLLER_GROUP, "controllerrevisions"),
    ):
        eventually(functools.partial(backend.admin.discover, group_version, plural), what=plural)
    # what `kubectl apply -k controller` makes besides the controllers, which the runs read
    # from their files
    installed = tmp_path / "controller-objects.yaml"
    others = [
        doc
        for path in controllers
        for doc in yaml.safe_load_all(path.read_text())
        if doc and not doc["apiVersion"].startswith("metacontroller.k8s.io/")
    ]
    installed.write_text(yaml.safe_dump_all(others))
    kubectl(plane, "apply", "-f", str(installed))
    for path in inputs:
        kubectl(plane, "apply", "-k" if path.is_dir() else "-f", str(path))
    connect = ("--kubeconfig", str(plane.kubeconfig), "--context", TESTED_USER)
    args = (
        *connect,
        *(arg for path in controllers for arg in ("--controllers", str(path))),
        *("--no-cluster-controllers", "--report-format", "json", "--max-duration", "60"),
    )
    made = reconcile(*args, cwd=tmp_path)
    assert made.returncode == 0, (report(made)["errors"], made.stderr[-3000:])
    mark = backend.mark()
    again = reconcile(*args, cwd=tmp_path)
    preview = reconcile(*args, "--dry-run", cwd=tmp_path)
    assert backend.mutations_since(mark) == {}, again.stdout[-6000:]

    def read(resource: str, namespace: str, name: str) -> Obj:
        found: Obj = json.loads(
            kubectl(plane, "get", resource, name, "-n", namespace, "-o", "json")
        )
        return found

    return Runs(made, again, preview, read)


@pytest.fixture
def keip_namespace(backend: Backend) -> Iterator[str]:
    """The examples' namespace; on the live cluster deleted afterwards, so the next test's
    controllers do not find this test's routes."""
    name = f"keip-{uuid.uuid4().hex[:8]}"
    yield name
    if backend.plane is not None:
        with contextlib.suppress(AssertionError):
            kubectl(backend.plane, "delete", "namespace", name, "--wait=false")


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_keip_example_converges(
    backend: Backend, tmp_path: Path, keip_namespace: str, name: str
) -> None:
    example = EXAMPLES[name]
    inputs = [controller_props(tmp_path), example_overlay(example, keip_namespace, tmp_path)]
    with keip_webhook(tmp_path / "webhook.log") as url:
        controllers = [pointed(CORE, url, tmp_path), pointed(ADDON, url, tmp_path)]
        if backend.name == "memory":
            runs = _local_runs(tmp_path, inputs, controllers)
        else:
            runs = _live_runs(backend, tmp_path, inputs, controllers)
    made = runs.made
    assert made.returncode == 0, made.stdout[-6000:] + made.stderr[-3000:]
    first = report(made)
    assert first["errors"] == [] and first["converged"], first["errors"]
    # the route's status has no observedGeneration in its schema: said, and not written
    assert any("observedGeneration" in w for w in first["warnings"]), first["warnings"]
    mine = [a for a in actions(first) if a["object"]["namespace"] == keip_namespace]
    created = {(a["object"]["kind"], a["object"]["name"]) for a in mine if a["action"] == "create"}
    revisions = {n for kind, n in created if kind == "ControllerRevision"}
    assert created - {("ControllerRevision", n) for n in revisions} == example.children
    assert len(revisions) == 1, created
    statuses = [a for a in mine if a["action"] == "status"]
    assert [a["object"]["name"] for a in statuses] == ["testroute"], mine
    assert len(mine) == len(created) + 1, [(a["action"], a["object"]) for a in mine]
    for done in (runs.again, runs.preview):
        assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
        run = report(done)
        assert writes(run) == {}, run["requests"]
        assert run["summary"]["applied"] == 0 and run["summary"]["pending"] == 0
    _check_objects(runs.read, keip_namespace, example, revisions.pop())


def _check_objects(read: Reader, namespace: str, example: Example, revision: str) -> None:
    """What the webhook asked for, as stored: the route's status, the children's owner and
    selector, the Deployment's pod template, the add-on's Certificate."""
    route = read("integrationroutes.keip.octo.com", namespace, "testroute")
    status = route["status"]
    assert "observedGeneration" not in status, status
    assert (status["expectedReplicas"], status["readyReplicas"], status["runningReplicas"]) == (
        1,
        0,
        0,
    )
    # no Deployment status yet (no Pods run here): only Metacontroller's rollout condition
    (updated,) = status["conditions"]
    assert (updated["type"], updated["status"], updated["reason"]) == (
        "Updated",
        "True",
        "OnLatestRevision",
    )
    assert updated["message"] == f"latest ControllerRevision: {revision}"
    deployment = read("deployments.apps", namespace, "testroute")
    service = read("services", namespace, "testroute-actuator")
    # generateSelector: the children carry the route's uid as their controller-uid label (an
    # --output-dir holds manifests, without uids: there the label is all there is to compare)
    (uid,) = {child["metadata"]["labels"]["controller-uid"] for child in (deployment, service)}
    assert route["metadata"].get("uid", uid) == uid
    for child in (deployment, service):
        (owner,) = child["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner.get("uid", uid), owner["controller"]) == (
            "IntegrationRoute",
            "testroute",
            uid,
            True,
        )
    assert deployment["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "keip"
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == INTEGRATION_IMAGE
    assert pod["serviceAccountName"] == "integrationroute-service"
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["integration-route-config"]["configMap"]["name"] == "testroute-xml"
    env = {e["name"]: e for e in container["env"]}
    assert env["SERVICE_NAME"]["value"] == "testroute"
    revision_obj = read("controllerrevisions.metacontroller.k8s.io", namespace, revision)
    assert revision_obj["parentPatch"] == {"spec": {"routeConfigMap": "testroute-xml"}}
    if example.directory == "basic":
        assert "testroute-secret" in volumes, volumes
        assert service["spec"]["ports"][0]["port"] == 8080
        return
    # TLS: a PKCS12 keystore from the Certificate's secret, served on 8443
    assert volumes["keystore"]["secret"]["secretName"] == "testroute-certstore"
    assert service["spec"]["ports"][0]["port"] == 8443
    assert env["SERVER_SSL_KEYSTOREPASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == (
        "pkcs12-password"
    )
    certificate = read("certificates.cert-manager.io", namespace, "testroute-certs")
    (owner,) = certificate["metadata"]["ownerReferences"]
    assert (owner["kind"], owner.get("uid", uid)) == ("IntegrationRoute", uid)
    spec = certificate["spec"]
    assert spec["commonName"] == f"testroute.{namespace}"
    assert spec["issuerRef"] == {
        "group": "cert-manager.io",
        "kind": "ClusterIssuer",
        "name": "test-selfsigned",
    }
    assert spec["secretName"] == "testroute-certstore"
    assert spec["keystores"] == {
        "pkcs12": {
            "create": True,
            "passwordSecretRef": {"key": "password", "name": "pkcs12-password"},
        }
    }
    assert spec["subject"]["countries"] == ["US"]
    assert f"testroute-actuator.{namespace}.svc.cluster.local" in spec["dnsNames"]
