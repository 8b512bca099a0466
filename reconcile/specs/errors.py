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
