"""Secret redaction (reconcile.objects.redact): pure, keys visible, values never."""

from __future__ import annotations

import copy
import json
from typing import Any

from reconcile.objects.redact import (
    REDACTED,
    REDACTED_ADDED,
    REDACTED_CHANGED,
    redact_secret_pair,
)
from reconcile.objects.secrets import is_secret
from reconcile.report import redact

LAST_APPLIED = "metacontroller.k8s.io/last-applied-configuration"
KUBECTL_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
VALUE = "c2VjcmV0LVF3ZTEyMw=="  # base64 of a distinctive value


def secret(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds", "namespace": "default"},
        "type": "Opaque",
        **fields,
    }


def test_is_secret_needs_core_v1() -> None:
    assert is_secret(secret())
    assert not is_secret({"apiVersion": "example.com/v1", "kind": "Secret"})
    assert not is_secret({"apiVersion": "v1", "kind": "ConfigMap"})
    assert not is_secret("Secret")


def test_values_replaced_keys_kept_input_untouched() -> None:
    obj = secret(data={"password": VALUE, "user": "YWRtaW4="}, stringData={"token": "raw"})
    original = copy.deepcopy(obj)
    red = redact(obj)
    assert red["data"] == {"password": REDACTED, "user": REDACTED}
    assert red["stringData"] == {"token": REDACTED}
    assert red["metadata"] == obj["metadata"]
    assert red["type"] == "Opaque"
    assert obj == original


def test_last_applied_annotations_are_redacted_inside() -> None:
    recorded = json.dumps(secret(data={"password": VALUE}))
    obj = secret(data={"password": VALUE})
    obj["metadata"]["annotations"] = {
        LAST_APPLIED: recorded,
        KUBECTL_LAST_APPLIED: recorded,
        "note": "kept",
    }
    annotations = redact(obj)["metadata"]["annotations"]
    assert VALUE not in json.dumps(annotations)
    assert json.loads(annotations[LAST_APPLIED])["data"] == {"password": REDACTED}
    assert json.loads(annotations[KUBECTL_LAST_APPLIED])["data"] == {"password": REDACTED}
    assert annotations["note"] == "kept"


def test_unparsable_last_applied_is_replaced_whole() -> None:
    obj = secret()
    obj["metadata"]["annotations"] = {LAST_APPLIED: f"not json {VALUE}"}
    assert redact(obj)["metadata"]["annotations"][LAST_APPLIED] == REDACTED


def test_nested_secrets_are_found_anywhere() -> None:
    request = {
        "parent": {"apiVersion": "example.com/v1", "kind": "WebApp"},
        "children": {"Secret.v1": {"creds": secret(data={"password": VALUE})}},
        "list": {"kind": "List", "items": [secret(data={"a": VALUE})]},
    }
    red = redact(request)
    assert VALUE not in json.dumps(red)
    assert red["children"]["Secret.v1"]["creds"]["data"] == {"password": REDACTED}
    assert red["parent"] == request["parent"]


def test_other_objects_pass_unchanged() -> None:
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"password": "visible"}}
    assert redact(configmap) == configmap
    assert redact([1, "x", None]) == [1, "x", None]


def test_non_map_data_is_redacted_whole() -> None:
    assert redact(secret(data=VALUE))["data"] == REDACTED
    assert redact(secret(data=None))["data"] is None


def test_pair_marks_changed_and_added_values() -> None:
    before = secret(data={"password": "b2xk", "user": "YWRtaW4=", "gone": "eA=="})
    after = secret(data={"password": VALUE, "user": "YWRtaW4=", "new": "eQ=="})
    red_before, red_after = redact_secret_pair(before, after)
    assert red_before is not None and red_after is not None
    assert red_before["data"] == {"password": REDACTED, "user": REDACTED, "gone": REDACTED}
    assert red_after["data"] == {
        "password": REDACTED_CHANGED,
        "user": REDACTED,
        "new": REDACTED_ADDED,
    }


def test_pair_with_one_side() -> None:
    red_before, red_after = redact_secret_pair(None, secret(data={"k": VALUE}))
    assert red_before is None
    assert red_after is not None and red_after["data"] == {"k": REDACTED}
    red_before, red_after = redact_secret_pair(secret(data={"k": VALUE}), None)
    assert red_after is None
    assert red_before is not None and red_before["data"] == {"k": REDACTED}
