"""CompositeController, pure: one parent's story in one package, read in this order.

- `kind.py`: the kind's pieces of a pass, step by step (resources, parents, observe, the hook
  requests, the answers as one, the plan);
- `sync.py`: one parent's selector, claims, sync request and plan (children, status,
  finalizer);
- with rolling updates, `rollout_revisions.py` (the live revisions, and the ControllerRevision
  writes), `rollout.py` (which child moves next) and `revisions.py` (the revision values and
  the readiness checks). They are imported by controllers with a rolling child rule only.
"""
