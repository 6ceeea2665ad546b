"""Macro expansion in submit descriptions: ``$(name)``, ``$(name:default)``, nesting,
``$$(...)`` left for match time, and the ``$F``/``$INT``/``$REAL``/``$SUBSTR``/``$CHOICE``/
``$ENV``/``$RANDOM_*``/``$EVAL`` functions.

Names are looked up in layers: queue item variables first, then the description's own
commands, then per-proc variables (``Process``, ``Cluster``, ...), then predefined ones
(``ARCH``, ``OPSYS``, ...). A scope records which per-proc names an expansion touched,
so the job-ad builder knows which commands must be expanded again for every proc.
"""

from __future__ import annotations

import math
import os
import re
from typing import Callable, Mapping

from schedd.submit.errors import SubmitError, client_only

_CALL = re.compile(r"\$([A-Za-z_]*)\(")
_MAX_DEPTH = 64
#: what may stand between ``$(`` and ``)`` (or a ``:default``) for it to be a macro; any
#: other text, such as ``$(two words)``, is kept as written (next_config_macro)
_MACRO_NAME = re.compile(r"[A-Za-z0-9_.]*")
#: names whose expansion differs between procs even though nothing assigns them
RANDOM = "<random>"
#: how many ``$RANDOM_*`` values this process has drawn (see :func:`random_draws`)
_draws = 0


def random_draws() -> int:
    """How many ``$RANDOM_*`` values this process has drawn so far: an expansion during
    which the count moved depends on chance, so its result may not be reused."""
    return _draws


def _drawn() -> None:
    global _draws
    _draws += 1


