"""Reading the Events a run recorded."""

from __future__ import annotations

from reconcile.cluster import list_all
from tests.support.backends import Backend


def sync_errors(backend: Backend, namespace: str, name: str | None = None) -> list[str]:
    """The messages of the SyncError Events of `namespace` (recorded on the object `name`,
    when given)."""
    events = backend.admin.discover("v1", "events")
    return [
        str(e.get("message"))
        for e in list_all(backend.admin, events, namespace=namespace).items
        if e.get("reason") == "SyncError"
        and name in (None, e.get("involvedObject", {}).get("name"))
    ]
