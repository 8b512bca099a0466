"""The in-process `memory` backend: a Kubernetes API server of a chosen release (`releases`;
default the newest supported) with its garbage collector and namespace controller, in memory.

It is the embedded default (`reconcile --local DIR`, seeded and dumped by `reconcile.files`)
and the fast test backend. Known differences from a real cluster:

- built-in kinds are decoded against the release's OpenAPI schemas, defaulted and validated
  (`admission`, and per kind family `kinds`), but only the rules listed there are checked;
  custom resources are pruned, defaulted and validated by their CRD's schema, but not every
  schema keyword is checked (see `schema`);
- `managedFields` and server-side apply follow structured-merge-diff (`ownership`) for the
  list and map types the schemas declare, but an update's entry never owns a map itself (a real
  one owns maps it created, `.`), and entries keep no history of older apiVersions;
- no controllers beyond the garbage
  collector, the namespace controller and the CRD finalizer (no pods from deployments, no
  default service accounts or `kube-root-ca.crt` config maps);
- creating an object that carries a resourceVersion is a 400 here (a 500 on the 1.20 server);
- core `v1` events and `events.k8s.io/v1` events are stored apart (one store in a real server);
  every other resource a release serves under several versions (or groups) is one set of
  objects, converted as the server converts them (`versions`, `conversion`);
- the controllers run synchronously inside the request that triggers them, so a client sees the
  state the real cluster converges to, without the intermediate ones;
- a `continue` token whose snapshot was evicted continues from the current data instead of
  failing with 410 Gone.
"""

from reconcile.cluster.memory.cluster import MemoryCluster

__all__ = ["MemoryCluster"]
