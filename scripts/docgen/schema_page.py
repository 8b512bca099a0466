"""The JSON report's reference, rendered from its JSON Schema (shipped in the package as
`reconcile/report/report.schema.json`, which the tests hold real reports to): one table per
object, every key with its type and meaning."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

from docgen.markdown import code, page, table

Schema = dict[str, Any]


def report_schema() -> Schema:
    loaded: Schema = json.loads((files("reconcile.report") / "report.schema.json").read_text())
    return loaded


class Renderer:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.sections: list[tuple[str, Schema]] = []  # (title, object schema), in order

    def resolve(self, node: Schema) -> Schema:
        if "$ref" in node:
            target: Schema = self.schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
            return target
        return node

    def object_of(self, node: Schema) -> Schema | None:
        """The object schema `node` holds (itself, an array's items, a nullable object)."""
        node = self.resolve(node)
        if node.get("type") == "array":
            return self.object_of(node.get("items", {}))
        for branch in node.get("oneOf", []):
            if branch.get("type") == "object":
                return self.object_of(branch)
        if node.get("type") == "object" and "properties" in node:
            return node
        return None

    def kind(self, node: Schema) -> str:
        node = self.resolve(node)
        if "const" in node:
            return f"{code(json.dumps(node['const']))}"
        if "enum" in node:
            return " or ".join(code(json.dumps(v)) for v in node["enum"])
        if "oneOf" in node:
            return " or ".join(self.kind(b) for b in node["oneOf"])
        kind = node.get("type")
        if kind == "array":
            return self.kind(node.get("items", {})) + "[]"
        if kind == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                return f"object: string → {self.kind(extra)}"
            return "object"
        if isinstance(kind, list):
            return " or ".join(kind)
        return kind or "any JSON"

    def render(self, title: str, node: Schema) -> None:
        if any(t == title for t, _ in self.sections):
            return
        self.sections.append((title, node))
        for key, sub in node.get("properties", {}).items():
            inner = self.object_of(sub)
            if inner is None or self._plain(inner):
                continue
            resolved = self.resolve(sub)
            array = resolved.get("type") == "array"
            name = (
                inner.get("title")
                or f"{'' if title == 'Top level' else title + '.'}{key}{'[]' if array else ''}"
            )
            self.render(name, inner)

    def _plain(self, node: Schema) -> bool:
        """An object whose keys are all numbers without meanings: shown in its parent's row."""
        return all(
            not sub.get("description") and sub.get("type") == "integer"
            for sub in node.get("properties", {}).values()
        )

    def rows(self, node: Schema) -> list[list[str]]:
        out = []
        for key, sub in node.get("properties", {}).items():
            meaning = sub.get("description") or self.resolve(sub).get("description", "")
            inner = self.object_of(sub)
            if inner is not None and self._plain(inner):
                keys = ", ".join(code(k) for k in inner["properties"])
                meaning = f"{meaning} {keys}: integers.".strip()
            out.append([code(key), self.kind(sub), meaning])
        return out


def schema_page() -> str:
    schema = report_schema()
    renderer = Renderer(schema)
    renderer.render("Top level", schema)
    body: list[str] = []
    for title, node in renderer.sections:
        body += [f"## {code(title) if title != 'Top level' else title}", ""]
        if node is not schema and node.get("description"):
            body += [node["description"], ""]
        body += [*table(["Key", "Type", "Meaning"], renderer.rows(node)), ""]
    return page(
        f"The JSON report ({code(schema['properties']['schemaVersion']['const'])})",
        f"{schema['description']} Every key is always present: a missing value is `null`, an "
        "empty list `[]`. This page is rendered from the report's JSON Schema, which the package "
        "ships (`reconcile/report/report.schema.json`) and the tests hold real reports to; "
        "[Reports](../reports.md) says how to read one.",
        body,
    )
