"""The one conversion the API server makes to every Secret: `stringData` folded into `data`."""

from __future__ import annotations

import base64
import copy

from reconcile.objects.meta import Obj


def is_secret(obj: Obj) -> bool:
    return obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1"


def fold_string_data(obj: Obj) -> Obj:
    """A copy of a Secret with `stringData` base64-encoded into `data` (stringData wins on a
    shared key) and removed, as the API server stores it; other objects are returned as is.

    The engine compares desired children with observed ones in this form, so a hook may use
    `stringData` without every pass seeing a difference."""
    if not is_secret(obj) or not isinstance(obj.get("stringData"), dict):
        return obj
    folded = copy.deepcopy(obj)
    string_data = folded.pop("stringData")
    data = dict(folded.get("data") or {})
    for key, value in string_data.items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    folded["data"] = data
    return folded
