"""Spec errors that name the object and the field."""

from __future__ import annotations


class SpecError(ValueError):
    """An invalid controller spec: `where` names the object (e.g. `CompositeController hello`),
    `field` the JSON path (e.g. `spec.hooks.sync.webhook.timeout`)."""

    def __init__(self, where: str, field: str, message: str) -> None:
        super().__init__(f"{where}: {field}: {message}")
        self.where = where
        self.field = field
        self.message = message

    @classmethod
    def at_path(cls, where: str, field: str, message: str) -> SpecError:
        """A SpecError from a message that may start with its own, deeper path (a selector's
        `spec.x.matchExpressions[0].key: ...`): that path is the field, named once."""
        path, _, rest = message.partition(": ")
        if rest and (path == field or path.startswith((f"{field}.", f"{field}["))):
            return cls(where, path, rest)
        return cls(where, field, message)
