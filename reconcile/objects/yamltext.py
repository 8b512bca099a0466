"""The one YAML reader of manifests and controller files: safe types only, unquoted scalars
read as `kubectl` reads them, and bounded against alias bombs.

kubectl converts YAML to JSON with go-yaml v2, whose YAML 1.1 rules differ from PyYAML's. An
unquoted scalar is read here as kubectl reads it (quoted ones are always strings):

| Written | kubectl (and here) | PyYAML alone |
|---|---|---|
| `yes`, `on`, `y`, `True` / `no`, `off`, `n`, `False` | `true` / `false` | `y`, `n`: strings |
| `2024-01-01`, `2024-01-01T10:00:00Z` | the string | a date |
| `1:20` (YAML 1.1 base 60) | the string `"1:20"` | `80` |
| `0755`, `0o755`, `0x1F`, `0b101`, `1_000` | `493`, `493`, `31`, `5`, `1000` | `0o755`: a string |
| `0759` (not octal) | `759` (via a float) | a string |
| `1e3`, `3.0` | `1000`, `3` (whole floats go out as integers) | a string, `3.0` |
| `123456789012345678901234567890` (beyond 64 bits) | a float | an exact int |
| `=` | the string | an error |
| `.inf`, `.nan` | refused: JSON has no such numbers | floats |

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
import re
from typing import Any

import yaml

from reconcile.objects.bounds import MAX_DEPTH, depth_problem, surrogate_problem
from reconcile.objects.terminal import one_line

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
    """Plain scalars resolved by go-yaml v2's rules (see the module docstring)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """Keys as JSON has them: kubectl's conversion writes `y:` as the key `"true"`. A key
        written twice in one mapping is refused, as kubectl refuses it: a reader would take
        the first for what counts, where the last would (a merge key's `<<` entries aside,
        which the mapping's own keys override)."""
        _check_repeated_keys(node)
        mapping = super().construct_mapping(node, deep=deep)
        if all(isinstance(key, str) for key in mapping):
            return mapping
        return {_key_text(key): value for key, value in mapping.items()}


# PyYAML's own guesses are replaced by one resolver for every plain scalar that go-yaml v2 might
# read as something other than a string; `_construct_plain` then decides as go-yaml does. Null
# (`~`, `null`, empty) and merge keys (`<<`) are read alike and stay PyYAML's.
_REPLACED_TAGS = frozenset(
    {
        _TIMESTAMP_TAG,
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:value",
    }
)
_PLAIN_TAG = "tag:reconcile,2024:plain"
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _REPLACED_TAGS]
    for first, resolvers in _SafeLoader.yaml_implicit_resolvers.items()
}
_BOOLEANS = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "on", "On", "ON"), True),
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "off", "Off", "OFF"), False),
    **dict.fromkeys(("false", "False", "FALSE"), False),
}
_NOT_A_NUMBER = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"}
_NOT_A_NUMBER |= {".nan", ".NaN", ".NAN"}
_GO_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_GO_INT = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$")
_INT64 = (-(2**63), 2**64 - 1)  # ParseInt, then ParseUint
_PLAIN_CANDIDATE = re.compile(
    r"^(?:[-+.0-9].*|[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF"
    r"|true|True|TRUE|false|False|FALSE)$",
    re.S,
)
_Loader.add_implicit_resolver(_PLAIN_TAG, _PLAIN_CANDIDATE, None)


def needs_quotes(text: str) -> bool:
    """Whether `text`, written unquoted, would read back as something else than this string
    (`n`, `0o755`, `1e3`): a writer of YAML for this reader (or kubectl) must quote it."""
    if not _PLAIN_CANDIDATE.match(text):
        return False
    if text in _BOOLEANS or text in _NOT_A_NUMBER:
        return True
    plain = text.replace("_", "")
    return _go_int(plain) is not None or bool(_GO_FLOAT.match(plain))


def _construct_plain(loader: _SafeLoader, node: yaml.ScalarNode) -> Any:
    """The value of an unquoted scalar, by go-yaml v2's rules."""
    text = str(loader.construct_scalar(node))
    if text in _BOOLEANS:
        return _BOOLEANS[text]
    if text in _NOT_A_NUMBER:
        mark = node.start_mark
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"{text} is not a number JSON can carry; quote it to mean the string",
            mark,
        )
    plain = text.replace("_", "")
    number = _go_int(plain)
    if number is not None:
        return number
    if _GO_FLOAT.match(plain):
        decimal = float(plain)
        # Go writes a whole float64 below 1e21 as an integer (`1e3` goes out as 1000)
        return int(decimal) if decimal.is_integer() and abs(decimal) < 1e21 else decimal
    return text


def _check_repeated_keys(node: yaml.MappingNode) -> None:
    seen: dict[str, yaml.Node] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue
        text = str(key_node.value)
        first = seen.setdefault(text, key_node)
        if first is not key_node:
            raise yaml.constructor.ConstructorError(
                f"while reading a mapping (line {first.start_mark.line + 1})",
                None,
                f"the key {one_line(text)!r} is given twice (kubectl refuses that too)",
                key_node.start_mark,
            )


def _key_text(key: Any) -> Any:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, int | float):
        return str(key)
    return key


def _go_int(text: str) -> int | None:
    """Go's `strconv.ParseInt(text, 0, 64)`, then `ParseUint`: None when neither reads it."""
    if not _GO_INT.match(text):
        return None
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    prefix = digits[:2].lower()
    if prefix in ("0x", "0o", "0b"):
        value = int(digits[2:], {"0x": 16, "0o": 8, "0b": 2}[prefix])
    elif len(digits) > 1 and digits.startswith("0"):
        value = int(digits, 8)
    else:
        value = int(digits)
    value *= sign
    low, high = _INT64
    return value if low <= value <= high else None


_Loader.add_constructor(_PLAIN_TAG, _construct_plain)


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
    # Aliases need anchors, written with `&`: a text without one cannot expand; nor can it build
    # more values than it has marks of structure (each needs a line, `,`, `:`, `[` or `{`).
    measure = "&" in text or _structure_marks(text) >= MAX_EXPANDED_VALUES
    documents: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            number = len(documents) + 1
            if measure and node is not None:
                _check_expansion(node, source, number)
            document = loader.construct_document(node)
            too_deep = depth_problem(document)
            if too_deep is not None:
                raise YamlError(source, f"document {number} is {too_deep}")
            not_text = surrogate_problem(text, document)
            if not_text is not None:
                raise YamlError(source, f"document {number} holds {not_text}, which is not text")
            documents.append(document)
    except yaml.YAMLError as exc:
        raise YamlError(source, f"invalid YAML: {_describe(exc)}") from None
    except RecursionError:
        raise YamlError(source, f"nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()
    return documents


def _structure_marks(text: str) -> int:
    return sum(text.count(mark) for mark in ("\n", ",", ":", "[", "{"))


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
