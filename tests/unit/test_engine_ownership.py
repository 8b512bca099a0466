"""ControllerRef rules (reconcile.engine.ownership): classify, owner refs, claim."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconcile.engine.ownership import (
    Claim,
    ClaimResult,
    claim,
    classify,
    owner_reference,
    with_owner,
    without_owner,
)
from reconcile.objects.meta import Obj, name_of
from reconcile.objects.selectors import LabelSelector

PARENT_UID = "parent-uid"
SELECTOR = LabelSelector.from_labels({"app": "web"})
DELETED_AT = "2024-01-01T00:00:00Z"

OUR_REF: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "name": "web",
    "uid": PARENT_UID,
    "controller": True,
    "blockOwnerDeletion": True,
}
OTHER_CONTROLLER_REF: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "name": "rs",
    "uid": "rs-uid",
    "controller": True,
    "blockOwnerDeletion": True,
}
PLAIN_OWNER_REF: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "name": "cm",
    "uid": "cm-uid",
}


def make_parent(*, deleting: bool = False) -> Obj:
    meta: dict[str, Any] = {"name": "web", "namespace": "default", "uid": PARENT_UID}
    if deleting:
        meta["deletionTimestamp"] = DELETED_AT
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta}


def make_child(
    name: str = "child",
    *,
    labels: dict[str, str] | None = None,
    refs: list[dict[str, Any]] | None = None,
    deleting: bool = False,
) -> Obj:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "uid": f"{name}-uid",
        "labels": {"app": "web"} if labels is None else labels,
    }
    if refs is not None:
        meta["ownerReferences"] = copy.deepcopy(refs)
    if deleting:
        meta["deletionTimestamp"] = DELETED_AT
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"x": 1}}


MATCHING = {"app": "web"}
NOT_MATCHING = {"app": "db"}
CONTROLLERS: dict[str, list[dict[str, Any]] | None] = {
    "ours": [OUR_REF],
    "others": [OTHER_CONTROLLER_REF],
    "none": None,
}


# controller ref x selector match x parent deleting x child deleting -> verdict
CLASSIFY_TABLE: list[tuple[str, bool, bool, bool, Claim]] = [
    # ours
    ("ours", True, False, False, Claim.OWNED),
    ("ours", True, False, True, Claim.OWNED),
    ("ours", True, True, False, Claim.OWNED),
    ("ours", True, True, True, Claim.OWNED),
    ("ours", False, False, False, Claim.RELEASE),
    ("ours", False, False, True, Claim.RELEASE),
    ("ours", False, True, False, Claim.IGNORE),  # a parent being deleted releases nothing
    ("ours", False, True, True, Claim.IGNORE),
    # someone else's: never touched
    ("others", True, False, False, Claim.IGNORE),
    ("others", True, False, True, Claim.IGNORE),
    ("others", True, True, False, Claim.IGNORE),
    ("others", True, True, True, Claim.IGNORE),
    ("others", False, False, False, Claim.IGNORE),
    ("others", False, False, True, Claim.IGNORE),
    ("others", False, True, False, Claim.IGNORE),
    ("others", False, True, True, Claim.IGNORE),
    # orphans: adopted only when matching and nobody is being deleted
    ("none", True, False, False, Claim.ADOPT),
    ("none", True, False, True, Claim.IGNORE),
    ("none", True, True, False, Claim.IGNORE),
    ("none", True, True, True, Claim.IGNORE),
    ("none", False, False, False, Claim.IGNORE),
    ("none", False, False, True, Claim.IGNORE),
    ("none", False, True, False, Claim.IGNORE),
    ("none", False, True, True, Claim.IGNORE),
]


def test_the_classify_table_covers_every_combination() -> None:
    combos = {(c, m, p, d) for c, m, p, d, _ in CLASSIFY_TABLE}
    assert len(combos) == len(CLASSIFY_TABLE) == 24


@pytest.mark.parametrize(
    ("controller", "matches", "parent_deleting", "child_deleting", "expected"), CLASSIFY_TABLE
)
def test_classify(
    controller: str,
    matches: bool,
    parent_deleting: bool,
    child_deleting: bool,
    expected: Claim,
) -> None:
    parent = make_parent(deleting=parent_deleting)
    child = make_child(
        labels=MATCHING if matches else NOT_MATCHING,
        refs=CONTROLLERS[controller],
        deleting=child_deleting,
    )
    assert classify(parent, SELECTOR, child) is expected


@pytest.mark.parametrize(
    ("refs", "expected"),
    [
        # Owner references that are not controller references do not make a child "owned".
        ([PLAIN_OWNER_REF], Claim.ADOPT),
        ([{**OUR_REF, "controller": False}], Claim.ADOPT),
        ([{**OUR_REF, "controller": None}], Claim.ADOPT),
        ([PLAIN_OWNER_REF, OUR_REF], Claim.OWNED),
        ([PLAIN_OWNER_REF, OTHER_CONTROLLER_REF], Claim.IGNORE),
        # A controller ref without a uid is not ours.
        ([{k: v for k, v in OUR_REF.items() if k != "uid"}], Claim.IGNORE),
        ([], Claim.ADOPT),
    ],
)
def test_classify_looks_only_at_the_controller_reference(
    refs: list[dict[str, Any]], expected: Claim
) -> None:
    assert classify(make_parent(), SELECTOR, make_child(refs=refs)) is expected


def test_classify_without_labels_does_not_match() -> None:
    child = make_child(refs=None)
    del child["metadata"]["labels"]
    assert classify(make_parent(), SELECTOR, child) is Claim.IGNORE


def test_owner_reference() -> None:
    assert owner_reference(make_parent()) == OUR_REF


# --- with_owner / without_owner -----------------------------------------------------------


@pytest.mark.parametrize(
    ("refs", "expected"),
    [
        (None, [OUR_REF]),
        ([], [OUR_REF]),
        ([PLAIN_OWNER_REF], [PLAIN_OWNER_REF, OUR_REF]),
        # A stale reference to the same parent is replaced, not duplicated.
        ([{**OUR_REF, "controller": False}, PLAIN_OWNER_REF], [PLAIN_OWNER_REF, OUR_REF]),
        ([OUR_REF], [OUR_REF]),
    ],
)
def test_with_owner(refs: list[dict[str, Any]] | None, expected: list[dict[str, Any]]) -> None:
    child = make_child(refs=refs)
    before = copy.deepcopy(child)
    adopted = with_owner(make_parent(), child)
    assert adopted["metadata"]["ownerReferences"] == expected
    # Everything else is kept and the argument is not changed.
    assert {k: v for k, v in adopted["metadata"].items() if k != "ownerReferences"} == {
        k: v for k, v in before["metadata"].items() if k != "ownerReferences"
    }
    assert adopted["spec"] == before["spec"]
    assert child == before
    assert adopted["metadata"] is not child["metadata"]


@pytest.mark.parametrize(
    ("refs", "expected"),
    [
        ([OUR_REF], None),
        ([PLAIN_OWNER_REF, OUR_REF], [PLAIN_OWNER_REF]),
        ([OUR_REF, PLAIN_OWNER_REF], [PLAIN_OWNER_REF]),
        ([{**OUR_REF, "controller": False}], None),
        ([PLAIN_OWNER_REF], [PLAIN_OWNER_REF]),
        (None, None),
    ],
)
def test_without_owner(
    refs: list[dict[str, Any]] | None, expected: list[dict[str, Any]] | None
) -> None:
    child = make_child(refs=refs)
    before = copy.deepcopy(child)
    released = without_owner(make_parent(), child)
    if expected is None:
        assert "ownerReferences" not in released["metadata"]
    else:
        assert released["metadata"]["ownerReferences"] == expected
    assert released["metadata"]["labels"] == before["metadata"]["labels"]
    assert released["metadata"]["uid"] == before["metadata"]["uid"]
    assert child == before


# --- claim --------------------------------------------------------------------------------


def test_claim_sorts_candidates() -> None:
    parent = make_parent()
    owned = make_child("owned", refs=[OUR_REF])
    orphan = make_child("orphan", refs=[PLAIN_OWNER_REF])
    unmatched_ours = make_child("gone", labels=NOT_MATCHING, refs=[OUR_REF])
    theirs = make_child("theirs", refs=[OTHER_CONTROLLER_REF])
    unmatched_orphan = make_child("stray", labels=NOT_MATCHING)
    dying_orphan = make_child("dying", deleting=True)
    candidates = [owned, orphan, unmatched_ours, theirs, unmatched_orphan, dying_orphan]
    snapshot = copy.deepcopy(candidates)

    result = claim(parent, SELECTOR, candidates, lambda obj: f"key/{name_of(obj)}")

    assert isinstance(result, ClaimResult)
    assert result.observed == {
        "key/owned": owned,
        "key/orphan": with_owner(parent, orphan),
    }
    assert result.observed["key/orphan"]["metadata"]["ownerReferences"] == [
        PLAIN_OWNER_REF,
        OUR_REF,
    ]
    assert result.adopted == {"key/orphan": orphan}
    assert "ownerReferences" in result.adopted["key/orphan"]["metadata"]
    assert result.adopted["key/orphan"]["metadata"]["ownerReferences"] == [PLAIN_OWNER_REF]
    assert result.released == [unmatched_ours]
    assert result.foreign == {
        "key/theirs": theirs,
        "key/stray": unmatched_orphan,
        "key/dying": dying_orphan,
    }
    assert candidates == snapshot


def test_claim_for_a_parent_being_deleted_adopts_and_releases_nothing() -> None:
    parent = make_parent(deleting=True)
    owned = make_child("owned", refs=[OUR_REF])
    orphan = make_child("orphan")
    unmatched_ours = make_child("gone", labels=NOT_MATCHING, refs=[OUR_REF])
    result = claim(parent, SELECTOR, [owned, orphan, unmatched_ours], name_of)
    assert result.observed == {"owned": owned}
    assert result.adopted == {}
    assert result.released == []
    assert result.foreign == {"orphan": orphan, "gone": unmatched_ours}


def test_claim_of_nothing() -> None:
    result = claim(make_parent(), SELECTOR, [], name_of)
    assert result == ClaimResult()
