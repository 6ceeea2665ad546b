"""The job environment: ``environment`` in either syntax, ``env``, and ``getenv``."""

from __future__ import annotations

import fnmatch
import re
from typing import Mapping

from schedd.submit.arguments import is_new_syntax, quote_new, split_new, unwrap_new
from schedd.submit.errors import SubmitError


def parse_new(value: str) -> dict[str, str]:
    """``"A=1 B='x y'"``: words of the new syntax, each NAME=VALUE."""
    env: dict[str, str] = {}
    for word in split_new(unwrap_new(value)):
        name, sep, val = word.partition("=")
        if not sep or not name:
            raise SubmitError(f"{word!r} is not NAME=VALUE")
        env[name] = val
    return env


def parse_old(value: str) -> dict[str, str]:
    """``A=1;B=2``: entries split on semicolons only."""
    env: dict[str, str] = {}
    for entry in value.split(";"):
        entry = entry.lstrip()
        if not entry.strip():
            continue
        name, sep, val = entry.partition("=")
        if not sep or not name:
            raise SubmitError(f"{entry!r} is not NAME=VALUE")
        env[name] = val
    return env


def parse_environment(value: str) -> dict[str, str]:
    text = value.strip()
    return parse_new(text) if is_new_syntax(text) else parse_old(text)


def imported(getenv: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """The submitter's variables that ``getenv`` imports: true/false or patterns with
    ``*`` and ``!`` exclusions, matched without regard to case."""
    if getenv is None:
        return {}
    text = getenv.strip()
    if text.lower() in ("true", "yes", "t", "y", "1"):
        return dict(environ)
    if text.lower() in ("false", "no", "f", "n", "0", ""):
        return {}
    patterns = [p for p in re.split(r"[\s,;]+", text) if p]
    includes = [p.lower() for p in patterns if not p.startswith("!")]
    excludes = [p[1:].lower() for p in patterns if p.startswith("!")]
    if not includes:
        includes = ["*"]
    chosen = {}
    for name, val in environ.items():
        low = name.lower()
        if any(fnmatch.fnmatchcase(low, p) for p in excludes):
            continue
        if any(fnmatch.fnmatchcase(low, p) for p in includes):
            chosen[name] = val
    return chosen


def format_environment(env: Mapping[str, str]) -> str:
    """The ``Environment`` attribute: new syntax, sorted by name."""
    return " ".join(quote_new(f"{name}={env[name]}") for name in sorted(env))


def job_environment(environment: str | None, environment2: str | None, env: str | None,
                    getenv: str | None, allow_v1: bool,
                    environ: Mapping[str, str]) -> dict[str, str]:
    """The environment attributes for the job ad (``Environment``, or ``Env`` and
    ``EnvDelim`` for ``env`` in the old syntax)."""
    if environment is not None and environment2 is not None and not allow_v1:
        raise SubmitError("both 'environment' and 'environment2' are given; keep one, or "
                          "set allow_environment_v1 = true", command="environment2")
    chosen = environment2 if environment2 is not None else environment
    if chosen is None and env is not None:
        if not is_new_syntax(env) and not getenv:
            parse_old(env)
            return {"Env": env.strip(), "EnvDelim": ";"}
        chosen = env
    variables = imported(getenv, environ)
    if chosen is not None:
        try:
            variables.update(parse_environment(chosen))
        except SubmitError as exc:
            raise exc.located(command="environment") from None
    return {"Environment": format_environment(variables)}
