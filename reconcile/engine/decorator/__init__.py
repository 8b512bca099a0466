"""DecoratorController, pure: one target's story in one package, read in this order.

- `kind.py`: the kind's pieces of a pass, step by step (resources, targets, observe, the hook
  request, the plan);
- `response.py`: which of a target's objects are attachments, the request, the answer read;
- `plan.py`: the target's writes (labels, annotations, finalizer, attachments, status).
"""
