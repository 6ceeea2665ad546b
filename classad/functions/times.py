"""Time builtins: ``time``, ``currentTime``, ``timeZoneOffset``, ``dayTime``, ``absTime``,
``relTime``, the ``get*`` field readers, ``splitTime``, ``formatTime`` and ``interval``.

HTCondor keeps the seconds of both time types in C ints in several places; the
conversions here wrap the same way so results agree at the edges. Local time is
whatever the process's time zone says (the conformance cases use UTC).
"""

from __future__ import annotations

import math
import time as _time

from classad.functions import builtin
from classad.functions.arithmetic import c_divide
from classad.functions.coercion import real_to_int32, to_int32, to_integer, whole_seconds
from classad.functions.time_text import local_offset
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime


def _now() -> int:
    return int(_time.time())


@builtin("time", 0)
def epoch_time() -> int:
    """Seconds since the epoch, now."""
    return _now()


@builtin("currentTime", 0)
def current_time() -> AbsTime:
    now = _now()
    return AbsTime(now, local_offset(now))


@builtin("timeZoneOffset", 0)
def time_zone_offset() -> RelTime:
    return RelTime(float(local_offset(_now())))


@builtin("dayTime", 0)
def day_time() -> RelTime:
    """Seconds since local midnight."""
    t = _time.localtime(_now())
    return RelTime(float(t.tm_hour * 3600 + t.tm_min * 60 + t.tm_sec))


def _offset_argument(z: object) -> object:
    t = type(z)
    if t is int:
        return to_int32(z)
    if t is float:
        return real_to_int32(z)
    if t is RelTime:
        return whole_seconds(z.seconds)
    return ERROR


@builtin("absTime", 0, 2)
def abs_time(*args: object) -> object:
    """An absolute time from seconds (and an optional offset east of UTC); a string
    argument comes back unchanged, as HTCondor folds literal strings at parse time."""
    if not args:
        return current_time()
    offset = _offset_argument(args[1]) if len(args) == 2 else None
    if offset is ERROR:
        return ERROR
    t = args[0]
    kind = type(t)
    if t is UNDEFINED or kind is str or kind is AbsTime:
        return t
    if kind is int:
        secs = to_int32(t)
    elif kind is float:
        secs = real_to_int32(t)
    elif kind is RelTime:
        secs = whole_seconds(t.seconds)
    else:
        return ERROR
    return AbsTime(secs, _local_offset_or_zero(secs) if offset is None else offset)


@builtin("relTime", 1)
def rel_time(t: object) -> object:
    """A relative time from seconds, or from an absolute time's seconds."""
    kind = type(t)
    if t is UNDEFINED or kind is RelTime:
        return t
    if kind is int:
        return RelTime(float(to_int32(t)))
    if kind is float:
        return RelTime(t)
    if kind is AbsTime:
        return RelTime(float(t.seconds))
    if kind is str:
        return RelTime(0.0)
    return ERROR


def c_remainder(a: int, b: int) -> int:
    return a - c_divide(a, b) * b


_ABS_FIELDS = {
    "getYear": lambda tm: tm.tm_year,
    "getMonth": lambda tm: tm.tm_mon,
    "getDayOfYear": lambda tm: tm.tm_yday - 1,
    "getDayOfMonth": lambda tm: tm.tm_mday,
    "getDayOfWeek": lambda tm: (tm.tm_wday + 1) % 7,
    "getHours": lambda tm: tm.tm_hour,
    "getMinutes": lambda tm: tm.tm_min,
    "getSeconds": lambda tm: tm.tm_sec,
}
_REL_FIELDS = {
    "getDays": lambda s: c_divide(s, 86400),
    "getHours": lambda s: c_divide(c_remainder(s, 86400), 3600),
    "getMinutes": lambda s: c_divide(c_remainder(s, 3600), 60),
    "getSeconds": lambda s: c_remainder(s, 60),
}


def _field_reader(name: str) -> None:
    """Absolute times are read in local time (not their own offset), as HTCondor does."""

    def impl(v: object) -> object:
        if type(v) is AbsTime and name in _ABS_FIELDS:
            tm = _local_fields(v)
            return ERROR if tm is None else _ABS_FIELDS[name](tm)
        if type(v) is RelTime and name in _REL_FIELDS:
            return _REL_FIELDS[name](whole_seconds(v.seconds))
        return ERROR

    builtin(name, 1)(impl)


for _name in ("getYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDayOfWeek",
              "getDays", "getHours", "getMinutes", "getSeconds"):
    _field_reader(_name)