def matching_paren(text: str, open_at: int) -> int:
    """Index of the ``)`` that closes the ``(`` at ``open_at``, or -1."""
    depth = 0
    for i in range(open_at, len(text)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def substitute_calls(text: str, call: Callable[[str, str], str | None]) -> str:
    """``text`` with each ``$func(inner)`` replaced by ``call(func, inner)`` (None keeps
    the call as written); ``$$`` and ``$$(...)`` are left for match time."""
    out: list[str] = []
    i = 0
    while True:
        j = text.find("$", i)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        if text.startswith("$$", j):
            end = j + 2
            if text.startswith("(", end):
                close = matching_paren(text, end)
                end = end + 1 if close < 0 else close + 1
            out.append(text[j:end])
            i = end
            continue
        m = _CALL.match(text, j)
        if not m:
            out.append("$")
            i = j + 1
            continue
        close = matching_paren(text, m.end() - 1)
        if close < 0:
            # never closed: not a macro, but macros after it still are (next_config_macro)
            out.append(text[j:m.end()])
            i = m.end()
            continue
        replaced = call(m.group(1), text[m.end():close])
        out.append(text[j:close + 1] if replaced is None else replaced)
        i = close + 1
    return "".join(out)


class MacroScope:
    """Where macro names come from, in precedence order, and what an expansion touched."""

    def __init__(self, commands: Mapping[str, str], *, live: Mapping[str, str] | None = None,
                 items: Mapping[str, str] | None = None, predefined: Mapping[str, str] | None = None,
                 cwd: str = ".", environ: Mapping[str, str] | None = None,
                 self_contained: bool = False) -> None:
        self.commands = commands
        self.live = live or {}
        self.items = items or {}
        self.predefined = predefined or {}
        self.cwd = cwd
        self.environ = os.environ if environ is None else environ
        self.self_contained = self_contained
        self.touched: set[str] = set()

    def raw(self, name: str) -> str | None:
        """The unexpanded value of macro ``name`` (any case), or None when undefined."""
        key = name.lower()
        if key in self.items:
            self.touched.add(key)
            return self.items[key]
        value = self.commands.get(key)
        if value is not None:
            return value
        if key in self.live:
            self.touched.add(key)
            return self.live[key]
        return self.predefined.get(key)

    def defined(self, name: str) -> bool:
        return self.raw(name) is not None

    def expand(self, text: str) -> str:
        """``text`` with every macro and macro function replaced."""
        return _Expansion(self).run(text, 0)

    def value(self, name: str) -> str | None:
        """The fully expanded value of macro ``name``, or None when undefined."""
        raw = self.raw(name)
        return None if raw is None else self.expand(raw)


class _Expansion:
    """One expansion pass over a text; recursion depth guards against cycles."""

    def __init__(self, scope: MacroScope) -> None:
        self.scope = scope

    def run(self, text: str, depth: int) -> str:
        if depth > _MAX_DEPTH:
            raise SubmitError("macros refer to each other without end (a macro cycle)")
        if "$" not in text:
            return text
        return substitute_calls(text, lambda func, inner: self.call(func, inner, depth))

    def call(self, func: str, inner: str, depth: int) -> str | None:
        """Expansion of ``$func(inner)``; None leaves the call in the text as written."""
        if func == "":
            expanded = self.run(inner, depth + 1)
            name, sep, default = expanded.partition(":")
            if not _MACRO_NAME.fullmatch(name):
                return f"$({expanded})"
            if name.upper() == "DOLLAR":
                return "$"
            raw = self.scope.raw(name)
            if raw is None:
                return default if sep else ""
            return self.run(raw, depth + 1)
        upper = func.upper()
        if func[0] in "Ff" and upper not in _FUNCTIONS:
            return _path_function(func[1:], self.named(inner, depth), self.scope.cwd)
        handler = _FUNCTIONS.get(upper)
        if handler is None:
            return None
        return handler(self, inner, depth)

    def named(self, inner: str, depth: int) -> str | None:
        """The expanded value of the macro named by a function's argument."""
        name = self.run(inner, depth + 1).strip()
        raw = self.scope.raw(name)
        return None if raw is None else self.run(raw, depth + 1)

    def args(self, inner: str, depth: int) -> list[str]:
        return [a.strip() for a in self.run(inner, depth + 1).split(",")]


def _path_function(letters: str, value: str | None, cwd: str) -> str | None:
    """``$F<letters>(name)``: parts of a path; None (left unexpanded) for an unknown letter."""
    if any(ch not in "pdnxbfqauw" for ch in letters):
        return None
    path = value or ""
    if "u" in letters:
        path = path.replace("\\", "/")
    if "f" in letters and path and not path.startswith("/"):
        path = os.path.join(cwd, path)
    slash = path.rfind("/")
    directory, filename = path[:slash + 1], path[slash + 1:]
    dot = filename.rfind(".")
    stem, ext = (filename[:dot], filename[dot:]) if dot > 0 else (filename, "")
    strip = "b" in letters
    wants = [ch for ch in letters if ch in "pdnx"]
    if not wants:
        result = path
    else:
        parts = []
        if "p" in wants:
            parts.append(directory.rstrip("/") if strip and "n" not in wants else directory)
        elif "d" in wants:
            last = directory.rstrip("/").rsplit("/", 1)[-1]
            parts.append(last if strip else (last + "/" if last else ""))
        if "n" in wants:
            parts.append(stem)
        if "x" in wants:
            parts.append(ext[1:] if strip and "n" not in wants else ext)
        result = "".join(parts)
    if "w" in letters:
        result = result.replace("/", "\\")
    if "q" in letters:
        result = f"'{result}'" if "a" in letters else f'"{result}"'
    return result


def evaluate_number(text: str) -> int | float:
    """The number a macro's text evaluates to, as a ClassAd expression."""
    stripped = text.strip()
    try:
        return int(stripped)
    except ValueError:
        pass
    try:
        number = float(stripped)
    except ValueError:
        pass
    else:
        if not math.isfinite(number):
            raise SubmitError(f"a number of {len(stripped)} characters is too large")
        return number
    value = evaluate_expression(stripped)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SubmitError(f"{text!r} does not evaluate to a number")
    return value


def evaluate_expression(text: str) -> object:
    """Evaluate ``text`` as a ClassAd expression with no ad around it."""
    import classad

    try:
        return classad.ExprTree(text).eval()
    except ValueError as exc:
        raise SubmitError(f"{text!r} is not a valid expression ({exc})") from None


def _printf(fmt: str, value: int | float) -> str:
    try:
        return fmt % value
    except (TypeError, ValueError):
        raise SubmitError(f"{fmt!r} is not a printf format for one number") from None


def _int(exp: _Expansion, inner: str, depth: int) -> str:
    name, _, fmt = inner.partition(",")
    value = exp.named(name, depth)
    if value is None:
        raise SubmitError(f"$INT({inner}): {name.strip()} is not defined")
    number = int(evaluate_number(value))
    return _printf(fmt.strip(), number) if fmt.strip() else str(number)


def format_real_shortest(number: float) -> str:
    """A real the way ``$REAL`` prints it without a format: as short as possible."""
    text = "%.15g" % number
    return text


def _real(exp: _Expansion, inner: str, depth: int) -> str:
    name, _, fmt = inner.partition(",")
    value = exp.named(name, depth)
    if value is None:
        raise SubmitError(f"$REAL({inner}): {name.strip()} is not defined")
    number = float(evaluate_number(value))
    return _printf(fmt.strip(), number) if fmt.strip() else format_real_shortest(number)


def _substr(exp: _Expansion, inner: str, depth: int) -> str:
    parts = [p.strip() for p in inner.split(",")]
    value = exp.named(parts[0], depth) or ""
    try:
        start = int(parts[1]) if len(parts) > 1 else 0
        length = int(parts[2]) if len(parts) > 2 else None
    except ValueError:
        raise SubmitError(f"$SUBSTR({inner}): start and length must be integers") from None
    if start < 0:
        start = max(0, len(value) + start)
    if length is None:
        return value[start:]
    end = start + length if length >= 0 else len(value) + length
    return value[start:end] if end > start else ""


def _index(exp: _Expansion, text: str, depth: int) -> int:
    value = exp.named(text, depth)
    return int(evaluate_number(value if value is not None else exp.run(text, depth + 1)))


def _choice(exp: _Expansion, inner: str, depth: int) -> str:
    parts = [p.strip() for p in inner.split(",")]
    if len(parts) < 2:
        raise SubmitError(f"$CHOICE({inner}): needs an index and a list")
    index = _index(exp, parts[0], depth)
    choices = parts[1:]
    if len(choices) == 1:
        listed = exp.named(choices[0], depth)
        if listed is not None:
            choices = [c.strip() for c in listed.split(",")]
    if not 0 <= index < len(choices):
        raise SubmitError(f"$CHOICE({inner}): index {index} is outside the list of {len(choices)}")
    return exp.run(choices[index], depth + 1)


def _env(exp: _Expansion, inner: str, depth: int) -> str:
    if exp.scope.self_contained:
        raise client_only(f"$ENV({inner})", "reads the environment")
    name, sep, default = exp.run(inner, depth + 1).partition(":")
    value = exp.scope.environ.get(name.strip())
    if value is not None:
        return value
    return default if sep else "UNDEFINED"


def _random_choice(exp: _Expansion, inner: str, depth: int) -> str:
    exp.scope.touched.add(RANDOM)
    _drawn()
    import random  # loaded for the few descriptions that draw

    return random.choice(exp.args(inner, depth))


def _random_integer(exp: _Expansion, inner: str, depth: int) -> str:
    exp.scope.touched.add(RANDOM)
    parts = exp.args(inner, depth)
    try:
        low, high = int(parts[0]), int(parts[1])
        step = int(parts[2]) if len(parts) > 2 else 1
    except (ValueError, IndexError):
        raise SubmitError(f"$RANDOM_INTEGER({inner}): needs integers min, max[, step]") from None
    if step <= 0 or high < low:
        raise SubmitError(f"$RANDOM_INTEGER({inner}): needs min <= max and a positive step")
    _drawn()
    import random

    return str(random.randrange(low, high + 1, step))


def _eval(exp: _Expansion, inner: str, depth: int) -> str:
    value = exp.named(inner, depth)
    if value is None:
        return ""
    result = evaluate_expression(value)
    if isinstance(result, str):
        return result
    from classad.unparse import unparse_value

    return unparse_value(result)


def _basename(exp: _Expansion, inner: str, depth: int) -> str:
    return (exp.named(inner, depth) or "").rsplit("/", 1)[-1]


def _dirname(exp: _Expansion, inner: str, depth: int) -> str:
    value = exp.named(inner, depth) or ""
    return value[: value.rfind("/") + 1]


_FUNCTIONS: dict[str, Callable[[_Expansion, str, int], str | None]] = {
    "INT": _int,
    "REAL": _real,
    "SUBSTR": _substr,
    "CHOICE": _choice,
    "ENV": _env,
    "RANDOM_CHOICE": _random_choice,
    "RANDOM_INTEGER": _random_integer,
    "EVAL": _eval,
    "BASENAME": _basename,
    "DIRNAME": _dirname,
}
