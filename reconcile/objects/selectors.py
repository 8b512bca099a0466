"""Label and field selectors: parsing the string forms and matching objects (no I/O).

Follows k8s.io/apimachinery: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`.
"""

from __future__ import annotations

from typing import Any

from reconcile.objects.lazy_pattern import on_first_use
from reconcile.objects.meta import Obj, metadata
from reconcile.records import dataclass


class SelectorError(ValueError):
    """A selector that cannot be parsed; the message names the offending part."""


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Equals, NotEquals
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.operator in ("In", "Equals"):
            return present and value in self.values
        if self.operator in ("NotIn", "NotEquals"):
            return not present or value not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        raise SelectorError(f"unknown operator {self.operator!r}")

    def render(self) -> str:
        if self.operator == "Equals":
            return f"{self.key}={self.values[0]}"
        if self.operator == "NotEquals":
            return f"{self.key}!={self.values[0]}"
        if self.operator == "Exists":
            return self.key
        if self.operator == "DoesNotExist":
            return f"!{self.key}"
        op = "in" if self.operator == "In" else "notin"
        return f"{self.key} {op} ({','.join(self.values)})"


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def from_labels(cls, labels: dict[str, str]) -> LabelSelector:
        """The selector matching exactly these labels (`matchLabels`)."""
        return cls(tuple(Requirement(k, "Equals", (v,)) for k, v in sorted(labels.items())))

    def matches_labels(self, labels: dict[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    def matches(self, obj: Obj) -> bool:
        labels = metadata(obj).get("labels")  # only read: no copy (labels_of makes one)
        return self.matches_labels(labels if isinstance(labels, dict) else {})

    def render(self) -> str:
        return ",".join(r.render() for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_KEY_RE = on_first_use(rf"^{_KEY}$")
_VALUE_RE = on_first_use(rf"^{_VALUE}$")


def _check_key(key: str, where: str) -> str:
    if not _KEY_RE().match(key):
        raise SelectorError(f"{where}: invalid label key {key!r}")
    return key


def _check_value(value: str, where: str) -> str:
    if len(value) > 63 or not _VALUE_RE().match(value):
        raise SelectorError(f"{where}: invalid label value {value!r}")
    return value


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


_SET_RE = on_first_use(r"^\s*(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^)]*)\)\s*$")


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse the string form used by `kubectl -l` and the API's `labelSelector` parameter."""
    if text is None or not text.strip():
        return LabelSelector()
    requirements: list[Requirement] = []
    for raw in _split_top_level(text):
        part = raw.strip()
        if not part:
            raise SelectorError(f"label selector {text!r}: empty requirement")
        where = f"label selector {text!r}"
        set_match = _SET_RE().match(part)
        if set_match:
            key = _check_key(set_match["key"], where)
            values = tuple(
                sorted(
                    _check_value(v.strip(), where)
                    for v in set_match["values"].split(",")
                    if v.strip()
                )
            )
            if not values:
                raise SelectorError(f"{where}: {part!r} needs at least one value")
            op = "In" if set_match["op"] == "in" else "NotIn"
            requirements.append(Requirement(key, op, values))
        elif "!=" in part:
            key, value = (s.strip() for s in part.split("!=", 1))
            requirements.append(
                Requirement(_check_key(key, where), "NotEquals", (_check_value(value, where),))
            )
        elif "=" in part:
            key, value = (s.strip() for s in part.split("==" if "==" in part else "=", 1))
            requirements.append(
                Requirement(_check_key(key, where), "Equals", (_check_value(value, where),))
            )
        elif part.startswith("!"):
            requirements.append(Requirement(_check_key(part[1:].strip(), where), "DoesNotExist"))
        else:
            requirements.append(Requirement(_check_key(part, where), "Exists"))
    return LabelSelector(tuple(requirements))


_EXPRESSION_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}


def label_selector_from_spec(spec: Any, where: str = "selector") -> LabelSelector:
    """Convert a `metav1.LabelSelector` dict (`matchLabels`, `matchExpressions`).

    `None` means "nothing selected" in the API, but callers decide that; here it is empty.
    """
    if spec is None:
        return LabelSelector()
    if not isinstance(spec, dict):
        raise SelectorError(f"{where}: must be an object with matchLabels / matchExpressions")
    requirements: list[Requirement] = []
    match_labels = spec.get("matchLabels") or {}
    if not isinstance(match_labels, dict):
        raise SelectorError(f"{where}.matchLabels: must be a map of strings")
    for key, value in sorted(match_labels.items()):
        requirements.append(
            Requirement(
                _check_key(str(key), f"{where}.matchLabels"),
                "Equals",
                (_check_value(str(value), f"{where}.matchLabels[{key}]"),),
            )
        )
    expressions = spec.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise SelectorError(f"{where}.matchExpressions: must be a list")
    for i, expr in enumerate(expressions):
        at = f"{where}.matchExpressions[{i}]"
        if not isinstance(expr, dict):
            raise SelectorError(f"{at}: must be an object")
        key = _check_key(str(expr.get("key", "")), f"{at}.key")
        op = expr.get("operator")
        if op not in _EXPRESSION_OPERATORS:
            raise SelectorError(
                f"{at}.operator: {op!r} is not one of In, NotIn, Exists, DoesNotExist"
            )
        values = tuple(sorted(str(v) for v in (expr.get("values") or [])))
        if op in ("In", "NotIn") and not values:
            raise SelectorError(f"{at}.values: required for operator {op}")
        if op in ("Exists", "DoesNotExist") and values:
            raise SelectorError(f"{at}.values: must be empty for operator {op}")
        requirements.append(Requirement(key, str(op), values))
    return LabelSelector(tuple(requirements))


@dataclass(frozen=True)
class FieldRequirement:
    path: str
    value: str
    negate: bool

    def matches(self, obj: Obj) -> bool:
        actual = field_value(obj, self.path)
        return (actual != self.value) if self.negate else (actual == self.value)


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, obj: Obj) -> bool:
        return all(r.matches(obj) for r in self.requirements)


def field_value(obj: Obj, path: str) -> str:
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, dict):
            return ""
        current = current.get(part)
    if current is None:
        return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


def parse_field_selector(text: str | None) -> FieldSelector:
    if text is None or not text.strip():
        return FieldSelector()
    requirements: list[FieldRequirement] = []
    for raw in text.split(","):
        part = raw.strip()
        if "!=" in part:
            path, value = part.split("!=", 1)
            negate = True
        elif "==" in part:
            path, value = part.split("==", 1)
            negate = False
        elif "=" in part:
            path, value = part.split("=", 1)
            negate = False
        else:
            raise SelectorError(f"field selector {text!r}: {part!r} is not key=value or key!=value")
        requirements.append(FieldRequirement(path.strip(), value.strip(), negate))
    return FieldSelector(tuple(requirements))
