"""Typed readers for raw spec dicts that raise `SpecError` naming the field."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from difflib import SequenceMatcher
from typing import Any

from reconcile.objects.terminal import one_line
from reconcile.specs.errors import SpecError

# How alike (difflib's ratio, case aside) an unknown field's name must be to a known one to be
# read as its misspelling: `childResource` (0.96), `synch` (0.89), `resyncPeriod` (0.77: not).
NEAR_MISS = 0.8
IGNORED = "unknown field, ignored (Metacontroller ignores the fields it does not know)"


def near_miss(key: str, known: Iterable[str]) -> str | None:
    """The known field `key` most likely misspells, if any."""
    best, score = None, 0.0
    for name in sorted(known):
        ratio = SequenceMatcher(None, key.lower(), name.lower()).ratio()
        if ratio > score:
            best, score = name, ratio
    return best if score >= NEAR_MISS else None


class Fields:
    """A view of one JSON object at `path` inside the object named `where`. `notes` collects
    the warnings of the whole object (fields read and ignored), shared by every view of it."""

    def __init__(self, where: str, path: str, data: Any, notes: list[str] | None = None) -> None:
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise SpecError(where, path or "(root)", f"must be an object, not {_type(data)}")
        self.where = where
        self.path = path
        self.data: dict[str, Any] = data
        self.notes: list[str] = [] if notes is None else notes

    def at(self, key: str) -> str:
        key = one_line(key)  # a key from input: shown on one line, whatever it holds
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str, message: str) -> SpecError:
        return SpecError(self.where, self.at(key), message)

    def warn(self, key: str, message: str) -> None:
        self.notes.append(f"{self.where}: {self.at(key)}: {message}")

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def child(self, key: str) -> Fields:
        return Fields(self.where, self.at(key), self.data.get(key), self.notes)

    def optional_child(self, key: str) -> Fields | None:
        return self.child(key) if self.has(key) else None

    def children(self, key: str) -> list[Fields]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(key, f"must be a list, not {_type(value)}")
        return [
            Fields(self.where, f"{self.at(key)}[{i}]", item, self.notes)
            for i, item in enumerate(value)
        ]

    def string(self, key: str, default: str | None = None) -> str:
        value = self.data.get(key)
        if value is None:
            if default is None:
                raise self.error(key, "is required")
            return default
        if not isinstance(value, str) or (not value and default is None):
            raise self.error(key, f"must be a non-empty string, not {value!r}")
        return value

    def optional_string(self, key: str) -> str | None:
        return self.string(key) if self.has(key) else None

    def boolean(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, not {value!r}")
        return value

    def number(self, key: str, *, minimum: float | None = None) -> float | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"must be a number, not {value!r}")
        if minimum is not None and not value >= minimum:
            raise self.error(key, f"must be at least {minimum}, not {value}")
        try:
            return float(value)
        except OverflowError:
            raise self.error(key, f"is too large: {str(value)[:20]}...") from None

    def strings(self, key: str) -> list[str]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(key, "must be a list of strings")
        return list(value)

    def string_map(self, key: str) -> dict[str, str]:
        value = self.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise self.error(key, "must be a map of strings to strings")
        return dict(value)

    def check_keys(
        self,
        known: set[str],
        *,
        ignored: Mapping[str, str] | None = None,
        unsupported: Mapping[str, str] | None = None,
    ) -> None:
        """Metacontroller's decoder ignores the fields it does not know, and so does this one,
        with a warning naming the field; but a near miss of a field read here (`childResource`
        for `childResources`, `Hooks` for `hooks`) is refused as the misspelling it most likely
        is, saying which field was meant. `ignored`: fields Metacontroller knows and does
        nothing with (a warning says why); `unsupported`: fields Metacontroller implements and
        this tool does not (refused saying why)."""
        ignored, unsupported = ignored or {}, unsupported or {}
        for raw in self.data:
            key = str(raw)
            if key in known:
                continue
            if key in unsupported:
                raise self.error(key, f"not supported: {unsupported[key]}")
            if key in ignored:
                self.warn(key, f"ignored: {ignored[key]}")
                continue
            meant = near_miss(key, {*known, *ignored, *unsupported})
            if meant is not None:
                raise self.error(key, f"unknown field: did you mean {self.at(meant)}?")
            self.warn(key, IGNORED)


def _type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
