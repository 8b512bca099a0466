"""Typed readers for raw spec dicts that raise `SpecError` naming the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconcile.specs.errors import SpecError


class Fields:
    """A view of one JSON object at `path` inside the object named `where`."""

    def __init__(self, where: str, path: str, data: Any) -> None:
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise SpecError(where, path or "(root)", f"must be an object, not {_type(data)}")
        self.where = where
        self.path = path
        self.data: dict[str, Any] = data

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str, message: str) -> SpecError:
        return SpecError(self.where, self.at(key), message)

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def child(self, key: str) -> Fields:
        return Fields(self.where, self.at(key), self.data.get(key))

    def optional_child(self, key: str) -> Fields | None:
        return self.child(key) if self.has(key) else None

    def children(self, key: str) -> list[Fields]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(key, f"must be a list, not {_type(value)}")
        return [Fields(self.where, f"{self.at(key)}[{i}]", item) for i, item in enumerate(value)]

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

    def reject_unknown(
        self, allowed: set[str], unsupported: Mapping[str, str] | None = None
    ) -> None:
        """Every key is `allowed`; a key of `unsupported` (Metacontroller's fields this tool
        does not implement) is refused saying why."""
        for key in self.data:
            if unsupported and key in unsupported:
                raise self.error(key, f"not supported: {unsupported[key]}")
            if key not in allowed:
                raise self.error(
                    key, f"unknown field (expected one of: {', '.join(sorted(allowed))})"
                )


def _type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
