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
send no write. A changed `routeConfigMap` rolls out with Metacontroller's decisions: it waits
while the Service, which never has a `Ready` condition, fails its status check, and goes on
once it has one."""

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

from reconcile.cluster.errors import NotFound
from reconcile.cluster.types import ResourceInfo
from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controlplane import TESTED_USER, free_port
from tests.support.hook_envs import python_hook_env
from tests.support.kubectl import kubectl
from tests.support.mc_crds import ours_installed
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


class World:
    """keip installed with an example applied, on one backend, and the real command run on it
    as a user runs it; objects read and changed between runs as a user (or the kubelet) would.
    `resource` arguments are `plural.group` as in an --output-dir (`deployments.apps`)."""

    def __init__(self, tmp_path: Path, controllers: list[Path]) -> None:
        self.tmp_path = tmp_path
        self.controllers = controllers
        self.runs = 0

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        raise NotImplementedError

    def read(self, resource: str, namespace: str, name: str) -> Obj:
        raise NotImplementedError

    def write(self, resource: str, obj: Obj, *, status: bool = False) -> None:
        """Create or replace `obj` (its status alone with `status`)."""
        raise NotImplementedError


class LocalWorld(World):
    """`--local`: the first run seeded from the files, each later run from the --output-dir
    of the one before; a dry run writes none."""

    def __init__(self, tmp_path: Path, controllers: list[Path], inputs: list[Path]) -> None:
        super().__init__(tmp_path, controllers)
        paths = (*CRDS, *controllers, *inputs)
        self.seed: list[str] = [arg for path in paths for arg in ("--local", str(path))]
        self.state: Path | None = None

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        self.runs += 1
        output = self.tmp_path / f"state-{self.runs}"
        seed = self.seed if self.state is None else ["--local", str(self.state), "-R"]
        if "--dry-run" in args:
            return reconcile(*seed, "--report-format", "json", *args, cwd=self.tmp_path)
        done = reconcile(
            *seed, "--output-dir", str(output), "--report-format", "json", *args, cwd=self.tmp_path
        )
        if output.exists():
            self.state = output
        return done

    def _path(self, resource: str, namespace: str, name: str) -> Path:
        assert self.state is not None, "no run yet"
        return self.state / namespace / resource / f"{name}.yaml"

    def read(self, resource: str, namespace: str, name: str) -> Obj:
        loaded: Obj = yaml.safe_load(self._path(resource, namespace, name).read_text())
        return loaded

    def write(self, resource: str, obj: Obj, *, status: bool = False) -> None:
        meta = obj["metadata"]
        path = self._path(resource, meta["namespace"], meta["name"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(obj))


class LiveWorld(World):
    """The real API server: installed with kubectl as the README says, the controllers read
    from their files by runs as the tested user."""

    def __init__(
        self, backend: Backend, tmp_path: Path, controllers: list[Path], inputs: list[Path]
    ) -> None:
        super().__init__(tmp_path, controllers)
        plane = backend.plane
        assert plane is not None
        self.backend, self.plane = backend, plane
        for crd in CRDS:
            # another test of this control plane may have made them (as field manager
            # `reconcile`): the installation takes them over, as a reinstall would
            kubectl(plane, "apply", "--server-side", "--force-conflicts", "-f", str(crd))
        for group_version, plural in (
            ("keip.octo.com/v1alpha1", "integrationroutes"),
            ("cert-manager.io/v1", "certificates"),
            (METACONTROLLER_GROUP, "controllerrevisions"),
        ):
            served = functools.partial(backend.admin.discover, group_version, plural)
            eventually(served, what=plural)
        # what `kubectl apply -k controller` makes besides the controllers, which the runs
        # read from their files
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

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        self.runs += 1
        return reconcile(
            *("--kubeconfig", str(self.plane.kubeconfig), "--context", TESTED_USER),
            *(arg for path in self.controllers for arg in ("--controllers", str(path))),
            *("--no-cluster-controllers", "--report-format", "json"),
            *args,
            cwd=self.tmp_path,
        )

    def _resource(self, resource: str, api_version: str) -> ResourceInfo:
        return self.backend.admin.discover(api_version, resource.partition(".")[0])

    def read(self, resource: str, namespace: str, name: str) -> Obj:
        found: Obj = json.loads(
            kubectl(self.plane, "get", resource, name, "-n", namespace, "-o", "json")
        )
        return found

    def write(self, resource: str, obj: Obj, *, status: bool = False) -> None:
        info = self._resource(resource, obj["apiVersion"])
        meta = obj["metadata"]
        if status:
            self.backend.admin.update_status(info, obj)
            return
        try:
            current = self.backend.admin.get(info, meta["name"], namespace=meta["namespace"])
        except NotFound:
            self.backend.admin.create(info, obj)
            return
        meta["resourceVersion"] = current["metadata"]["resourceVersion"]
        self.backend.admin.update(info, obj)


def keip_world(
    backend: Backend, tmp_path: Path, controllers: list[Path], example: Example, namespace: str
) -> World:
    inputs = [controller_props(tmp_path), example_overlay(example, namespace, tmp_path)]
    if backend.name == "memory":
        return LocalWorld(tmp_path, controllers, inputs)
    return LiveWorld(backend, tmp_path, controllers, inputs)


def quiet(world: World, backend: Backend) -> None:
    """A second run and a `--dry-run` send no write and exit 0."""
    mark = backend.mark()
    for done in (world.run(), world.run("--dry-run")):
        assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
        run = report(done)
        assert writes(run) == {}, run["requests"]
        assert run["summary"]["applied"] == 0 and run["summary"]["pending"] == 0
    if backend.plane is not None:  # the audit log's word, beside the report's
        assert backend.mutations_since(mark) == {}


@pytest.fixture
def keip_namespace(backend: Backend) -> Iterator[str]:
    """The examples' namespace; on the live cluster deleted afterwards, so the next test's
    controllers do not find this test's routes, and our controller CRDs put back in place of
    Metacontroller's (which the installation applies)."""
    name = f"keip-{uuid.uuid4().hex[:8]}"
    yield name
    if backend.plane is not None:
        with contextlib.suppress(AssertionError):
            # gone before the next test runs its cluster-wide controller
            kubectl(backend.plane, "delete", "namespace", name, "--timeout=120s")
        ours_installed(backend)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_keip_example_converges(
    backend: Backend, tmp_path: Path, keip_namespace: str, name: str
) -> None:
    example = EXAMPLES[name]
    with keip_webhook(tmp_path / "webhook.log") as url:
        controllers = [pointed(CORE, url, tmp_path), pointed(ADDON, url, tmp_path)]
        world = keip_world(backend, tmp_path, controllers, example, keip_namespace)
        made = world.run("--max-duration", "60")
        assert made.returncode == 0, made.stdout[-6000:] + made.stderr[-3000:]
        first = report(made)
        assert first["errors"] == [] and first["converged"], first["errors"]
        # the route's status has no observedGeneration in its schema: said, and not written
        assert any("observedGeneration" in w for w in first["warnings"]), first["warnings"]
        mine = [a for a in actions(first) if a["object"]["namespace"] == keip_namespace]
        created = {
            (a["object"]["kind"], a["object"]["name"]) for a in mine if a["action"] == "create"
        }
        revisions = {n for kind, n in created if kind == "ControllerRevision"}
        assert created - {("ControllerRevision", n) for n in revisions} == example.children
        assert len(revisions) == 1, created
        statuses = [a for a in mine if a["action"] == "status"]
        assert [a["object"]["name"] for a in statuses] == ["testroute"], mine
        assert len(mine) == len(created) + 1, [(a["action"], a["object"]) for a in mine]
        quiet(world, backend)
    _check_objects(world.read, keip_namespace, example, revisions.pop())


