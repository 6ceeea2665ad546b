"""What `roost pool up` lays out before it starts anything: directories, key, tokens, config."""

import os
import stat

from bindings.cli.pool import format_duration, pool_config_text, prepare_pool_dir
from daemoncore.config import Config
from daemoncore.security import AuthorizationLevel, load_signing_key, verify_token


def test_pool_dir_gets_its_directories_key_tokens_and_config(tmp_path):
    """The pool directory holds log/spool/execute, a private key, a user and a daemon token."""
    directory = tmp_path / "pool"
    env = {"HOME": str(tmp_path), "USER": "alice"}
    config_file = prepare_pool_dir(str(directory), env)
    for sub in ("log", "spool", "execute"):
        assert (directory / sub).is_dir()
    key_file = directory / "passwords.d" / "POOL"
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    key = load_signing_key(str(key_file))
    domain = Config.load(config_file, env=env).param("TRUST_DOMAIN")
    user = verify_token(key, (directory / "tokens" / "user").read_text().strip())
    assert user.name == f"alice@{domain}"
    assert {AuthorizationLevel.READ, AuthorizationLevel.WRITE, AuthorizationLevel.ADMINISTRATOR} <= user.scopes
    daemon = verify_token(key, (directory / "tokens" / "daemon").read_text().strip())
    assert daemon.allows(AuthorizationLevel.DAEMON)


def test_pool_config_uses_the_personal_role_and_the_pool_dir(tmp_path):
    """The written config reads as a personal pool whose paths hang off the pool directory."""
    config = Config.from_text(pool_config_text(str(tmp_path)), env={"HOME": "/nowhere"})
    assert config.param("LOCAL_DIR") == str(tmp_path)
    assert config.param("LOG") == f"{tmp_path}/log"
    assert config.param("POOL_ADDRESS_FILE") == f"{tmp_path}/pool.json"
    assert config.param_list("DAEMON_LIST")[:2] == ["MASTER", "COLLECTOR"]


def test_a_second_prepare_keeps_the_signing_key(tmp_path):
    """Preparing an existing pool directory again keeps its key, so old tokens stay valid."""
    env = {"HOME": str(tmp_path), "USER": "alice"}
    prepare_pool_dir(str(tmp_path / "pool"), env)
    first = (tmp_path / "pool" / "passwords.d" / "POOL").read_bytes()
    prepare_pool_dir(str(tmp_path / "pool"), env)
    assert (tmp_path / "pool" / "passwords.d" / "POOL").read_bytes() == first


def test_uptimes_read_as_days_and_clock_time():
    """Uptimes print as D+HH:MM:SS."""
    assert format_duration(3725) == "0+01:02:05"


def test_an_execute_directory_of_empty_directories_is_removed_and_one_holding_a_file_stays(tmp_path):
    """Pool down's cleanup of a root pool's execute directory: empty directories go,
    deepest first; a file keeps its directory and every directory above it."""
    from bindings.cli.pool import remove_empty_directories

    empty = tmp_path / "pool-a"
    (empty / "simulated_gpu_usage").mkdir(parents=True)
    (empty / "dir_1" / "tmp").mkdir(parents=True)
    remove_empty_directories(str(empty))
    assert not empty.exists()

    kept = tmp_path / "pool-b"
    (kept / "simulated_gpu_usage").mkdir(parents=True)
    (kept / "dir_2").mkdir()
    (kept / "dir_2" / "_condor_stdout").write_text("left by a job")
    remove_empty_directories(str(kept))
    assert sorted(p.name for p in kept.iterdir()) == ["dir_2"]
    assert (kept / "dir_2" / "_condor_stdout").read_text() == "left by a job"
