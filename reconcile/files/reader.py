"""Reading manifests: the objects of a file, or of a text read otherwise (standard input,
kustomize's output).

A file holds YAML documents (or one JSON document, for `.json`). Documents are numbered from 1,
as people count them; an empty one (`---` alone, only comments) is skipped. A `List`, or a
typed list such as `ConfigMapList` (any kind ending in `List` with an `items` field, as kubectl
reads them), stands for its items (`items: null` for none). A document or item that is not an
object is a problem of that document, never silently skipped: read as nothing, it would let an
input pass as empty."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reconcile.objects.bounds import BoundError, loads_bounded
from reconcile.objects.yamltext import YamlError, load_documents
from reconcile.records import dataclass

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# The most a text read whole from a pipe (standard input, kustomize's output) may hold.
MAX_TEXT_BYTES = 64 * 1024 * 1024

Position = tuple[int, int]  # (document, item): item 0 for a document that is not a list
Problem = tuple[Position, str]


@dataclass(frozen=True)
class Document:
    label: str  # "dir/x.yaml (document 2)", "... (document 2, item 3)"
    position: Position
    obj: dict[str, Any]


def read_documents(file: Path, label: str) -> tuple[list[Document], list[Problem]]:
    """The objects of `file` (named `label` in messages) and the problems of its documents.
    Raises OSError, or ValueError (YamlError, BoundError) when the file as a whole cannot be
    read."""
    return documents_of(load_file(file, label), label)


def load_file(file: Path, label: str) -> list[Any]:
    """The documents of `file` as loaded, before they are checked and numbered (what
    `documents_of` takes). Raises as `read_documents` does."""
    return _load(file.read_text(encoding="utf-8"), label, json=file.suffix == ".json")


def parse_documents(
    text: str, label: str, *, json: bool = False, rendered_by: str = ""
) -> tuple[list[Document], list[Problem]]:
    """`read_documents` for a text already read: standard input, or what `rendered_by` (a
    tool, named in every document's label: "dir (kustomize, document 3)") wrote. Raises
    ValueError (YamlError, BoundError) when the text as a whole cannot be read."""
    source = f"{label} ({rendered_by})" if rendered_by else label
    return documents_of(_load(text, source, json=json), label, rendered_by=rendered_by)


def _load(text: str, source: str, *, json: bool) -> list[Any]:
    if not json:
        return load_documents(text, source)
    try:
        return [loads_bounded(text)] if text.strip() else []
    except BoundError as exc:  # named by file, as YAML's errors are
        raise YamlError(source, str(exc)) from None
    except ValueError as exc:
        raise YamlError(source, f"invalid JSON: {exc}") from None


def documents_of(
    loaded: list[Any], label: str, *, rendered_by: str = ""
) -> tuple[list[Document], list[Problem]]:
    """The objects of documents as loaded, named from `label`, and the problems of those that
    are not objects."""
    prefix = f"{rendered_by}, " if rendered_by else ""
    documents: list[Document] = []
    problems: list[Problem] = []
    for number, doc in enumerate(loaded, start=1):
        where = f"{label} ({prefix}document {number})"
        if doc is None:
            continue
        if not isinstance(doc, dict):
            problems.append(((number, 0), f"{where}: not a mapping but a YAML {_type(doc)}"))
            continue
        if not _is_list(doc):
            documents.append(Document(where, (number, 0), doc))
            continue
        items = doc.get("items")
        if items is None:
            continue
        if not isinstance(items, list):
            kind = doc.get("kind")
            problems.append(((number, 0), f"{where}: {kind}.items is a YAML {_type(items)}"))
            continue
        for index, item in enumerate(items, start=1):
            place = f"{label} ({prefix}document {number}, item {index})"
            if isinstance(item, dict):
                documents.append(Document(place, (number, index), item))
            else:
                problems.append(
                    ((number, index), f"{place}: not a mapping but a YAML {_type(item)}")
                )
    return documents, problems


def _is_list(doc: dict[str, Any]) -> bool:
    kind = doc.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in doc


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return type(value).__name__
