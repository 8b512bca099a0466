"""What a kustomization names: every file, directory or URL kustomize may load for it.

kustomize loads a path or a URL from many fields: `resources`, `bases`, `components`, `crds`,
`configurations`, `generators`, `transformers`, `validators`, `patches[].path`,
`patchesStrategicMerge`, `patchesJson6902[].path`, `replacements[].path`, `openapi.path`, the
`files`, `envs` and `env` of `configMapGenerator` and `secretGenerator`, a Helm chart's
`repo`, `valuesFile` and `additionalValuesFiles`, and the same fields of the builtin plugin
configurations that generators and transformers hold inline or in files. Rather than a list of
those fields, which a new kustomize release would outgrow, every string of a kustomization is
read as a path or URL except under the keys known to hold data (names, labels, annotations,
images, literals, inline patches, targets, field specs): a field nobody listed is checked, not
skipped.

A string that spans lines is inline content, not a path (kustomize reads no path with a line
break in it); in `generators`, `transformers` and `validators` it is a plugin configuration,
and its own strings are read the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from reconcile.records import dataclass

# Keys whose values are data at any depth of a kustomization or a builtin plugin config: never
# a file or URL kustomize loads.
DATA_KEYS = frozenset(
    {
        "apiVersion",
        "kind",
        "metadata",
        "name",
        "namespace",
        "namePrefix",
        "nameSuffix",
        "prefix",
        "suffix",
        "commonLabels",
        "commonAnnotations",
        "labels",
        "annotations",
        "images",
        "imageTags",
        "imageTag",
        "replicas",
        "replica",
        "vars",
        "buildMetadata",
        "sortOptions",
        "generatorOptions",
        "options",
        "behavior",
        "type",
        "literals",
        "patch",
        "jsonOp",
        "target",
        "targets",
        "source",
        "select",
        "reject",
        "selector",
        "fieldSpecs",
        "fieldPath",
        "fieldPaths",
        "value",
        "valuesInline",
        "valuesMerge",
        "valuesLocal",
        "apiVersions",
        "unsetOnly",
        "setRoleBindingSubjects",
    }
)
# Fields whose local directories are kustomizations kustomize reads in turn.
DESCENDED = frozenset(
    {"resources", "bases", "components", "generators", "transformers", "validators"}
)
# Fields whose entries are plugin configurations: inline, in a file, or rendered by a
# kustomization in a directory.
PLUGIN_FIELDS = frozenset({"generators", "transformers", "validators"})


@dataclass(frozen=True)
class Entry:
    """A string kustomize may load as a file, a directory or a URL."""

    field: str  # where it is: `patches[0].path`, `configMapGenerator[1].files[0]`
    value: str  # as written, stripped
    top: str  # the kustomization's field it is under: `patches`

    @property
    def listed(self) -> bool:
        """Whether it is an entry of its field itself (`resources[2]`), not a field of one."""
        return self.field == self.top or (
            self.field.startswith(f"{self.top}[") and self.field.count("[") == 1
        )

    def candidates(self) -> tuple[str, ...]:
        """The paths or URLs it may be read as: itself, and (`[KEY=]PATH`, as generators'
        `files` are spelt) what follows the first `=`."""
        key, equals, rest = self.value.partition("=")
        return (self.value, rest.strip()) if equals and key and rest.strip() else (self.value,)


@dataclass(frozen=True)
class InlineConfig:
    """A plugin configuration written inline in a kustomization (a string that spans lines)."""

    field: str
    text: str


def entries(
    document: dict[str, Any], *, plugin: bool = False, within: str = ""
) -> Iterator[Entry | InlineConfig]:
    """Every path-or-URL string of a kustomization document (or with `plugin`, of a plugin
    configuration), and every inline plugin configuration, with the field each is at; `within`
    prefixes the fields (a plugin configuration inline at `transformers[0]`)."""
    for key, value in document.items():
        if not isinstance(key, str) or key in DATA_KEYS:
            continue
        field = f"{within}.{key}" if within else key
        yield from _walk(value, field, "" if plugin else key, plugin=plugin)


def _walk(value: Any, field: str, top: str, *, plugin: bool) -> Iterator[Entry | InlineConfig]:
    if isinstance(value, bytes):  # `!!binary`: a string to kustomize's YAML reader
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return
        if "\n" in text or "\r" in text:
            if not plugin and top in PLUGIN_FIELDS:
                yield InlineConfig(field, value)
            return  # inline content: a patch, or a plugin config's own
        yield Entry(field, text, top)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{field}[{index}]", top, plugin=plugin)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key not in DATA_KEYS:
                yield from _walk(item, f"{field}.{key}", top, plugin=plugin)