def _local_fields(t: AbsTime) -> _time.struct_time | None:
    try:
        return _time.localtime(whole_seconds(t.seconds))
    except (OverflowError, OSError, ValueError):
        return None


def _local_offset_or_zero(secs: int) -> int:
    try:
        return local_offset(secs)
    except (OverflowError, OSError, ValueError):
        return 0


def _as_abstime(v: object) -> AbsTime | None:
    """Numbers become absolute times in the local zone; absolute times stay."""
    kind = type(v)
    if kind is int:
        secs = to_int32(v)
    elif kind is float:
        secs = real_to_int32(v)
    elif kind is AbsTime:
        return v
    else:
        return None
    return AbsTime(secs, _local_offset_or_zero(secs))


def _wall_clock(t: AbsTime) -> _time.struct_time | None:
    """The calendar fields of an absolute time in its own offset (None if out of range)."""
    try:
        return _time.gmtime(whole_seconds(t.seconds) + t.offset)
    except (OverflowError, OSError, ValueError):
        return None


def split_abstime(t: AbsTime) -> dict | None:
    tm = _wall_clock(t)
    if tm is None:
        return None
    return {"Type": "AbsoluteTime", "Year": tm.tm_year, "Month": tm.tm_mon, "Day": tm.tm_mday,
            "Hours": tm.tm_hour, "Minutes": tm.tm_min, "Seconds": tm.tm_sec, "Offset": t.offset}


def split_reltime(seconds: float) -> dict:
    """Days, hours, minutes and (real) seconds; a negative duration negates only the
    first part that is not zero."""
    size = abs(seconds) if math.isfinite(seconds) else 0.0
    whole = int(size)
    parts = [whole // 86400, whole % 86400 // 3600, whole % 3600 // 60, whole % 60 + (size - whole)]
    if seconds < 0:
        first = next((i for i, p in enumerate(parts[:3]) if p > 0), 3)
        parts[first] = -parts[first]
    days, hours, minutes, secs = parts
    return {"Type": "RelativeTime", "Days": days, "Hours": hours, "Minutes": minutes, "Seconds": float(secs)}


def make_ad(attributes: dict) -> object:
    """A ClassAd holding the given attribute values."""
    from classad.ad import ClassAd

    ad = ClassAd()
    for name, value in attributes.items():
        ad[name] = value
    return ad


@builtin("splitTime", 1)
def split_time(v: object) -> object:
    """An ad of the calendar fields of an absolute time (numbers count as local times)
    or of the parts of a relative time."""
    if v is UNDEFINED:
        return UNDEFINED
    if type(v) is RelTime:
        return make_ad(split_reltime(v.seconds))
    t = _as_abstime(v)
    parts = None if t is None else split_abstime(t)
    return ERROR if parts is None else make_ad(parts)


@builtin("formatTime", 0, 2)
def format_time(*args: object) -> object:
    """``strftime`` of a time (default now) with a format (default ``%c``), in the
    time's own offset; numbers count as local times."""
    if not args:
        return _time.strftime("%c", _time.localtime(_now()))
    t = _as_abstime(args[0])
    fmt = args[1] if len(args) == 2 else "%c"
    tm = None if t is None else _wall_clock(t)
    if tm is None or type(fmt) is not str:
        return ERROR
    return _strftime(fmt, tm)


def _strftime(fmt: str, tm: _time.struct_time) -> str:
    fields = tuple(tm)[:8] + (0,)
    try:
        return _time.strftime(fmt, _time.struct_time(fields))
    except (ValueError, UnicodeError):
        return ""


@builtin("interval", 1)
def interval(v: object) -> object:
    """Seconds as ``[D+][H:]MM:SS``-style text with leading zero parts left out (``1:30``)."""
    seconds = to_integer(v)
    if type(seconds) is not int:
        return ERROR
    seconds = to_int32(seconds)
    days = c_divide(seconds, 86400)
    rest = c_remainder(seconds, 86400)
    hours, rest = c_divide(rest, 3600), c_remainder(rest, 3600)
    minutes, secs = c_divide(rest, 60), c_remainder(rest, 60)
    if days:
        return "%d+%02d:%02d:%02d" % (days, abs(hours), abs(minutes), abs(secs))
    if hours:
        return "%d:%02d:%02d" % (hours, abs(minutes), abs(secs))
    if minutes:
        return "%d:%02d" % (minutes, abs(secs))
    return "%d" % secs

