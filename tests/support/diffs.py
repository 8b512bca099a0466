"""Where two JSON objects differ, as dotted paths: for test messages and assertions."""

from __future__ import annotations

import json
from typing import Any

from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import Obj


def diff_paths(before: Obj, after: Obj) -> list[str]:
    """Dotted paths of the leaves that differ, sorted.

    List items are written `[index]`; a key that is not a plain word (it holds `.`, `[`, `]`
    or `"`, or is empty) is written `["key"]`. A key present on one side only, or a value whose
    type changed, is reported once at its own path.
    """
    paths: list[str] = []
    _diff("", before, after, paths)
    return sorted(paths)


def _diff(path: str, before: Any, after: Any, out: list[str]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before.keys() | after.keys():
            child = _child_path(path, key)
            if key in before and key in after:
                _diff(child, before[key], after[key], out)
            else:
                out.append(child)
    elif isinstance(before, list) and isinstance(after, list):
        for index in range(max(len(before), len(after))):
            child = f"{path}[{index}]"
            if index < len(before) and index < len(after):
                _diff(child, before[index], after[index], out)
            else:
                out.append(child)
    elif not json_equal(before, after):
        out.append(path)


def _child_path(path: str, key: Any) -> str:
    text = str(key)
    if not text or any(c in text for c in '.[]"'):
        return f"{path}[{json.dumps(text)}]"
    return f"{path}.{text}" if path else text