def _check_objects(
    read: Callable[[str, str, str], Obj], namespace: str, example: Example, revision: str
) -> None:
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


def _change_route_config(world: World, namespace: str) -> None:
    """A user points the route at a new ConfigMap (`spec.routeConfigMap`, the field its
    revisions follow): a copy of the old one under a new name, then the route edited."""
    old = world.read("configmaps", namespace, "testroute-xml")
    fresh = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "testroute-xml-v2", "namespace": namespace},
        "data": old["data"],
    }
    world.write("configmaps", fresh)
    route = world.read("integrationroutes.keip.octo.com", namespace, "testroute")
    route["spec"]["routeConfigMap"] = "testroute-xml-v2"
    world.write("integrationroutes.keip.octo.com", route)


def _mounted_config(world: World, namespace: str) -> str:
    deployment = world.read("deployments.apps", namespace, "testroute")
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    (config,) = [v for v in volumes if v["name"] == "integration-route-config"]
    name: str = config["configMap"]["name"]
    return name


def _revisions(run: Obj) -> list[Obj]:
    rollouts = [
        parent["rollout"]
        for pass_ in run["passes"]
        for controller in pass_["controllers"]
        for parent in controller["parents"]
        if parent.get("rollout")
    ]
    revisions: list[Obj] = rollouts[-1]["revisions"]
    return revisions


