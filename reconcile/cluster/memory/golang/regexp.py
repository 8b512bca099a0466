"""Go's regexp as the schemas' `pattern`s meet it: RE2 (google-re2 here), so matching takes
time linear in the text whatever the pattern (`^(a+)+$` cannot backtrack), the text is searched
(not anchored) and `$` is the end of the text (not before a last newline); what Go refuses and
RE2 accepts is refused too; and RE2's compile errors in Go's words (`error parsing regexp:
missing closing ): `(a``), which CEL's regex functions quote as well."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

# RE2's error codes (re2/regexp.cc) in Go's words (regexp/syntax/parse.go): the same parser
_GO_WORDS = {
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid named capture group": "invalid named capture",
    "trailing \\": "trailing backslash at end of expression",
    "unexpected error": "regexp/syntax: internal error",
    "pattern too large - compile failed": "expression too large",
    "pattern too large - reverse compile failed": "expression too large",
}
MAX_HEIGHT = 1000  # Go's maxHeight: groups nested deeper are refused
# Go 1.22 reads (?<name>...) as a named group; the releases built with an older Go refuse it
ANGLE_NAMED_GROUPS_SINCE = 30


def _re2() -> Any:
    """google-re2, imported at the first pattern met: most runs' schemas have none."""
    import re2  # type: ignore[import-untyped]

    return re2


def _options(*, capture: bool) -> Any:
    options = _re2().Options()
    options.log_errors = False  # the error is ours to report, not absl's to print
    options.never_capture = not capture  # a yes/no search needs no groups: RE2's DFA
    return options


@lru_cache(maxsize=1024)
def compiled(
    pattern: str, minor: int | None = None
) -> tuple[Callable[[str], bool] | None, str | None]:
    """(a search function, None), or (None, Go's compile error), as the Go that built
    release 1.`minor` reads the pattern."""
    error = _go_only_error(pattern, minor)
    if error is not None:
        return None, error
    re2 = _re2()
    try:
        re2.compile(pattern, options=_options(capture=True))  # the errors Go reports
        regexp = re2.compile(pattern, options=_options(capture=False))
    except re2.error as raised:
        return None, go_error(raised)
    return (lambda text: regexp.search(text) is not None), None


def go_error(raised: Any) -> str:
    """An RE2 compile error in Go's words."""
    message = raised.args[0] if raised.args else ""
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    code, separator, argument = str(message).partition(": ")
    if code.startswith("trailing \\"):
        code, argument = "trailing \\", ""
    del separator
    return f"error parsing regexp: {_GO_WORDS.get(code, code)}: `{argument}`"


def _go_only_error(pattern: str, minor: int | None) -> str | None:
    r"""What Go refuses and RE2 accepts: `\C` (any byte), groups nested too deeply, and
    before Go 1.22 `(?<name>`."""
    old_go = minor is not None and minor < ANGLE_NAMED_GROUPS_SINCE
    depth = deepest = 0
    i = 0
    in_class = False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            following = pattern[i + 1]
            if following == "Q":  # a literal run, up to \E
                end = pattern.find("\\E", i + 2)
                i = len(pattern) if end < 0 else end + 2
                continue
            if following == "C":
                return "error parsing regexp: invalid escape sequence: `\\C`"
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":  # a ] first in a class is a literal
                i += 1
        elif char == "(":
            if old_go and pattern.startswith("(?<", i):
                return "error parsing regexp: invalid or unsupported Perl syntax: `(?<`"
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth -= 1
        i += 1
    if deepest >= MAX_HEIGHT:
        return f"error parsing regexp: expression nests too deeply: `{pattern}`"
    return None


def search(pattern: str, text: str, minor: int | None = None) -> tuple[bool, str | None]:
    """(whether `pattern` is found in `text`, None), or (False, Go's compile error)."""
    matcher, error = compiled(pattern, minor)
    if matcher is None:
        return False, error
    return matcher(text), None
