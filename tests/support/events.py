"""Reading the Events a run recorded."""

from __future__ import annotations

from reconcile.cluster import list_all
from tests.support.backends import Backend


def sync_errors(backend: Backend, namespace: str, name: str) -> list[str]:
    """The messages of the SyncError Events recorded on the object `name` of `namespace`."""
    events = backend.admin.discover("v1", "events")
    return [
        str(e.get("message"))
        for e in list_all(backend.admin, events, namespace=namespace).items
        if e.get("involvedObject", {}).get("name") == name and e.get("reason") == "SyncError"
    ]
