"""Option values converted without a pydantic adapter per option (the commands' start-up).

typer 0.29 converts every option's value through a pydantic `TypeAdapter` it builds the first
time the option is parsed: importing pydantic and building the run's forty-odd adapters cost
about 0.15 s of CPU at every start, more than the rest of parsing. Our options are all plain
(text, flags, enumerations, or a `parser=` of ours), and for a value typer accepts, its adapter
returns the text itself, the flag, the member chosen or the parser's result: those values are
converted here directly. Any other value (a word that is no flag, a parser's ValueError, a name
that is no member) goes on to typer's own adapter, so what is refused, and how the error reads,
stay typer's. `support.Command` installs the conversions before it parses; with a typer
that builds no such adapters (before 0.29) nothing is installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum
from typing import TYPE_CHECKING, Any, get_args, get_origin

try:
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
    from typer._param_types import coerce_cli_choice
except ImportError:  # a typer that converts values without pydantic: nothing to replace
    RuntimeParam = None  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from typer._click import Context
    from typer.core import _TyperParameter

    Convert = Callable[[Any, Context], Any]


class _Unhandled(Exception):
    """A value left to typer's own conversion."""


# pydantic's words for a boolean (any case), after typer strips the value; "" is False
_FLAG_WORDS = {
    **dict.fromkeys(("", "0", "off", "f", "false", "n", "no"), False),
    **dict.fromkeys(("1", "on", "t", "true", "y", "yes"), True),
}


def _text(value: Any, ctx: Context) -> Any:
    if type(value) is str:
        return value
    raise _Unhandled


def _flag(value: Any, ctx: Context) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii():
        word = value.strip().lower()
        if word in _FLAG_WORDS:
            return _FLAG_WORDS[word]
    raise _Unhandled


def _parsed(parser: Callable[[Any], Any]) -> Convert:
    def convert(value: Any, ctx: Context) -> Any:
        try:
            return parser(value)
        except (ValueError, AssertionError):  # what pydantic turns into its error message
            raise _Unhandled from None

    return convert


def _chosen(choices: tuple[Any, ...], case_sensitive: bool) -> Convert:
    def convert(value: Any, ctx: Context) -> Any:
        try:
            return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive, ctx=ctx)
        except ValueError:
            raise _Unhandled from None

    return convert


def _listed(item: Convert) -> Convert:
    def convert(value: Any, ctx: Context) -> Any:
        values = value if isinstance(value, list | tuple) else [value]
        return [item(one, ctx) for one in values]

    return convert


def _leaf(annotation: Any, descriptor: TypeDescriptor) -> Convert | None:
    """The direct conversion of one value, in the order typer picks its adapter; None for a
    type converted here by nothing (typer's adapter then, as before)."""
    info = descriptor.parameter_info
    if info.parser is not None:
        return _parsed(info.parser)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _chosen(tuple(annotation), info.case_sensitive)
    if annotation is bool:
        return _flag
    if annotation is str:
        return _text
    return None


def _converter(descriptor: TypeDescriptor) -> Convert | None:
    if descriptor.file_annotation is not None:
        return None
    annotation: Any = descriptor.annotation
    if get_origin(annotation) is list:
        (item_type,) = get_args(annotation)
        item = _leaf(item_type, descriptor)
        return _listed(item) if item is not None else None
    if get_origin(annotation) is not None:
        return None
    return _leaf(annotation, descriptor)


if RuntimeParam is not None:

    class DirectParam(RuntimeParam):
        """typer's conversion contract (None, several values) around a direct conversion;
        what the conversion leaves goes to the adapter typer would have built. Not a
        dataclass of its own: making one costs more than the rest of this module."""

        def __init__(self, descriptor: TypeDescriptor, convert: Convert) -> None:
            super().__init__(
                parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
            )
            self.descriptor = descriptor
            self.convert = convert

        def _coerce_value(self, value: Any, param: _TyperParameter, ctx: Context) -> Any:
            try:
                return self.convert(value, ctx)
            except _Unhandled:
                typers = build_runtime_param(self.descriptor)
                return typers._coerce_value(value, param=param, ctx=ctx)


def convert_directly(params: Iterable[object]) -> None:
    """Give each plain option of a command its direct conversion (once; idempotent)."""
    if RuntimeParam is None:
        return
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if not isinstance(descriptor, TypeDescriptor):
            continue
        if getattr(param, "_runtime_param", False) is not None:
            continue  # converted already, or a typer that keeps no conversion there
        convert = _converter(descriptor)
        if convert is not None:
            param._runtime_param = DirectParam(descriptor, convert)  # type: ignore[attr-defined]
