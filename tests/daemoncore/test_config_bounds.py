"""Integer values in configuration are bounded: a huge number is a ConfigError that
names the file and line, never a bare ValueError (issue 9)."""

from __future__ import annotations

import pytest

from daemoncore.config import Config, ConfigError


def _load(tmp_path, text: str) -> Config:
    config_dir = tmp_path / ".config" / "roost"
    config_dir.mkdir(parents=True)
    (config_dir / "config").write_text(text)
    return Config.load(env={"HOME": str(tmp_path)}, hostname="h")


def test_huge_integer_value_names_file_and_line(tmp_path) -> None:
    """param_int of a 5,000-digit value is a ConfigError at the line that set it."""
    config = _load(tmp_path, "A = 1\nBIG = " + "9" * 5000 + "\n")
    with pytest.raises(ConfigError) as caught:
        config.param_int("BIG")
    assert caught.value.line == 2 and caught.value.source.endswith("config")
    assert "at most" in str(caught.value) and len(str(caught.value)) < 400


def test_huge_version_in_condition_names_file_and_line(tmp_path) -> None:
    """``if version >= <5,000 digits>`` is a ConfigError at its line."""
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, "A = 1\nif version >= " + "9" * 5000 + "\nB = 2\nendif\n")
    assert caught.value.line == 2


def test_ordinary_integers_still_read(tmp_path) -> None:
    """Numbers of ordinary length, hexadecimal included, are unaffected."""
    config = _load(tmp_path, "A = 300\nB = 0x10\nC = -1\n")
    assert (config.param_int("A"), config.param_int("B"), config.param_int("C")) == (300, 16, -1)
