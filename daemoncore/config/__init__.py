"""HTCondor's configuration language for Roost, and the one config reader of the project.

Typical use::

    from daemoncore.config import Config
    config = Config.load()                      # or Config.load(path, env=...)
    interval = config.param_duration("UPDATE_INTERVAL")
    where = config.lookup("UPDATE_INTERVAL").origin.describe()

The language: ``NAME = value`` (names case-insensitive, later wins), ``$(NAME)``,
``$(NAME:default)``, ``$ENV(NAME)``, ``include : FILE``, ``include ifexist : FILE``,
``if``/``elif``/``else``/``endif`` (``defined NAME``, ``version >= X.Y``, booleans),
``use ROLE : Personal``, ``\\`` continuations, ``#`` comment lines and
``NAME @=TAG`` ... ``@TAG`` multi-line values.
"""

from daemoncore.config.config import (
    CONFIG_ENV,
    OVERRIDE_PREFIX,
    Config,
    ConfigValue,
    default_config_path,
)
from daemoncore.config.conversions import to_bool, to_duration, to_list
from daemoncore.config.defaults import DEFAULTS
from daemoncore.config.errors import ConfigError
from daemoncore.config.origin import Origin
from daemoncore.config.templates import TEMPLATES

__all__ = [
    "CONFIG_ENV", "DEFAULTS", "OVERRIDE_PREFIX", "TEMPLATES", "Config", "ConfigError",
    "ConfigValue", "Origin", "default_config_path", "to_bool", "to_duration", "to_list",
]
