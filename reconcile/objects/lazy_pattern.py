"""Regular expressions compiled at their first use, for the modules on the command's start-up
path: a run pays for the patterns it uses. Compiling one costs about a tenth of a millisecond;
compiled at import, every run pays for all of them, most of which (a Secret's data in a text,
a webhook URL, a schema format, Markdown) only some runs meet."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import AnyStr


def on_first_use(pattern: AnyStr, flags: int = 0) -> Callable[[], re.Pattern[AnyStr]]:
    """`re.compile(pattern, flags)`, made by the first call and kept."""
    return functools.cache(lambda: re.compile(pattern, flags))
