"""MapController, pure: one parent's story in one package, read in this order.

- `kind.py`: the kind's pieces of a pass, step by step (resources, parents, observe, the map
  and tombstone hook requests, the answers by map key, the plan, the status after it);
- `inputs.py`: map keys, which inputs a parent selects, the outputs by key, the requests and
  the answers read;
- `plan.py`: the actions for each map key (outputs completed and checked as every kind's owned
  objects are, `engine/owned.py`);
- `status.py`: the parent's aggregated status, counted from what the pass made.

Every output carries its input's map key as a label and is controlled by the parent. Each map
key is planned on its own: a key whose hook failed or whose answer is unusable changes nothing,
and the other keys go on.
"""
