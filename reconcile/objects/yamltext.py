"""The one YAML reader of manifests and controller files: safe types only, timestamps kept as
strings, and bounded against alias bombs.

A few hundred bytes of nested aliases ("billion laughs") load quickly as shared structures, then
take gigabytes once the objects are copied or serialised. So every document's node graph is
measured before it is constructed: its size counting every node as many times as aliases reach
it (the size of its copies), and a structure that contains itself is refused. Measuring the
nodes, not the objects, also bounds merge keys (`<<: [*a, *a]`), which PyYAML expands while
constructing.

Pure: the caller reads the file and passes its text.
"""

from __future__ import annotations

import io
from typing import Any

import yaml

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

# Values one document may expand to: far above real manifests (a large CRD has ~10^4), far
# below what exhausts memory once copied (a value costs ~100 bytes or more per copy).
MAX_EXPANDED_VALUES = 1_000_000

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class YamlError(ValueError):
    """A YAML text that cannot be loaded (safely). `reason` is the message without the
    source, which `str()` names first."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class _Loader(_SafeLoader):
    """Timestamps stay strings, as kubectl's YAML-to-JSON conversion leaves them."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in _SafeLoader.yaml_implicit_resolvers.items()
}


class _NamedText(io.StringIO):
    """The text under the source's name, which the parser puts in its error marks."""

    def __init__(self, text: str, name: str) -> None:
        super().__init__(text)
        self._name = name

    @property
    def name(self) -> str:
        return self._name


def load_documents(text: str, source: str) -> list[Any]:
    """Every document of a YAML text (None for an empty one). Raises YamlError naming `source`
    (and the document, for one that is unsafe to expand)."""
    loader = _Loader(_NamedText(text, source))
    # Aliases need anchors, written with `&`: a text without one cannot expand.
    may_alias = "&" in text
    documents: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if may_alias and node is not None:
                _check_expansion(node, source, len(documents) + 1)
            documents.append(loader.construct_document(node))
    except yaml.YAMLError as exc:
        raise YamlError(source, f"invalid YAML: {_describe(exc)}") from None
    finally:
        loader.dispose()
    return documents


def _describe(exc: yaml.YAMLError) -> str:
    if not isinstance(exc, yaml.MarkedYAMLError):
        return " ".join(str(exc).split())
    text = ", ".join(part for part in (exc.context, exc.problem) if part)
    mark = exc.problem_mark or exc.context_mark
    if mark is not None:
        text += f" (line {mark.line + 1}, column {mark.column + 1})"
    return text


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(root: yaml.Node, source: str, document: int) -> None:
    """Refuse a recursive alias, or a document that expands to more than MAX_EXPANDED_VALUES
    nodes. Iterative depth-first walk, each distinct node measured once (memoised by id), so
    the check is linear in the text however far it expands."""
    sizes: dict[int, int] = {}
    ancestors: set[int] = set()
    # (node, its children once entered): a node is measured when it comes back with them
    stack: list[tuple[yaml.Node, list[yaml.Node] | None]] = [(root, None)]
    while stack:
        node, entered = stack.pop()
        if entered is not None:
            ancestors.discard(id(node))
            size = 1 + sum(sizes[id(child)] for child in entered)
            if size > MAX_EXPANDED_VALUES:
                raise YamlError(
                    source,
                    f"document {document}: expands to more than {MAX_EXPANDED_VALUES} values "
                    "through YAML aliases",
                )
            sizes[id(node)] = size
            continue
        if id(node) in sizes:
            continue
        children = _children(node)
        ancestors.add(id(node))
        stack.append((node, children))
        for child in children:
            if id(child) in ancestors:
                line = child.start_mark.line + 1
                raise YamlError(
                    source,
                    f"document {document}: a YAML alias refers to a structure that contains it "
                    f"(recursive alias, anchored at line {line})",
                )
            if id(child) not in sizes:
                stack.append((child, None))
