"""The in-process `memory` backend: a Kubernetes API server of a chosen release
(`resources.releases`; default the newest supported) with its garbage collector and namespace
controller, in memory.

It is the embedded default (`reconcile --local DIR`, seeded and dumped by `reconcile.files`)
and the fast test backend. Known differences from a real cluster:

- built-in kinds are decoded against the release's OpenAPI schemas, defaulted and validated
  (`strategies.admission`, and per kind family `strategies.kinds`), but only the rules listed
  there are checked; custom resources are pruned, defaulted and validated by their CRD's schema,
  but not every schema keyword is checked (see `strategies.custom_resource`);
- `managedFields` and server-side apply follow structured-merge-diff (`registry.fieldmanager`)
  for the
  list and map types the schemas declare, but an update's entry never owns a map itself (a real
  one owns maps it created, `.`), and entries keep no history of older apiVersions;
- no controllers beyond the garbage
  collector, the namespace controller and the CRD finalizer (no pods from deployments, no
  default service accounts or `kube-root-ca.crt` config maps);
- creating an object that carries a resourceVersion is a 400 here (a 500 on the 1.20 server);
- core `v1` events and `events.k8s.io/v1` events are stored apart (one store in a real server);
  every other resource a release serves under several versions (or groups) is one set of
  objects, converted as the server converts them (`endpoints.versions`, `conversion`);
- the controllers run synchronously inside the request that triggers them, so a client sees the
  state the real cluster converges to, without the intermediate ones;
- a `continue` token whose snapshot was evicted continues from the current data instead of
  failing with 410 Gone.

Its layers, kube-apiserver's seams, each importing only those below it (an import-linter
contract holds them): `server` (the `Cluster` protocol served) > `endpoints` (versions, field
selectors) > `registry` (the write path, field ownership) > `controllers` (deletion, garbage
collection) > `strategies` (admission and per-kind rules) > `conversion` (between versions) >
`resources` (what each release serves, discovery) > `cel` | `openapi` (CRD rules; schemas) >
`validation` (field errors, names, metadata) > `golang` | `storage` (Go's formats; the store).

This module is the package's one face: nothing outside it imports its internals (a contract
holds that too). It gives the server, its releases, the names of the resources it seeds, and
the checks of one object against a schema that the tests hold to the API server's words.
"""

from reconcile.cluster.memory.golang.printing import go_float, go_json, go_quote, go_sharp
from reconcile.cluster.memory.openapi.embedded import embedded_resource_errors
from reconcile.cluster.memory.openapi.formats import format_check, kept_format
from reconcile.cluster.memory.openapi.listtypes import list_type_errors
from reconcile.cluster.memory.openapi.validator import schema_errors
from reconcile.cluster.memory.resources.catalog import BUILTIN_NAMESPACES, CRDS, NAMESPACES
from reconcile.cluster.memory.resources.releases import Release, UnsupportedVersion, release
from reconcile.cluster.memory.server import MemoryCluster
from reconcile.cluster.memory.strategies.custom_resource import apply_schema

__all__ = [
    "BUILTIN_NAMESPACES",
    "CRDS",
    "NAMESPACES",
    "MemoryCluster",
    "Release",
    "UnsupportedVersion",
    "apply_schema",
    "embedded_resource_errors",
    "format_check",
    "go_float",
    "go_json",
    "go_quote",
    "go_sharp",
    "kept_format",
    "list_type_errors",
    "release",
    "schema_errors",
]
