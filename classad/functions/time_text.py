"""The text forms of absolute and relative times, both ways.

HTCondor prints an absolute time as ``2023-11-14T23:13:20+01:00`` in its own offset
(a zero offset prints as ``-00:00``) and a relative time as ``[-][D+][HH:][MM:]SS[.fff]``
with the leading zero parts left out (``relTime(0)`` is ``00``).
"""

from __future__ import annotations

import datetime
import re
import time as _time

from classad.functions.coercion import real_to_int32, whole_seconds
from classad.values import AbsTime

_ABS = re.compile(
    r"\s*(\d{4})-?(\d{2})-?(\d{2})(?:[T ]?(\d{2}):?(\d{2})(?::?(\d{2}))?)?"
    r"\s*(Z|[+-]\d{2}(?::?\d{2})?)?\s*$", re.IGNORECASE)
_REL_CLOCK = re.compile(r"\s*([+-])?(?:(\d+)\+)?(?:(\d+):)?(?:(\d+):)?(\d+)(\.\d+)?\s*$")
_REL_UNITS = re.compile(r"\s*([+-])?((?:\d+(?:\.\d+)?[dhms]\s*)+)$", re.IGNORECASE)
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def abstime_text(t: AbsTime) -> str:
    """``2020-01-01T00:00:00-00:00``: the time in its own offset, then the offset."""
    try:
        tm = _time.gmtime(whole_seconds(t.seconds) + t.offset)
    except (OverflowError, OSError, ValueError):
        return "%d" % whole_seconds(t.seconds)  # beyond the C library's calendar: just the seconds
    sign = "+" if t.offset > 0 else "-"
    off = abs(t.offset)
    return "%04d-%02d-%02dT%02d:%02d:%02d%s%02d:%02d" % (
        tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
        sign, off // 3600, (off % 3600) // 60)


def reltime_text(seconds: float) -> str:
    """``[-][D+][HH:][MM:]SS`` in whole seconds, as HTCondor's relTimeToString prints a
    duration: the seconds go through a C ``int`` (out of range or NaN gives INT_MIN,
    whose negation stays negative, hence its odd ``--24855+-3:-14:-8``)."""
    whole = real_to_int32(seconds)
    sign = ""
    if whole < 0:
        sign = "-"
        whole = whole if whole == _INT32_MIN else -whole
    days, rest = _c_divmod(whole, 86400)
    hours, rest = _c_divmod(rest, 3600)
    minutes, secs = _c_divmod(rest, 60)
    if days:
        return sign + "%d+%02d:%02d:%02d" % (days, hours, minutes, secs)
    if hours:
        return sign + "%02d:%02d:%02d" % (hours, minutes, secs)
    if minutes:
        return sign + "%02d:%02d" % (minutes, secs)
    return sign + "%02d" % secs


_INT32_MIN = -(1 << 31)


def _c_divmod(a: int, b: int) -> tuple[int, int]:
    """Quotient and remainder truncated toward zero, as C's ``/`` and ``%``."""
    q = abs(a) // b
    q = q if a >= 0 else -q
    return q, a - q * b


def local_offset(seconds: float) -> int:
    """The local zone's offset east of UTC (seconds) at the given instant."""
    return _time.localtime(int(seconds)).tm_gmtoff


def parse_abstime_text(text: str) -> AbsTime | None:
    """The absolute time written as ``YYYY-MM-DDTHH:MM:SS[Z|+hh:mm]``, or None.

    Out-of-range fields roll over as ``mktime`` does (month 13 is January of the
    next year); a time without a zone is local time.
    """
    m = _ABS.match(text)
    if not m:
        return None
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    hms = [int(g or 0) for g in m.group(4, 5, 6)]
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    days = datetime.date(year, month, 1).toordinal() - _EPOCH_ORDINAL + day - 1
    wall = days * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2]
    zone = m.group(7)
    if zone is None:
        offset = local_offset(wall)
    elif zone.upper() == "Z":
        offset = 0
    else:
        digits = zone[1:].replace(":", "")
        offset = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60
        offset = -offset if zone[0] == "-" else offset
    return AbsTime(wall - offset, offset)


def parse_reltime_text(text: str) -> float | None:
    """Seconds of a duration written ``[-][D+][HH:][MM:]SS[.fff]`` or ``1d2h3m4s``; None if neither."""
    m = _REL_CLOCK.match(text)
    if m:
        sign, days, first, second, secs, frac = m.groups()
        hours, minutes = (first, second) if second is not None else (None, first)
        total = (int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60
                 + int(secs) + float(frac or 0))
        return -total if sign == "-" else float(total)
    m = _REL_UNITS.match(text)
    if m:
        total = sum(float(n) * _UNIT_SECONDS[u.lower()]
                    for n, u in re.findall(r"(\d+(?:\.\d+)?)([dhms])", m.group(2), re.IGNORECASE))
        return -total if m.group(1) == "-" else total
    return None


_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
