"""``roost token create`` and ``roost token list`` against real key and token files."""

from __future__ import annotations

import os
import stat

import pytest

from bindings.cli.token import main
from daemoncore.security import AuthorizationLevel, create_signing_key, issue_token, verify_token, write_token
from daemoncore.security.signing_key import public_key_pem, write_public_key


@pytest.fixture
def env(tmp_path):
    """A home whose default config finds its signing key under LOCAL_DIR."""
    return {"HOME": str(tmp_path), "_ROOST_TRUST_DOMAIN": "testpool"}


@pytest.fixture
def key(tmp_path):
    return create_signing_key(str(tmp_path / ".local/share/roost/passwords.d/POOL"))


def test_create_prints_a_token_signed_with_the_pool_key(env, key, capsys):
    """With the default key file, create prints a token for the identity and scopes."""
    assert main(["create", "--identity", "alice@pool", "--scope", "WRITE", "--scope", "read",
                 "--lifetime", "1d"], env) == 0
    token = capsys.readouterr().out.strip()
    who = verify_token(key, token)
    assert who.name == "alice@pool" and who.issuer == "testpool"
    assert who.scopes == {AuthorizationLevel.WRITE, AuthorizationLevel.READ}
    assert who.expires - who.issued == 86400


def test_create_writes_a_private_file_with_out(env, key, tmp_path, capsys):
    """--out writes the token with mode 0600 and prints nothing on stdout."""
    out = tmp_path / "alice.token"
    assert main(["create", "--identity", "alice@pool", "--scope", "READ", "--out", str(out)], env) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and str(out) in captured.err
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert verify_token(key, out.read_text().strip()).expires is None


def test_create_with_explicit_key_and_token_name(env, tmp_path, capsys):
    """--key names another key file and -token writes into the token directory."""
    other = create_signing_key(str(tmp_path / "other.key"))
    assert main(["create", "-identity", "bob@pool", "-authz", "DAEMON", "-key", str(tmp_path / "other.key"),
                 "-token", "bob"], env) == 0
    path = tmp_path / ".config/roost/tokens.d/bob"
    assert verify_token(other, path.read_text().strip()).allows(AuthorizationLevel.DAEMON)


@pytest.mark.parametrize(("args", "words"), [
    (["--identity", "alice", "--scope", "READ"], "not of the form user@domain"),
    (["--identity", "alice@pool", "--scope", "ROOT"], "unknown authorization level 'ROOT'"),
    (["--identity", "alice@pool", "--scope", "READ", "--lifetime", "soon"], "--lifetime 'soon'"),
])
def test_create_explains_bad_arguments(env, key, capsys, args, words):
    """Bad identity, scope or lifetime get one clear line and exit 1."""
    assert main(["create", *args], env) == 1
    assert words in capsys.readouterr().err


def test_create_without_a_key_says_so(env, capsys):
    """With no signing key the command says which file is missing."""
    assert main(["create", "--identity", "alice@pool", "--scope", "READ"], env) == 1
    assert "passwords.d/POOL does not exist" in capsys.readouterr().err


def test_create_refuses_a_key_readable_by_others(env, key, tmp_path, capsys):
    """A world-readable key file is refused with the chmod that fixes it."""
    os.chmod(tmp_path / ".local/share/roost/passwords.d/POOL", 0o644)
    assert main(["create", "--identity", "alice@pool", "--scope", "READ"], env) == 1
    assert "chmod 600" in capsys.readouterr().err


def test_list_shows_identity_scopes_expiry_and_validity(env, key, tmp_path, capsys):
    """list shows each token file with who it is for, its scopes, expiry and whether it verifies."""
    main(["create", "--identity", "alice@pool", "--scope", "WRITE", "-token", "alice"], env)
    (tmp_path / ".config/roost/tokens.d/junk").write_text("not-a-token\n")
    capsys.readouterr()
    assert main(["list"], env) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["FILE", "IDENTITY", "SCOPES", "ISSUER", "EXPIRES", "STATUS"]
    alice = next(line for line in lines if "alice@pool" in line)
    assert alice.split()[1:5] == ["alice@pool", "WRITE", "testpool", "never"] and alice.endswith("valid")
    assert "malformed" in next(line for line in lines if "junk" in line)


def test_list_without_key_marks_tokens_unverified(env, key, tmp_path, capsys):
    """Without a readable key, tokens are listed but marked unverified."""
    main(["create", "--identity", "alice@pool", "--scope", "READ", "-token", "alice"], env)
    os.remove(tmp_path / ".local/share/roost/passwords.d/POOL")
    os.remove(tmp_path / ".local/share/roost/passwords.d/POOL.pub")
    capsys.readouterr()
    assert main(["list"], env) == 0
    assert "unverified" in capsys.readouterr().out


def test_list_empty_directory(env, capsys, tmp_path):
    """An empty or missing token directory is reported plainly."""
    assert main(["list"], env) == 0
    assert capsys.readouterr().out.strip() == f"no tokens in {tmp_path}/.config/roost/tokens.d"


@pytest.fixture
def joined_host(tmp_path):
    """A host that joined a pool: the pool's public key beside where the signing key
    would be, and no signing key; the central manager's key is elsewhere."""
    pool_key = create_signing_key(str(tmp_path / "cm" / "POOL"))
    write_public_key(str(tmp_path / ".local/share/roost/passwords.d/POOL.pub"), public_key_pem(pool_key))
    return pool_key


def test_create_on_a_joined_host_says_tokens_are_made_on_the_central_manager(env, joined_host, capsys):
    """Without the signing key but with the public key, create explains where to run it."""
    assert main(["create", "-identity", "alice@pool", "-scope", "READ"], env) == 1
    assert "run `roost token create` on the central manager" in capsys.readouterr().err


def test_list_on_a_joined_host_checks_tokens_with_the_public_key(env, joined_host, tmp_path, capsys):
    """The pool's public key is enough to say a token is valid."""
    directory = tmp_path / ".config/roost/tokens.d"
    write_token(str(directory / "alice"), issue_token(joined_host, "alice@pool", ["READ"], issuer="testpool"))
    assert main(["list"], env) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "alice@pool" in line)
    assert row.endswith("valid") and "invalid" not in row
