"""What an action changes: the noise-free, redacted field diff between the observed object and
the object sent, as structured entries, RFC 6902 operations and diff-like YAML lines."""

from __future__ import annotations

import difflib
import json
import re
from enum import StrEnum
from typing import Any

import jsonpatch
import yaml
from yaml.nodes import ScalarNode
from yaml.representer import SafeRepresenter

from reconcile.engine.actions import Action, ActionKind
from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import WRITE_BOOKKEEPING, Obj
from reconcile.objects.redact import (
    LAST_APPLIED_ANNOTATIONS,
    redact,
    redact_secret_pair,
)
from reconcile.objects.secrets import is_secret
from reconcile.records import dataclass
from reconcile.secret_values import scrub_known

# Server-owned bookkeeping that changes on every write and says nothing about intent.
NOISE_METADATA = WRITE_BOOKKEEPING
NOISE_ANNOTATIONS: tuple[str, ...] = LAST_APPLIED_ANNOTATIONS[:1]  # Metacontroller's own

Path = tuple[str | int, ...]


class ChangeOp(StrEnum):
    ADD = "add"
    REMOVE = "remove"
    CHANGE = "change"


@dataclass(frozen=True)
class Change:
    """One changed path. `before` is None for an add, `after` None for a remove."""

    path: Path
    op: ChangeOp
    before: Any = None
    after: Any = None

    @property
    def dotted(self) -> str:
        return dotted_path(self.path)


@dataclass(frozen=True)
class ActionDiff:
    """The redacted, noise-stripped sides of an action and what changes between them."""

    before: Obj | None  # None for a create
    after: Obj | None  # None for a delete
    changes: list[Change]
    patch: list[dict[str, Any]]


def strip_noise(obj: Obj) -> Obj:
    """A copy without server bookkeeping (resourceVersion, managedFields, generation, uid,
    creationTimestamp) and without the last-applied annotation."""
    out = dict(obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in NOISE_METADATA}
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            meta["annotations"] = {
                k: v for k, v in annotations.items() if k not in NOISE_ANNOTATIONS
            }
        out["metadata"] = meta
    return out


def _drop_empty_annotations(*objs: Obj | None) -> None:
    """Drop `metadata.annotations` where it is empty (often: it held only the last-applied
    annotation), unless the other side has annotations, so the diff shows single keys."""
    metas = [o["metadata"] for o in objs if o is not None and isinstance(o.get("metadata"), dict)]
    if all(not m.get("annotations") for m in metas):
        for meta in metas:
            if meta.get("annotations") == {}:
                del meta["annotations"]


def secret_action(action: Action) -> bool:
    resource = action.resource
    if resource.kind == "Secret" and resource.group == "" and resource.version == "v1":
        return True
    return any(is_secret(o) for o in (action.before, action.after))


def action_diff(action: Action) -> ActionDiff:
    """The diff of one action, Secrets redacted. A create diffs against `{}` (every field is
    added); a delete changes nothing field-wise (the object goes away)."""
    before = strip_noise(action.before) if action.before is not None else None
    after = strip_noise(action.after) if action.after is not None else None
    _drop_empty_annotations(before, after)
    if secret_action(action):
        before, after = redact_secret_pair(before, after)
    else:
        # Objects of other kinds may still embed Secrets (e.g. a List): redact them as well.
        before = redact(before) if before is not None else None
        after = redact(after) if after is not None else None
    # a Secret's value anywhere else (an annotation, a ConfigMap built from it) is one too
    before, after = scrub_known(before), scrub_known(after)
    if action.kind is ActionKind.DELETE or after is None:
        return ActionDiff(before, None, [], [])
    base: Obj = before if before is not None and action.kind is not ActionKind.CREATE else {}
    changes = diff_values(base, after)
    patch = (
        _added(after) if not base else [dict(op) for op in jsonpatch.make_patch(base, after).patch]
    )
    return ActionDiff(
        before if action.kind is not ActionKind.CREATE else None, after, changes, patch
    )


def _added(after: Obj) -> list[dict[str, Any]]:
    """`jsonpatch.make_patch({}, after)`: one add per top-level field, in order (a create's
    patch, made directly: jsonpatch's general diff was a twentieth of a cold run's CPU)."""
    return [
        {"op": "add", "path": "/" + key.replace("~", "~0").replace("/", "~1"), "value": value}
        for key, value in after.items()
    ]


def diff_values(before: Any, after: Any, path: Path = ()) -> list[Change]:
    """Leaf-level differences; a key or list item present on one side only is one entry
    holding its whole value."""
    out: list[Change] = []
    _diff(before, after, path, out)
    return out


