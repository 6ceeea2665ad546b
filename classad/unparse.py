"""Printing values and expressions back as ClassAd text, the way HTCondor prints them."""

from __future__ import annotations

import math

from classad.values import ERROR, UNDEFINED, AbsTime, RelTime

_ESCAPES = {
    "\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r",
    "\b": "\\b", "\f": "\\f", "\a": "\\a", "\v": "\\v",
}


def format_real(x: float) -> str:
    """A real as HTCondor prints it: ``%.15E``, with zeros, infinities and NaN special."""
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if math.isnan(x):
        return 'real("NaN")'
    if math.isinf(x):
        return 'real("INF")' if x > 0 else 'real("-INF")'
    return "%.15E" % x


def quote_string(s: str) -> str:
    """A string literal with HTCondor's escapes: control characters by name, bytes
    outside ASCII as three-digit octal escapes."""
    out = ['"']
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\%03o" % ord(ch))
        elif ord(ch) < 0x80:
            out.append(ch)
        else:
            out.extend("\\%03o" % b for b in ch.encode("utf-8", "surrogateescape"))
    out.append('"')
    return "".join(out)


def unparse_value(v: object) -> str:
    """The canonical ClassAd text of a value (as a literal expression)."""
    if v is UNDEFINED:
        return "undefined"
    if v is ERROR:
        return "error"
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return format_real(v)
    if t is str:
        return quote_string(v)
    if t is list:
        if not v:
            return "{  }"
        return "{ " + ",".join(unparse_value(e) for e in v) + " }"
    if t is AbsTime:
        return f'absTime("{format_abstime(v)}")'
    if t is RelTime:
        return f'relTime("{format_reltime(v.seconds)}")'
    from classad.ad import ClassAd

    if isinstance(v, ClassAd):
        return v.unparse()
    raise TypeError(f"not a ClassAd value: {v!r}")


def format_abstime(t: AbsTime) -> str:
    """ISO 8601 text of an absolute time in its own offset, e.g. ``2023-11-14T23:13:20+01:00``."""
    import datetime

    zone = datetime.timezone(datetime.timedelta(seconds=t.offset))
    moment = datetime.datetime.fromtimestamp(int(t.seconds), zone)
    sign = "+" if t.offset >= 0 else "-"
    off = abs(t.offset)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + "%s%02d:%02d" % (sign, off // 3600, (off % 3600) // 60)


def format_reltime(seconds: float) -> str:
    """A duration as HTCondor prints it: ``[-][D+]HH:MM:SS[.fff]``."""
    sign = "-" if seconds < 0 else ""
    secs = abs(seconds)
    whole = int(secs)
    frac = secs - whole
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, s = divmod(rest, 60)
    text = sign + (f"{days}+" if days else "") + "%02d:%02d:%02d" % (hours, minutes, s)
    if frac:
        text += ("%.3f" % frac)[1:]
    return text
