"""`manifests/cronjob` and the image, checked as far as this machine allows: the kustomization
renders; every object is accepted by the real API server (server-side dry run); the CronJob is
valid for a current release; and the CronJob's command, with its options from the rendered
ConfigMap, syncs an example under the ServiceAccount's own token, which is refused what it must
not reach."""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.errors import ApiError
from reconcile.cluster.memory import MemoryCluster
from reconcile.cluster.protocol import list_all
from reconcile.objects.meta import identity, metadata
from reconcile.specs.duration import parse_duration
from tests.support.backends import Backend
from tests.support.cli import command_env, says_refused
from tests.support.controlplane import ControlPlane
from tests.support.examples import EXAMPLES, LoadedExample, load_example
from tests.support.kubectl import (
    aggregated_rules,
    kubectl,
    kustomize,
    one,
    service_account_kubeconfig,
)
from tests.support.poll import eventually

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "manifests" / "cronjob"
Obj = dict[str, Any]


def rendered() -> list[Obj]:
    return kustomize(BASE)


def test_the_kustomization_renders_a_hardened_cronjob() -> None:
    objects = rendered()
    kinds = sorted({o["kind"] for o in objects})
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "CronJob",
        "CustomResourceDefinition",
        "Namespace",
        "PersistentVolumeClaim",
        "Role",
        "RoleBinding",
        "ServiceAccount",
    ]
    options = one(objects, "ConfigMap")["data"]
    cron = one(objects, "CronJob")
    assert cron["apiVersion"] == "batch/v1"
    assert cron["metadata"]["namespace"] == "reconcile"
    spec = cron["spec"]
    assert spec["concurrencyPolicy"] == "Forbid" and spec["startingDeadlineSeconds"] > 0
    job = spec["jobTemplate"]["spec"]
    assert job["activeDeadlineSeconds"] > parse_duration(options["RECONCILE_MAX_DURATION"])
    assert job["backoffLimit"] <= 2 and job["ttlSecondsAfterFinished"] > 0
    pod = job["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    hardening = container["securityContext"]
    assert hardening["readOnlyRootFilesystem"] is True
    assert hardening["allowPrivilegeEscalation"] is False
    assert hardening["capabilities"] == {"drop": ["ALL"]}
    assert set(container["resources"]) == {"requests", "limits"}
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert mounts == {"/tmp", "/var/cache/reconcile"}  # writable, the rest is read-only
    assert container["envFrom"] == [
        {"configMapRef": {"name": one(objects, "ConfigMap")["metadata"]["name"]}}
    ]
    assert options["RECONCILE_LOCK"] == "reconcile/reconcile"  # the lock is on by default


def test_the_image_has_what_the_manifests_rely_on() -> None:
    """No container runtime here: what can be checked without building."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["reconcile"]' in dockerfile
    assert "USER 65532:65532" in dockerfile  # the CronJob's runAsUser
    assert "XDG_CACHE_HOME=/var/cache/reconcile" in dockerfile  # the cache emptyDir
    assert "git" in dockerfile.split("apt-get install", 1)[1].split("\n", 1)[0]
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'reconcile = "reconcile.cli.main:main"' in pyproject  # the entrypoint's console script
    assert 'name = "reconcile-batch"' in pyproject  # what the image installs
    for copied in ("pyproject.toml", "README.md", "LICENSE", "reconcile", "scripts"):
        assert (ROOT / copied).exists()
        assert not re.search(rf"^/?{copied}/?$", (ROOT / ".dockerignore").read_text(), re.M)
    # every stage from the one base, pinned by digest
    (base,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", dockerfile, re.M)
    assert re.fullmatch(r"python:3\.11-slim@sha256:[0-9a-f]{64}", base)
    stages = re.findall(r"^FROM (\S+)", dockerfile, re.M)
    assert stages and set(stages) == {"${PYTHON_IMAGE}"}
    labels = set(re.findall(r"(org\.opencontainers\.image\.[a-z.]+)=", dockerfile))
    assert {
        f"org.opencontainers.image.{name}"
        for name in ("title", "description", "licenses", "version", "revision", "source")
    } <= labels
    assert 'org.opencontainers.image.licenses="Apache-2.0"' in dockerfile
    assert "python /tmp/prune_schemas.py" in dockerfile  # tested below on a copy
    assert 'license = "Apache-2.0"' in pyproject
    assert (ROOT / "LICENSE").read_text().split()[:4] == ["Apache", "License", "Version", "2.0,"]


def test_the_wheel_carries_the_license(tmp_path: Path) -> None:
    """What the image (and the package index) installs is built as the image builds it."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source)
    shutil.copytree(ROOT / "reconcile", source / "reconcile")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("reconcile_batch-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (license_file,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert archive.read(license_file) == (ROOT / "LICENSE").read_bytes()
        metadata_file = next(n for n in names if n.endswith(".dist-info/METADATA"))
        assert "License-Expression: Apache-2.0" in archive.read(metadata_file).decode()


def test_the_image_keeps_only_the_schemas_local_reads(tmp_path: Path) -> None:
    """The image prunes kubernetes_validate with scripts/prune_schemas.py: run on a copy of the
    installed package, `reconcile --local` still validates against every release's schemas
    from what is left."""
    spec = importlib.util.find_spec("kubernetes_validate")
    assert spec is not None and spec.origin is not None
    site = tmp_path / "site-packages"
    shutil.copytree(Path(spec.origin).parent, site / "kubernetes_validate")
    pruned = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "prune_schemas.py"), str(site)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert re.fullmatch(r"kubernetes_validate schemas: \d+ MiB -> \d+ MiB\n", pruned.stdout)
    left = [p for p in (site / "kubernetes_validate").rglob("*.json")]
    assert left and {p.name for p in left} == {"_definitions.json"}
    for release in ("1.25", "1.37"):
        done = subprocess.run(
            [sys.executable, "-m", "reconcile", "--local", str(EXAMPLES / "hello-world"),
             "--kubernetes-version", release, "--dry-run", "--report-format", "json"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=False,
            env={**command_env(), "PYTHONPATH": f"{site}:{ROOT}"},
        )  # fmt: skip
        assert done.returncode == 2, done.stderr[-2000:]
        assert json.loads(done.stdout)["errors"] == []
    # an invalid object is still refused with the release's schema
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: default}\n"
        "spec: {replicas: many}\n"
    )
    refused = subprocess.run(
        [sys.executable, "-m", "reconcile", "--local", str(bad)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        env={**command_env(), "PYTHONPATH": f"{site}:{ROOT}"},
    )
    assert refused.returncode == 1 and "spec.replicas" in refused.stdout + refused.stderr


def test_the_cronjob_is_valid_for_a_current_release() -> None:
    """The in-process cluster as the current release, with its official schemas: every object
    of the base, the batch/v1 CronJob included, is accepted as written."""
    cluster = MemoryCluster()
    for obj in rendered():
        resource = cluster.discover(obj["apiVersion"], obj["kind"])
        try:
            cluster.create(resource, copy.deepcopy(obj))
        except ApiError as exc:
            if obj["kind"] == "CustomResourceDefinition" and exc.status == 409:
                continue
            raise AssertionError(f"{identity(obj)}: {exc}") from exc


@pytest.mark.controlplane
def test_every_object_is_accepted_by_the_api_server(control_plane: ControlPlane) -> None:
    """Server-side dry run of every object, the batch/v1 CronJob included (1.21 and later
    serve it; the current release checks its pod template as a CronJob's)."""
    objects = rendered()
    # the namespace for real: a dry run of the objects in it needs it to exist
    namespace = [o for o in objects if o["kind"] == "Namespace"]
    kubectl(control_plane, "apply", "-f", "-", stdin=yaml.safe_dump_all(namespace))
    checked = [o for o in objects if o["kind"] != "Namespace"]
    kubectl(
        control_plane, "apply", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump_all(checked)
    )
    cron = one(objects, "CronJob")
    out = kubectl(
        control_plane, "create", "--dry-run=server", "-o", "json", "-f", "-", stdin=json.dumps(cron)
    )
    template = json.loads(out)["spec"]["jobTemplate"]["spec"]["template"]
    assert template["spec"]["serviceAccountName"] == "reconcile"


def install(control_plane: ControlPlane, objects: list[Obj]) -> Iterator[list[Obj]]:
    """A rendering installed for real (but the CronJob), and the hello-world example's RBAC."""
    objects = [o for o in objects if o["kind"] != "CronJob"]
    kubectl(control_plane, "apply", "-f", "-", stdin=yaml.safe_dump_all(objects))
    kubectl(control_plane, "apply", "-f", str(EXAMPLES / "hello-world" / "rbac.yaml"))
    yield objects
    for kind, name in (
        ("clusterrolebinding", "reconcile"),
        ("clusterrole", "reconcile"),
        ("clusterrole", "reconcile-base"),
        ("clusterrole", "reconcile-hello-world"),
        ("clusterrole", "reconcile-preview-hello-world"),  # rbac.yaml's second document
    ):
        with contextlib.suppress(AssertionError):
            kubectl(control_plane, "delete", kind, name, "--wait=false")
    with contextlib.suppress(AssertionError):
        # waited for: the next test installs the namespace again
        kubectl(control_plane, "delete", "namespace", "reconcile", "--timeout=90s")


@pytest.fixture
def installed(control_plane: ControlPlane) -> Iterator[list[Obj]]:
    yield from install(control_plane, rendered())


@pytest.mark.controlplane
def test_the_cronjob_command_runs_under_its_service_account(
    control_plane: ControlPlane,
    live_backend: Backend,
    installed: list[Obj],
    tmp_path: Path,
) -> None:
    aggregated = eventually(
        lambda: aggregated_rules(live_backend, "reconcile"), what="the aggregated ClusterRole"
    )
    assert any("pods" in rule.get("resources", []) for rule in aggregated)
    example: LoadedExample = load_example(live_backend, "hello-world", "crd.yaml", "hello.yaml")
    try:
        kubeconfig = service_account_kubeconfig(control_plane, tmp_path / "sa.kubeconfig")
        # The CronJob's container: the image's entrypoint, its options from the ConfigMap, and
        # the controllers an operator points it at.
        options = one(installed, "ConfigMap")["data"]
        env = {
            **options,
            "RECONCILE_KUBECONFIG": str(kubeconfig),
            "RECONCILE_CONTROLLERS": str(EXAMPLES / "hello-world" / "controller.yaml"),
            "RECONCILE_CONTROLLER": "hello-controller",
            "RECONCILE_MAX_DURATION": "60s",
            "POD_NAME": "reconcile-28412345-abcde",
        }
        done = subprocess.run(
            [sys.executable, "-m", "reconcile"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=command_env(**env),
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert not says_refused(done.stdout + done.stderr)
        report = json.loads(done.stdout)
        assert report["errors"] == [] and report["converged"]
        assert "wrote the run record: ConfigMap reconcile/reconcile" in done.stderr
        configmaps = live_backend.admin.discover("v1", "configmaps")
        record = live_backend.admin.get(configmaps, "reconcile", namespace="reconcile")["data"]
        assert (record["outcome"], record["holder"]) == ("succeeded", env["POD_NAME"])
        pods = live_backend.admin.discover("v1", "pods")
        assert live_backend.admin.get(pods, "your-name", namespace=example.name("hello"))
        # the same token is refused what it must not reach
        refused = [
            ("get", "secrets", "-n", example.name("hello")),
            ("get", "configmaps", "-n", "kube-system"),
            ("get", "leases", "-n", "kube-system"),
            ("delete", "namespace", example.name("hello"), "--dry-run=server"),
        ]
        for args in refused:
            attempt = subprocess.run(
                ["kubectl", "--kubeconfig", str(kubeconfig), *args],
                capture_output=True,
                text=True,
                check=False,
            )
            assert attempt.returncode != 0 and "forbidden" in attempt.stderr.lower(), args
    finally:
        example.cleanup()


SHARDED = ROOT / "manifests" / "cronjob-sharded"


def test_the_sharded_variant_is_an_indexed_job_of_four_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = subprocess.run(
        ["kubectl", "kustomize", str(SHARDED)], capture_output=True, text=True, check=True
    )
    objects = [doc for doc in yaml.safe_load_all(done.stdout) if doc]
    job = one(objects, "CronJob")["spec"]["jobTemplate"]["spec"]
    assert (job["completionMode"], job["completions"], job["parallelism"]) == ("Indexed", 4, 4)
    env = {e["name"]: e.get("value") for e in job["template"]["spec"]["containers"][0]["env"]}
    assert env["RECONCILE_SHARD"] == "auto/4"
    cluster = MemoryCluster()  # valid for a current release as written
    for obj in objects:
        resource = cluster.discover(obj["apiVersion"], obj["kind"])
        with contextlib.suppress(ApiError):
            if obj["kind"] != "CronJob":
                cluster.create(resource, copy.deepcopy(obj))
    cron = one(objects, "CronJob")
    cluster.create(cluster.discover("batch/v1", "cronjobs"), copy.deepcopy(cron))
    # each Pod of the Indexed Job reads its index: two of them split hello-world's parents
    reports = []
    for index in ("0", "1"):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "reconcile",
                "--local",
                str(EXAMPLES / "hello-world"),
                "--dry-run",
                "--report-format",
                "json",
            ],
            env={**command_env(), "RECONCILE_SHARD": "auto/2", "JOB_COMPLETION_INDEX": index},
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode in (0, 2), run.stderr
        reports.append(json.loads(run.stdout))
    assert [r["shard"] for r in reports] == ["0/2", "1/2"]
    parents = [
        p["parent"] for r in reports for c in r["passes"][0]["controllers"] for p in c["parents"]
    ]
    assert parents == ["HelloWorld hello/your-name"]  # in exactly one of the two shards


@pytest.fixture
def installed_sharded(control_plane: ControlPlane) -> Iterator[list[Obj]]:
    yield from install(control_plane, kustomize(SHARDED))


@pytest.mark.controlplane
def test_every_shard_runs_under_its_service_account_holding_its_own_lease(
    control_plane: ControlPlane,
    live_backend: Backend,
    installed_sharded: list[Obj],
    tmp_path: Path,
) -> None:
    """The four Pods of a sharded run as the Indexed Job starts them: the rendered CronJob's
    environment and options, the ServiceAccount's own token, all at once; each takes its own
    Lease, and together they sync every parent exactly once."""
    eventually(lambda: aggregated_rules(live_backend, "reconcile"), what="the aggregated role")
    example = load_example(live_backend, "hello-world", "crd.yaml", "hello.yaml")
    namespace = example.name("hello")
    hellos = live_backend.admin.discover("example.com/v1", "helloworlds")
    names = ["your-name", *(f"friend-{i}" for i in range(7))]
    for name in names[1:]:
        body = {"apiVersion": "example.com/v1", "kind": "HelloWorld", "spec": {"who": name}}
        body["metadata"] = {"name": name, "namespace": namespace}
        live_backend.admin.create(hellos, body)
    try:
        kubeconfig = service_account_kubeconfig(control_plane, tmp_path / "sa.kubeconfig")
        options = one(installed_sharded, "ConfigMap")["data"]
        cron = one(kustomize(SHARDED), "CronJob")["spec"]["jobTemplate"]["spec"]
        container = cron["template"]["spec"]["containers"][0]
        pod_env = {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}
        shards = []
        for index in range(cron["completions"]):
            env = {
                **options,
                **pod_env,
                "JOB_COMPLETION_INDEX": str(index),  # what an Indexed Job sets in each Pod
                "POD_NAME": f"reconcile-28412345-{index}-abcde",
                "RECONCILE_KUBECONFIG": str(kubeconfig),
                "RECONCILE_CONTROLLERS": str(EXAMPLES / "hello-world" / "controller.yaml"),
                "RECONCILE_CONTROLLER": "hello-controller",
                "RECONCILE_MAX_DURATION": "60s",
            }
            shards.append(
                subprocess.Popen(
                    [sys.executable, "-m", "reconcile"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    cwd=tmp_path,
                    env=command_env(**env),
                )
            )
        synced: list[str] = []
        for index, shard in enumerate(shards):
            out, err = shard.communicate(timeout=120)
            assert shard.returncode == 0, out[-3000:] + err[-3000:]
            assert not says_refused(out + err)
            report = json.loads(out)
            assert report["shard"] == f"{index}/4" and report["errors"] == []
            lease = f"reconcile/reconcile-{index}-of-4"
            assert f"released the lock: Lease {lease}" in err
            assert f"wrote the run record: ConfigMap {lease}" in err
            synced += [
                p["parent"]
                for p_ in report["passes"][:1]
                for c in p_["controllers"]
                for p in c["parents"]
            ]
        assert sorted(synced) == sorted(f"HelloWorld {namespace}/{n}" for n in names)
        leases = live_backend.admin.discover("coordination.k8s.io/v1", "leases")
        held = {
            metadata(lease)["name"]
            for lease in list_all(live_backend.admin, leases, namespace="reconcile").items
        }
        assert {f"reconcile-{i}-of-4" for i in range(4)} <= held
        configmaps = live_backend.admin.discover("v1", "configmaps")
        records = [
            live_backend.admin.get(configmaps, f"reconcile-{i}-of-4", namespace="reconcile")
            for i in range(4)
        ]
        assert [r["data"]["shard"] for r in records] == [f"{i}/4" for i in range(4)]
        pods = live_backend.admin.discover("v1", "pods")
        created = list_all(live_backend.admin, pods, namespace=namespace).items
        assert {metadata(p)["name"] for p in created} == set(names)
    finally:
        example.cleanup()


# Each kustomization under manifests/, and the test that installs its rendering and runs the
# command it ships under the ServiceAccount's own token on the real control plane.
EXERCISED = {
    "cronjob": test_the_cronjob_command_runs_under_its_service_account,
    "cronjob-sharded": test_every_shard_runs_under_its_service_account_holding_its_own_lease,
    "crds": test_the_cronjob_command_runs_under_its_service_account,  # a resource of cronjob
    "preview-rbac": "tests/integration/test_preview_rbac.py",
}


def test_every_kustomization_is_exercised() -> None:
    found = {p.parent.name for p in (ROOT / "manifests").glob("*/kustomization.yaml")}
    assert found == set(EXERCISED), "a kustomization under manifests/ needs a test that runs it"
    assert "../crds" in (BASE / "kustomization.yaml").read_text()
    assert (ROOT / str(EXERCISED["preview-rbac"])).is_file()
