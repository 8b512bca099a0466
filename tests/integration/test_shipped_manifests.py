"""What the manifests under manifests/ trust, as `kubectl kustomize` renders them: every image is
a fully qualified reference at the package's version (or a digest), set in one place; pointing
the kustomization at another registry and a digest leaves nothing of the default behind; the
CronJob's git cache is a claim that outlives its Jobs, and the sharded variant, whose Pods run at
once, does not share it."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.kubectl import kustomize, one

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "manifests"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
SHIPPED = "ghcr.io/acme/reconcile"
DIGEST = "sha256:" + "0123456789abcdef" * 4
Obj = dict[str, Any]


def images(objects: list[Obj]) -> list[str]:
    """Every image a rendered pod template (a Job's, a CronJob's, any workload's) names."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key in ("containers", "initContainers", "ephemeralContainers"):
                for container in value.get(key) or []:
                    found.append(str(container.get("image")))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(objects)
    return found


def split_reference(image: str) -> tuple[str, str, str | None, str | None]:
    """(registry, repository, tag, digest) as a container runtime reads a reference: the first
    component is a registry only when it has a dot or a port or is localhost."""
    rest, _, digest = image.partition("@")
    first, slash, remainder = rest.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        registry, path = first, remainder
    else:
        registry, path = "docker.io", rest if "/" in rest else f"library/{rest}"
    name, colon, tag = path.rpartition(":") if ":" in path else (path, "", "")
    return registry, name, tag if colon else None, digest or None


@pytest.mark.parametrize("kustomization", ["cronjob", "cronjob-sharded"])
def test_every_shipped_image_is_fully_qualified_at_the_package_version(kustomization: str) -> None:
    rendered = images(kustomize(MANIFESTS / kustomization))
    assert rendered, "the rendering runs no container"
    for image in rendered:
        registry, name, tag, digest = split_reference(image)
        assert image.startswith(f"{registry}/"), f"{image}: the registry is not written out"
        assert registry != "docker.io" and "library/" not in image, image
        assert (tag, digest) == (VERSION, None), f"{image}: not the package version {VERSION}"
        assert f"{registry}/{name}" == SHIPPED


def test_the_version_is_set_in_one_place() -> None:
    """The CronJob names the image without a tag; the kustomization's `images` sets it, once."""
    cronjob = (MANIFESTS / "cronjob" / "cronjob.yaml").read_text()
    named = re.findall(r"^\s*image:\s*(\S+)", cronjob, re.M)
    assert named == [SHIPPED], named  # no tag, no digest: those are the kustomization's
    kustomization = yaml.safe_load((MANIFESTS / "cronjob" / "kustomization.yaml").read_text())
    assert kustomization["images"] == [{"name": SHIPPED, "newTag": VERSION}]
    everything = "\n".join(p.read_text() for p in MANIFESTS.rglob("*.yaml"))
    assert VERSION not in everything.replace(f'newTag: "{VERSION}"', "")
    assert ":latest" not in everything and "newTag: latest" not in everything


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        # what `kustomize edit set image ghcr.io/acme/reconcile=registry.example.com/reconcile@...`
        # writes: the instruction of docs/operations.md
        (
            {"name": SHIPPED, "newName": "registry.example.com/reconcile", "digest": DIGEST},
            f"registry.example.com/reconcile@{DIGEST}",
        ),
        # a mirror with a port and a path, at a tag of its own
        (
            {
                "name": SHIPPED,
                "newName": "mirror.internal:5000/team/reconcile",
                "newTag": "0.1.0-1",
            },
            "mirror.internal:5000/team/reconcile:0.1.0-1",
        ),
        # the shipped image, pinned by digest
        ({"name": SHIPPED, "digest": DIGEST}, f"{SHIPPED}@{DIGEST}"),
    ],
)
def test_pointing_the_kustomization_at_your_own_registry_and_digest(
    tmp_path: Path, entry: dict[str, str], expected: str
) -> None:
    copy = tmp_path / "manifests"
    shutil.copytree(MANIFESTS, copy)
    path = copy / "cronjob" / "kustomization.yaml"
    kustomization = yaml.safe_load(path.read_text())
    kustomization["images"] = [entry]
    path.write_text(yaml.safe_dump(kustomization))
    for variant in ("cronjob", "cronjob-sharded"):
        assert images(kustomize(copy / variant)) == [expected], variant
    # what the documentation tells an operator to run (docs/operations.md, "The image")
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert f"kustomize edit set image {SHIPPED}=registry.example.com/reconcile@" in operations


def test_the_cronjobs_git_cache_outlives_its_jobs() -> None:
    objects = kustomize(MANIFESTS / "cronjob")
    claim = one(objects, "PersistentVolumeClaim")
    assert claim["metadata"]["namespace"] == "reconcile"
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    cron = one(objects, "CronJob")["spec"]
    assert cron["concurrencyPolicy"] == "Forbid"  # one Job at a time mounts the claim
    pod = cron["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    # the cache directory (--git-cache's default is under XDG_CACHE_HOME) is the claim
    assert mounts["cache"] == env["XDG_CACHE_HOME"]
    assert volumes["cache"]["persistentVolumeClaim"] == {"claimName": claim["metadata"]["name"]}
    assert "emptyDir" not in volumes["cache"]
    assert "emptyDir" in volumes["tmp"]  # scratch space stays per Job
    assert pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsGroup"]


def test_the_sharded_variant_does_not_share_a_read_write_once_cache() -> None:
    objects = kustomize(MANIFESTS / "cronjob-sharded")
    assert not [o for o in objects if o["kind"] == "PersistentVolumeClaim"]
    pod = one(objects, "CronJob")["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert set(volumes["cache"]) == {"name", "emptyDir"}


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("reconcile", ("docker.io", "library/reconcile", None, None)),
        ("acme/reconcile:1", ("docker.io", "acme/reconcile", "1", None)),
        ("ghcr.io/acme/reconcile:0.1.0", ("ghcr.io", "acme/reconcile", "0.1.0", None)),
        ("localhost/reconcile", ("localhost", "reconcile", None, None)),
        (f"r.example:5000/x@{DIGEST}", ("r.example:5000", "x", None, DIGEST)),
    ],
)
def test_references_are_read_as_a_runtime_reads_them(
    image: str, expected: tuple[str, str, str | None, str | None]
) -> None:
    assert split_reference(image) == expected