def _diff(before: Any, after: Any, path: Path, out: list[Change]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key, old in before.items():
            if key not in after:
                out.append(Change((*path, key), ChangeOp.REMOVE, before=old))
            else:
                _diff(old, after[key], (*path, key), out)
        for key, new in after.items():
            if key not in before:
                out.append(Change((*path, key), ChangeOp.ADD, after=new))
        return
    if isinstance(before, list) and isinstance(after, list):
        common = min(len(before), len(after))
        for i in range(common):
            _diff(before[i], after[i], (*path, i), out)
        for i in range(len(before) - 1, common - 1, -1):
            out.append(Change((*path, i), ChangeOp.REMOVE, before=before[i]))
        for i in range(common, len(after)):
            out.append(Change((*path, i), ChangeOp.ADD, after=after[i]))
        return
    if not json_equal(before, after):
        out.append(Change(path, ChangeOp.CHANGE, before=before, after=after))


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def dotted_path(path: Path) -> str:
    """`spec.template.spec.containers[0].image`; keys that are not identifiers are quoted:
    `metadata.labels["app.kubernetes.io/name"]`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


# -- YAML-ish rendering ----------------------------------------------------------------------


# libyaml's emitter when PyYAML has it (several times faster); both write the same YAML.
if hasattr(yaml, "CSafeDumper"):

    class _Dumper(yaml.CSafeDumper):
        """`|` for multi-line strings."""

else:  # pragma: no cover - PyYAML built without libyaml

    class _Dumper(yaml.SafeDumper):  # type: ignore[no-redef]
        """`|` for multi-line strings."""


def _str_representer(dumper: SafeRepresenter, data: str) -> ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_representer)


def to_yaml(value: Any) -> str:
    return yaml.dump(
        value,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 30,
    )


# Strings that YAML reads back as the same string without quotes.
_PLAIN_STR = re.compile(r"^[A-Za-z][A-Za-z0-9._/-]*$")
# YAML 1.1 booleans and null (any case): the emitter quotes these.
_YAML_WORDS = frozenset(["y", "yes", "n", "no", "true", "false", "on", "off", "null"])


def _inline(value: Any) -> str | None:
    """A scalar's YAML text without calling the emitter (None: ask the emitter)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and _PLAIN_STR.match(value) and value.lower() not in _YAML_WORDS:
        return value
    return None


def yaml_lines(label: str, value: Any) -> list[str]:
    """`label: value` as YAML, nested values on indented lines."""
    inline = _inline(value)
    if inline is not None:
        return [f"{label}: {inline}"]
    lines = to_yaml({"k": value}).splitlines()
    first = lines[0]
    assert first.startswith("k:")
    # A list under a key is written indentless (kubectl's style); under a long dotted label
    # it reads better indented.
    rest = ["  " + line for line in lines[1:]] if isinstance(value, list) else lines[1:]
    return [label + first[1:], *rest]


# A diff line: its sign ("+", "-" or " ") and its text.
DiffLine = tuple[str, str]


def diff_lines(action: Action, diff: ActionDiff) -> list[DiffLine]:
    """The diff as unified-diff-like YAML lines: a create lists the whole new object, a delete
    says `deleted`, anything else `- old` / `+ new` lines per changed path."""
    if action.kind is ActionKind.DELETE or diff.after is None:
        return [("-", "deleted")]
    if action.kind is ActionKind.CREATE:
        return [("+", line) for line in to_yaml(diff.after).splitlines()]
    if not diff.changes:
        return [(" ", "(no field changes)")]
    out: list[DiffLine] = []
    for change in diff.changes:
        label = change.dotted or "(object)"
        if change.op is ChangeOp.ADD:
            out += [("+", line) for line in yaml_lines(label, change.after)]
        elif change.op is ChangeOp.REMOVE:
            out += [("-", line) for line in yaml_lines(label, change.before)]
        elif _multiline(change.before) and _multiline(change.after):
            out += _text_diff(label, change.before, change.after)
        else:
            out += [("-", line) for line in yaml_lines(label, change.before)]
            out += [("+", line) for line in yaml_lines(label, change.after)]
    return out


def _multiline(value: Any) -> bool:
    return isinstance(value, str) and "\n" in value


def _text_diff(label: str, before: str, after: str) -> list[DiffLine]:
    out: list[DiffLine] = [(" ", f"{label}: |")]
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=2)
    first = True
    for line in list(lines)[2:]:  # past the `---` / `+++` file header
        if line.startswith("@@"):
            if not first:
                out.append((" ", "  ..."))
            first = False
            continue
        out.append((line[0], "  " + line[1:]))
    return out
