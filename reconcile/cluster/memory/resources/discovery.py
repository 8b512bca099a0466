"""Discovery: the resources served, built-in and from CRDs, looked up within an apiVersion by
plural, singular, short name or kind, exactly as the live backend looks names up; which version
each resource's objects are stored as (a resource served under a second group, ingresses under
`extensions`, is stored with its first group's); and the 404 for a version a release before
this one removed, which says so."""

from __future__ import annotations

import re

from reconcile.cluster.discovery import find_resource
from reconcile.cluster.errors import NotFound
from reconcile.cluster.memory.resources.served import ALIASES, removal
from reconcile.cluster.types import ResourceInfo

_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")


def version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes' order of versions, highest first when sorted: GA, then beta, then alpha,
    each by number (`v2` before `v1`, `v1beta2` before `v1beta1`); anything else last."""
    match = _VERSION.fullmatch(version)
    if match is None:
        return (3, 0, 0)
    level = {None: 0, "beta": 1, "alpha": 2}[match.group(2)]
    return (level, -int(match.group(1)), -int(match.group(3) or 0))


class ResourceRegistry:
    def __init__(
        self,
        builtin: tuple[ResourceInfo, ...],
        storage: dict[str, ResourceInfo] | None = None,
        *,
        minor: int = 0,
    ) -> None:
        """`storage`: group/resource -> the version its objects are stored as (default: the
        first of `builtin`); `minor`: the release, for the words of a 404."""
        # apiVersion -> plural -> resource, for everything served
        self._served: dict[str, dict[str, ResourceInfo]] = {}
        # group_resource -> the resource objects are stored as (for CRDs: the storage version)
        self._storage: dict[str, ResourceInfo] = dict(storage or {})
        self._custom: set[str] = set()
        self._minor = minor
        for info in builtin:
            self._served.setdefault(info.api_version, {})[info.resource] = info
            if info.group_resource not in ALIASES:
                self._storage.setdefault(info.group_resource, info)

    def discover(self, api_version: str, resource: str) -> ResourceInfo:
        candidates = self._served.get(api_version, {})
        found = candidates.get(resource) or find_resource(list(candidates.values()), resource)
        if found is None:
            why = removal(self._minor, api_version, resource)
            raise NotFound(
                f'the server doesn\'t have a resource type "{resource}" in apiVersion '
                f'"{api_version}"' + (f": {why}" if why else "")
            )
        return found

    def preferred_version(self, group: str) -> str:
        """The version the API server prefers for the group: a CRD's group, its storage
        version; a built-in group, its highest version served; NotFound when the group is not
        served."""
        custom = sorted(
            {
                info.api_version
                for gr, info in self._storage.items()
                if info.group == group and gr in self._custom
            }
        )
        if custom:
            return custom[-1]
        versions = {
            info.version
            for by in self._served.values()
            for info in by.values()
            if info.group == group
        }
        if not versions:
            raise NotFound(f"the server could not find the requested resource (group {group!r})")
        best = min(versions, key=version_priority)
        return f"{group}/{best}" if group else best

    def served_resources(self) -> list[ResourceInfo]:
        """Each resource once, in its group's preferred version (a resource served under a
        second group once more, as the API server lists it there too)."""
        out = []
        keys = [*self._storage, *(a for a in ALIASES if self._alias_served(a))]
        for group_resource in sorted(keys):
            info = self._storage.get(group_resource) or self._alias_served(group_resource)
            assert info is not None
            preferred = self.preferred_version(info.group)
            served = self._served.get(preferred, {}).get(info.resource)
            out.append(served or info)
        return out

    def _alias_served(self, group_resource: str) -> ResourceInfo | None:
        for by_plural in self._served.values():
            for info in by_plural.values():
                if info.group_resource == group_resource:
                    return info
        return None

    def api_resources(self) -> dict[str, list[ResourceInfo]]:
        """Every group version served, with its resources: discovery's documents."""
        return {api_version: list(by.values()) for api_version, by in sorted(self._served.items())}

    def stored(self, info: ResourceInfo) -> ResourceInfo:
        """The resource `info`'s objects are stored as."""
        found = self._storage.get(ALIASES.get(info.group_resource, info.group_resource))
        if found is None:  # pragma: no cover - callers pass served resources
            raise NotFound(f"the server could not find the resource {info.group_resource}")
        return found

    def served(self, resource: ResourceInfo) -> ResourceInfo:
        """The registered description of a resource a caller names (NotFound when not served,
        e.g. its CRD is gone): the registry, not the caller's copy, is authoritative."""
        found = self._served.get(resource.api_version, {}).get(resource.resource)
        if found is None:
            raise NotFound("the server could not find the requested resource")
        return found

    def storage(self, group_resource: str) -> ResourceInfo | None:
        return self._storage.get(group_resource)

    def is_custom(self, group_resource: str) -> bool:
        return group_resource in self._custom

    def register_custom(self, storage: ResourceInfo, served: list[ResourceInfo]) -> None:
        """Serve a CRD's versions (replacing what it served before). A built-in resource of the
        same name is never shadowed."""
        group_resource = storage.group_resource
        if group_resource in self._storage and group_resource not in self._custom:
            return
        self.unregister_custom(group_resource)
        self._custom.add(group_resource)
        self._storage[group_resource] = storage
        for info in served:
            self._served.setdefault(info.api_version, {})[info.resource] = info

    def unregister_custom(self, group_resource: str) -> None:
        if group_resource not in self._custom:
            return
        self._custom.discard(group_resource)
        del self._storage[group_resource]
        for api_version in list(self._served):
            by_plural = self._served[api_version]
            for plural, info in list(by_plural.items()):
                if info.group_resource == group_resource:
                    del by_plural[plural]
            if not by_plural:
                del self._served[api_version]
