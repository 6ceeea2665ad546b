"""roost pool ca: create makes the CA once (key 0600) and refuses to overwrite it,
issue writes a host certificate signed by it with the names and addresses given,
fingerprint prints what a joining host compares; every subcommand answers --help."""

from __future__ import annotations

import os
import stat

import pytest

from bindings.cli import main as roost
from daemoncore.security.tls import fingerprint, load_authority, parse_certificate, signed_by, subject_names


def test_create_then_refuse_to_overwrite(tmp_path, capsys):
    """The first create makes pool_ca.crt and a 0600 pool_ca.key; the second exits 1 and changes nothing."""
    assert roost(["pool", "ca", "create", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert stat.S_IMODE(os.stat(tmp_path / "pool_ca.key").st_mode) == 0o600
    assert fingerprint((tmp_path / "pool_ca.crt").read_bytes()) in out
    before = (tmp_path / "pool_ca.key").read_bytes()
    assert roost(["pool", "ca", "create", "-dir", str(tmp_path)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert (tmp_path / "pool_ca.key").read_bytes() == before


def test_create_defaults_to_the_signing_key_directory(tmp_path, monkeypatch, capsys):
    """Without -dir the CA goes beside SEC_TOKEN_POOL_SIGNING_KEY_FILE."""
    config = tmp_path / "config"
    config.write_text(f"SEC_TOKEN_POOL_SIGNING_KEY_FILE = {tmp_path}/keys/POOL\n")
    monkeypatch.setenv("ROOST_CONFIG", str(config))
    assert roost(["pool", "ca", "create"]) == 0
    assert (tmp_path / "keys" / "pool_ca.key").exists()


def test_issue_writes_a_host_certificate_signed_by_the_ca(tmp_path, capsys):
    """issue HOST -ip A -ip B writes HOST.crt/HOST.key (0600) for those names and prints the config lines."""
    assert roost(["pool", "ca", "create", "-dir", str(tmp_path)]) == 0
    assert roost(["pool", "ca", "issue", "exec1.example.org", "exec1", "--ip", "198.18.0.3", "-ip", "198.18.1.3",
                  "-dir", str(tmp_path), "-out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    cert = parse_certificate((tmp_path / "out" / "exec1.example.org.crt").read_bytes())
    assert subject_names(cert) == ["exec1.example.org", "exec1", "198.18.0.3", "198.18.1.3"]
    assert signed_by(cert, load_authority(str(tmp_path)).certificate)
    assert stat.S_IMODE(os.stat(tmp_path / "out" / "exec1.example.org.key").st_mode) == 0o600
    assert f"AUTH_SSL_SERVER_CERTFILE = {tmp_path}/out/exec1.example.org.crt" in out
    assert f"AUTH_SSL_SERVER_CAFILE = {tmp_path}/pool_ca.crt" in out


def test_issue_without_a_ca_says_so(tmp_path, capsys):
    """issue before create: exit 1 naming the missing CA file."""
    assert roost(["pool", "ca", "issue", "h", "-dir", str(tmp_path)]) == 1
    assert "pool_ca.crt does not exist" in capsys.readouterr().err


def test_issue_refuses_a_bad_address(tmp_path, capsys):
    """An -ip that is no IP address is refused and nothing is written."""
    roost(["pool", "ca", "create", "-dir", str(tmp_path)])
    assert roost(["pool", "ca", "issue", "h", "-ip", "nope", "-dir", str(tmp_path)]) == 1
    assert "'nope' is not an IP address" in capsys.readouterr().err
    assert not (tmp_path / "hosts").exists()


def test_fingerprint_prints_the_cas(tmp_path, capsys):
    """fingerprint prints the 64 hex digits of the CA certificate's SHA-256."""
    roost(["pool", "ca", "create", "-dir", str(tmp_path)])
    capsys.readouterr()
    assert roost(["pool", "ca", "fingerprint", "-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == fingerprint((tmp_path / "pool_ca.crt").read_bytes())


@pytest.mark.parametrize("sub", ["create", "issue", "fingerprint"])
def test_every_pool_ca_subcommand_answers_help(sub, capsys):
    """roost pool ca SUB --help prints its usage and exits 0."""
    assert roost(["pool", "ca", sub, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: roost pool ca {sub}")


def test_pool_help_lists_ca(capsys):
    """roost pool --help lists the ca subcommand, and roost pool ca --help its own."""
    assert roost(["pool", "--help"]) == 0
    assert "  ca " in capsys.readouterr().out
    assert roost(["pool", "ca", "--help"]) == 0
    assert "issue" in capsys.readouterr().out
