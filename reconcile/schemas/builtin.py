"""The OpenAPI schemas of the built-in kinds, per Kubernetes release.

From 1.25 on they are the ones the `kubernetes-validate` package installs (generated from each
release's `swagger.json`, strict variant: an object lists all its fields). 1.20's come with this
package (`data/`: `kubernetes-validate` 1.24.0's, descriptions left out), since the releases it
installs start at 1.25. A release in between is read with the nearest newer release's schemas,
and one newer than all of them with the newest: what a kind of the server's release knows is
then at worst kept where the server drops it, never dropped where it keeps it, but for fields a
release after the newest adds."""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from reconcile.releases import OLDEST_VERSION, schema_releases, schema_root

Schema = Mapping[str, Any]

REF_PREFIX = "#/$defs/"
_BUNDLED = Path(__file__).parent / "data"


@lru_cache(maxsize=4)
def definitions(release: str) -> dict[str, Any]:
    """The `$defs` of a release's schemas (`1.20`, `1.25`, ...), by definition name."""
    if release == OLDEST_VERSION:
        text = gzip.decompress((_BUNDLED / f"v{release}.0-definitions.json.gz").read_bytes())
    else:
        path = schema_root() / f"v{release}.0-local-strict" / "_definitions.json"
        text = path.read_bytes()
    loaded: dict[str, Any] = json.loads(text)
    defs: dict[str, Any] = loaded["$defs"]
    return defs


def schema_release(server: str) -> str:
    """The release whose schemas stand for a server of release `server` (`1.28`): its own,
    else the nearest newer one, else the newest."""
    known = (OLDEST_VERSION, *schema_releases())
    if server in known:
        return server
    wanted = _minor(server)
    newer = [release for release in known if _minor(release) > wanted]
    return newer[0] if newer and wanted >= 0 else known[-1]


def _minor(release: str) -> int:
    major, _, minor = release.partition(".")
    digits = "".join(c for c in minor if c.isdigit())  # `28+` on some providers
    return int(digits) if major == "1" and digits else -1


class KindSchemas:
    """The schemas of one release's built-in kinds, by `(apiVersion, kind)`."""

    def __init__(self, release: str) -> None:
        self.release = release
        self.defs = definitions(release)
        self._by_kind: dict[tuple[str, str], str] = {}
        for name, schema in self.defs.items():
            for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                group, version = gvk.get("group", ""), gvk.get("version", "")
                api_version = f"{group}/{version}" if group else version
                if "metadata" in schema.get("properties", {}):
                    self._by_kind.setdefault((api_version, gvk.get("kind", "")), name)

    def defines(self, api_version: str, kind: str) -> bool:
        return (api_version, kind) in self._by_kind

    def name(self, api_version: str, kind: str) -> str | None:
        return self._by_kind.get((api_version, kind))

    def root(self, api_version: str, kind: str) -> Schema | None:
        """The schema of a kind's objects (None for a kind the release does not define)."""
        name = self._by_kind.get((api_version, kind))
        return self.defs[name] if name is not None else None

    def resolve(self, schema: Schema) -> Schema:
        """The schema itself, or the definition its `$ref` names."""
        ref = schema.get("$ref")
        if isinstance(ref, str) and REF_PREFIX in ref:
            found = self.defs.get(ref.split(REF_PREFIX, 1)[1])
            return found if isinstance(found, Mapping) else {}
        return schema


@lru_cache(maxsize=4)
def kind_schemas(release: str) -> KindSchemas:
    """The built-in kinds' schemas a server of `release` is read with (`schema_release`)."""
    return KindSchemas(schema_release(release))
