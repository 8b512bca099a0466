"""The environment a command hook process starts with: never the run's own.

The base (`PATH`, `HOME`, locale, `TZ`, `TMPDIR`), then the variables its spec names in
`inheritEnv` (refused at load when they are the run's or look like credentials; dropped here
when their value is a secret the run has seen), then what its spec declares in `env`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from reconcile.specs.hook_env import in_base, refusal
from reconcile.specs.hooks import CommandSpec

log = logging.getLogger(__name__)


def hook_environment(
    spec: CommandSpec, outer: Mapping[str, str], is_secret: Callable[[str], bool]
) -> dict[str, str]:
    env = {name: value for name, value in outer.items() if in_base(name)}
    for name in spec.inherit_env:
        value = outer.get(name)
        if value is None:
            continue
        if refusal(name) is not None or is_secret(value):
            log.warning("not passing %s to a command hook: its value is a credential", name)
            continue
        env[name] = value
    env.update(spec.env)
    return env
