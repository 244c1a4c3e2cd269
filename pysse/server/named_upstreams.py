"""The command line of several upstreams: ``--upstream NAME=URL`` (repeat), and for each
name its own key variable, format and models, each a flag of its own keyed by the name:

    pysse-relay --upstream openai=https://api.openai.com/v1 \\
        --upstream-key-env openai=OPENAI_API_KEY --upstream-models openai=gpt-4.1,gpt-4.1-mini \\
        --upstream claude=https://api.anthropic.com/v1 \\
        --upstream-key-env claude=ANTHROPIC_API_KEY --upstream-models claude=claude-sonnet-4-5

Why one flag per setting rather than one packed value (``NAME=URL;key=...;models=...``):
a ``;`` ends a shell command unless quoted, so the packed form fails in the most common
typing of it; each flag here is one setting, listed by ``--help``, and a mistake names the
one flag to change. The single ``--upstream URL`` with ``--api-key-env`` and ``--format``
is unchanged (it is one upstream named ``default`` that takes any model).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..errors import ConfigError
from ..providers import PROVIDERS
from .routing import DEFAULT_NAME, NAME_RE, Upstream, guess_format

__all__ = ["is_url", "named_upstreams"]

EXAMPLE = "--upstream openai=https://api.openai.com/v1"


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _pairs(flag: str, values: Sequence[str], names: list[str]) -> dict[str, list[str]]:
    """``NAME=VALUE`` values of ``flag``, by name; each name must be an ``--upstream``."""
    got: dict[str, list[str]] = {}
    for value in values:
        name, eq, rest = value.partition("=")
        if not eq or not rest.strip():
            raise ConfigError(
                f"{flag} {value!r} is not NAME=VALUE: name the upstream it is for, e.g. "
                f"{flag} {names[0] if names else 'openai'}=..."
            )
        if name not in names:
            raise ConfigError(
                f"{flag} {value!r} names no upstream: give --upstream {name}=URL too, or use "
                f"one of the names given ({', '.join(names) or 'none'})"
            )
        got.setdefault(name, []).append(rest.strip())
    return got


def _one(flag: str, got: dict[str, list[str]], name: str) -> str | None:
    values = got.get(name, [])
    if len(values) > 1:
        raise ConfigError(f"{flag} {name}=... is given twice: give it once for each upstream")
    return values[0] if values else None


def _key(name: str, var: str | None) -> str | None:
    if var is None:
        return None
    key = os.environ.get(var)
    if not key:
        raise ConfigError(
            f"the environment variable {var} is not set: export it with the API key of "
            f"upstream {name}, or leave out --upstream-key-env {name}=... for a keyless upstream"
        )
    return key


def named_upstreams(
    specs: Sequence[str],
    api_key_env: str | None = None,
    fmt: str | None = None,
    keys: Sequence[str] = (),
    formats: Sequence[str] = (),
    models: Sequence[str] = (),
) -> list[Upstream] | None:
    """The upstreams ``--upstream NAME=URL`` (repeated) names, with their
    ``--upstream-key-env``, ``--upstream-format`` and ``--upstream-models``; None for the
    single ``--upstream URL`` form (``RelayConfig.from_args`` makes that one). Every mistake
    is a ``ConfigError`` naming the flag and the fix."""
    if len(specs) == 1 and (is_url(specs[0]) or "=" not in specs[0]):  # (not a URL: from_args)
        for flag, given in (
            ("--upstream-key-env", keys),
            ("--upstream-format", formats),
            ("--upstream-models", models),
        ):
            if given:
                raise ConfigError(
                    f"{flag} is for named upstreams: write --upstream NAME=URL (e.g. {EXAMPLE}) "
                    f"and {flag} NAME=..., or use --api-key-env and --format with one URL"
                )
        return None
    named: dict[str, str] = {}
    for spec in specs:
        if is_url(spec):
            raise ConfigError(
                f"--upstream {spec} has no name: with several upstreams give each one as "
                f"NAME=URL, e.g. {EXAMPLE}"
            )
        name, eq, url = spec.partition("=")
        if not eq or not is_url(url):
            raise ConfigError(
                f"--upstream {spec!r} is not a URL or NAME=URL: give the provider's base URL, "
                f"e.g. {EXAMPLE}"
            )
        if not NAME_RE.fullmatch(name) or name == DEFAULT_NAME:
            raise ConfigError(
                f"--upstream {name}=...: a name is letters, digits, '.', '-' and '_' (not "
                f"'{DEFAULT_NAME}'), e.g. {EXAMPLE}"
            )
        if name in named:
            raise ConfigError(
                f"--upstream {name}=... is given twice: give each upstream a name of its own"
            )
        named[name] = url.rstrip("/")
    for flag, single in (("--api-key-env", api_key_env), ("--format", fmt)):
        if single:
            raise ConfigError(
                f"{flag} is for a single --upstream URL: with named upstreams give "
                f"--upstream-{'key-env' if 'key' in flag else 'format'} NAME=... for each"
            )
    names = list(named)
    key_vars = _pairs("--upstream-key-env", keys, names)
    format_of = _pairs("--upstream-format", formats, names)
    models_of = _pairs("--upstream-models", models, names)
    upstreams = []
    for name, url in named.items():
        form = _one("--upstream-format", format_of, name)
        if form is not None and form not in PROVIDERS:
            raise ConfigError(
                f"--upstream-format {name}={form}: not a format; use one of {', '.join(PROVIDERS)}"
            )
        served = [m.strip() for v in models_of.get(name, []) for m in v.split(",") if m.strip()]
        upstreams.append(
            Upstream(
                name,
                url,
                form or guess_format(url),
                _key(name, _one("--upstream-key-env", key_vars, name)),
                tuple(dict.fromkeys(served)),
            )
        )
    return upstreams
