"""MapController decisions, pure: which inputs a parent selects, their map keys, the hooks'
requests and responses, the actions for each map key, and the parent's aggregated status.

Every output carries its input's map key as a label and is controlled by the parent. Each map
key is planned on its own: a key whose hook failed or whose answer is unusable changes nothing,
and the other keys go on.
"""

from __future__ import annotations

from reconcile.engine.map_controller.inputs import (
    MAP_INPUT_ANNOTATION,
    MAP_KEY_LABEL,
    Lookup,
    MapContext,
    MapInput,
    OutputType,
    SelectorProblem,
    detached_input,
    input_selector,
    map_key,
    map_request,
    outputs_by_key,
    parse_outputs,
    select_inputs,
    tombstone_request,
)
from reconcile.engine.map_controller.plan import DetachedKey, KeyPlan, LiveKey, plan_parent_outputs
from reconcile.engine.map_controller.status import aggregated_status, outputs_after, status_action

__all__ = [
    "MAP_INPUT_ANNOTATION",
    "MAP_KEY_LABEL",
    "DetachedKey",
    "KeyPlan",
    "LiveKey",
    "Lookup",
    "MapContext",
    "MapInput",
    "OutputType",
    "SelectorProblem",
    "aggregated_status",
    "detached_input",
    "input_selector",
    "map_key",
    "map_request",
    "outputs_after",
    "outputs_by_key",
    "parse_outputs",
    "plan_parent_outputs",
    "select_inputs",
    "status_action",
    "tombstone_request",
]
