"""Names, namespaces, labels and annotation keys as the API server checks them, refused in a
hook's answer before anything is sent."""

from __future__ import annotations

import pytest

from reconcile.engine.responses import ResponseError, object_list, parse_sync_response
from reconcile.objects.names import metadata_problems, name_problem


@pytest.mark.parametrize(
    ("api_version", "kind", "name", "ok"),
    [
        ("v1", "ConfigMap", "web-0.config", True),
        ("v1", "ConfigMap", "Web", False),
        ("v1", "ConfigMap", "a" * 254, False),
        ("v1", "ConfigMap", "-a", False),
        ("v1", "Service", "web-0", True),
        ("v1", "Service", "web.0", False),  # a Service name is a DNS-1035 label
        ("v1", "Service", "0web", False),
        ("v1", "Namespace", "team-a", True),
        ("v1", "Namespace", "team.a", False),
        ("example.com/v1", "Gadget", "g.1", True),
        ("example.com/v1", "Gadget", "G_1", False),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "system:aggregate-to-view", True),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "a/b", False),
        ("v1", "ConfigMap", "..", False),
    ],
)
def test_names_by_kind(api_version: str, kind: str, name: str, ok: bool) -> None:
    assert (name_problem(api_version, kind, name) is None) is ok


def test_metadata_problems_name_each_field() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "Bad Name",
            "namespace": "Team",
            "labels": {"ok": "yes", "bad key!": "x", "app": "not ok!", "n": 3},
            "annotations": {"example.com/fine": "any text at all", "/x": "y"},
        },
    }
    problems = metadata_problems(obj, "children[2]")
    fields = [p.split(":", 1)[0] for p in problems]
    assert fields == [
        "children[2].metadata.name",
        "children[2].metadata.namespace",
        "children[2].metadata.labels['bad key!']",
        "children[2].metadata.labels['app']",
        "children[2].metadata.labels['n']",
        "children[2].metadata.annotations['/x']",
    ]


def test_a_key_found_good_once_is_no_pass_for_what_else_it_is_paired_with() -> None:
    """Keys and labels found good are remembered (the same few come on every object): a
    good annotation key is not thereby a good label key with any value, nor a good label
    with one value a good label with another."""
    good = {"labels": {"app": "web"}, "annotations": {"note": "any text"}}
    for _ in range(2):  # found good, then remembered: the same answer
        assert metadata_problems({"metadata": dict(good)}, "o") == []
    bad = {"labels": {"app": "not ok!", "note": "also bad!"}, "annotations": {"app": "x"}}
    problems = metadata_problems({"metadata": bad}, "o")
    assert [p.split(":", 1)[0] for p in problems] == [
        "o.metadata.labels['app']",
        "o.metadata.labels['note']",
    ]


def test_a_response_with_a_bad_name_is_refused_whole() -> None:
    problems: list[str] = []
    object_list(
        [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "UPPER"}}],
        "children",
        problems,
    )
    assert problems and problems[0].startswith("children[0].metadata.name: 'UPPER'")


@pytest.mark.parametrize(
    ("value", "accepted"),
    [(5, 5.0), (0, 0.0), (10**400, 365 * 24 * 3600.0), (float("inf"), 365 * 24 * 3600.0)],
)
def test_resync_after_is_bounded(value: float, accepted: float) -> None:
    assert parse_sync_response({"resyncAfterSeconds": value}).resync_after == accepted


@pytest.mark.parametrize("value", [-1, float("nan"), "5", True, [1]])
def test_resync_after_must_be_a_number_of_seconds(value: object) -> None:
    with pytest.raises(ResponseError, match="resyncAfterSeconds: must be a number of seconds"):
        parse_sync_response({"resyncAfterSeconds": value})


def test_server_set_metadata_has_one_home_and_the_others_are_subsets_of_it() -> None:
    from reconcile.files import dump
    from reconcile.objects.meta import DELETION_METADATA, SERVER_OWNED_METADATA, WRITE_BOOKKEEPING
    from reconcile.report import diff

    assert set(WRITE_BOOKKEEPING) <= SERVER_OWNED_METADATA
    assert DELETION_METADATA <= SERVER_OWNED_METADATA
    assert set(diff.NOISE_METADATA) == set(WRITE_BOOKKEEPING)
    assert set(dump.SERVER_METADATA) == SERVER_OWNED_METADATA - DELETION_METADATA
