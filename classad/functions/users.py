"""``userHome`` and ``userMap`` as an HTCondor with its default configuration answers them.

HTCondor looks a home directory up only when ``CLASSAD_ENABLE_USER_HOME`` is true and
maps users only through configured map files; Roost has neither, so ``userHome``
gives its default (or undefined) and ``userMap`` finds no user.
"""

from __future__ import annotations

from classad.functions import builtin
from classad.values import ERROR, UNDEFINED


@builtin("userHome", 1, 2)
def user_home(user: object, default: object = None) -> object:
    """The default when one is given as a non-empty string; else undefined for a
    user name (lookup disabled) and error for a non-string."""
    if type(default) is str and default:
        return default
    if user is UNDEFINED or type(user) is str:
        return UNDEFINED
    return ERROR


@builtin("userMap", 2, 4)
def user_map(map_name: object, user: object, preferred: object = None, fallback: object = None) -> object:
    """No map is configured, so no user is found: the default group if one is given."""
    if type(map_name) is not str or type(user) is not str:
        return ERROR
    return fallback if type(fallback) is str else UNDEFINED