@pytest.mark.long
def test_keip_route_change_rolls_out_as_metacontroller(
    backend: Backend, tmp_path: Path, keip_namespace: str
) -> None:
    """The core controller's rolling update, with Metacontroller's decisions: both children
    are gated on a `Ready` condition (`RollingRecreate`), which a Service does not have.

    A new `routeConfigMap` makes a new revision; the Service, the same in it, moves there at
    once; the Deployment stays on the old revision (still mounting the old ConfigMap) while
    the Service fails its status check: `Updated` is False, `RolloutWaiting`, and the run ends
    with the wait due at the next run (exit 0, not converged). Once the Service reports Ready
    (as a load balancer controller would set it), the Deployment is recreated on the new
    revision, the old revision is deleted, and the route is `OnLatestRevision`."""
    ns = keip_namespace
    with keip_webhook(tmp_path / "webhook.log") as url:
        controllers = [pointed(CORE, url, tmp_path)]
        world = keip_world(backend, tmp_path, controllers, EXAMPLES["basic"], ns)
        made = world.run("--max-duration", "60")
        assert made.returncode == 0 and report(made)["converged"], made.stdout[-6000:]
        _change_route_config(world, ns)

        # the wait is polled for after --poll-interval: longer than the budget, so this run
        # ends after the one pass that wrote and the one that found only the wait
        waiting = world.run("--max-duration", "30", "--poll-interval", "60")
        assert waiting.returncode == 0, waiting.stdout[-6000:] + waiting.stderr[-3000:]
        run = report(waiting)
        assert run["errors"] == [] and not run["converged"] and run["interrupted"] is None
        assert [d for d in run["dueNextRun"] if "Service testroute-actuator" in d], run
        done = {(a["action"], a["object"]["kind"]) for a in actions(run) if a["state"] == "applied"}
        assert done == {
            ("create", "ControllerRevision"),
            ("update", "ControllerRevision"),
            ("status", "IntegrationRoute"),
        }, done
        assert _mounted_config(world, ns) == "testroute-xml"
        old, new = sorted(
            _revisions(run), key=lambda r: "Service testroute-actuator" in r["children"]
        )
        assert old["children"] == ["Deployment testroute"], old
        assert new["children"] == ["Service testroute-actuator"], new
        parent_patch = world.read("controllerrevisions.metacontroller.k8s.io", ns, new["name"])
        assert parent_patch["parentPatch"] == {"spec": {"routeConfigMap": "testroute-xml-v2"}}
        status = world.read("integrationroutes.keip.octo.com", ns, "testroute")["status"]
        (updated,) = status["conditions"]
        assert (updated["type"], updated["status"], updated["reason"]) == (
            "Updated",
            "False",
            "RolloutWaiting",
        )
        assert "Service testroute-actuator" in updated["message"], updated
        assert "Ready" in updated["message"], updated

        # the Service passes its check: the Deployment moves, is recreated, the rollout ends
        service = world.read("services", ns, "testroute-actuator")
        service["status"] = {
            "loadBalancer": {},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Serving",
                    "message": "",
                    "lastTransitionTime": "2025-01-01T00:00:00Z",
                }
            ],
        }
        world.write("services", service, status=True)
        rolled = world.run("--max-duration", "60")
        assert rolled.returncode == 0, rolled.stdout[-6000:] + rolled.stderr[-3000:]
        run = report(rolled)
        assert run["errors"] == [] and run["converged"], run["errors"]
        deployment_actions = [
            a["action"] for a in actions(run) if a["object"]["kind"] == "Deployment"
        ]
        assert deployment_actions == ["delete", "create"], deployment_actions
        assert _mounted_config(world, ns) == "testroute-xml-v2"
        (latest,) = _revisions(run)
        assert latest == {**latest, "name": new["name"]}
        status = world.read("integrationroutes.keip.octo.com", ns, "testroute")["status"]
        (updated,) = status["conditions"]
        assert (updated["status"], updated["reason"]) == ("True", "OnLatestRevision")
        assert updated["message"] == f"latest ControllerRevision: {new['name']}"
        quiet(world, backend)


def test_keip_rollout_waiting_past_budget_exits_0(
    backend: Backend, tmp_path: Path, keip_namespace: str
) -> None:
    """The README: a real run that ends its time budget while only waiting between passes
    exits 0 and lists what is due at the next run. Here the wait is the rollout above, polled
    every half second for ten seconds."""
    with keip_webhook(tmp_path / "webhook.log") as url:
        world = keip_world(
            backend, tmp_path, [pointed(CORE, url, tmp_path)], EXAMPLES["basic"], keip_namespace
        )
        assert world.run("--max-duration", "60").returncode == 0
        _change_route_config(world, keip_namespace)
        waiting = world.run("--max-duration", "10", "--poll-interval", "0.5")
    run = report(waiting)
    assert run["errors"] == [] and run["stopped"] is None, run["stopped"]
    assert [d for d in run["dueNextRun"] if "Service testroute-actuator" in d], run
    assert waiting.returncode == 0, waiting.stdout[-3000:]
