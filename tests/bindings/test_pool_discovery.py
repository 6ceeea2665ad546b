"""Finding the pool: the pool argument, COLLECTOR_HOST, then the personal pool's address file."""

import json

import pytest

from bindings.collector import _invalidations, constraint_text
from bindings.enums import AdType, DaemonType
from bindings.pool import NO_POOL, NoPoolFound, Pool, default_pool_dir, find_pool, pool_token
from daemoncore.config import Config


def config(text="", tmp_path=None):
    return Config.from_text(text, env={"HOME": str(tmp_path or "/nonexistent")})


def test_the_pool_argument_wins_and_gets_the_default_port(tmp_path):
    """pool= beats COLLECTOR_HOST; a bare host gets port 9618."""
    found = find_pool("cm.example.org", config("COLLECTOR_HOST = other:1234\n", tmp_path))
    assert found.collector == "cm.example.org:9618" and found.source == "the pool argument"


def test_collector_host_names_where_it_was_set(tmp_path):
    """COLLECTOR_HOST is used next, and the pool says which line set it."""
    found = find_pool(None, config("COLLECTOR_HOST = <127.0.0.1:5000>\n", tmp_path))
    assert found.collector == "127.0.0.1:5000" and "COLLECTOR_HOST" in found.source


def test_the_personal_pool_file_is_the_last_resort(tmp_path):
    """Without COLLECTOR_HOST the address file gives the collector and the user's token file."""
    path = tmp_path / "pool.json"
    path.write_text(json.dumps({"collector": "127.0.0.1:4000", "token_file": "/t", "dir": "/d"}))
    found = find_pool(None, config(f"POOL_ADDRESS_FILE = {path}\n", tmp_path))
    assert (found.collector, found.token_file, found.dir) == ("127.0.0.1:4000", "/t", "/d")


def test_no_pool_at_all_gives_the_hint(tmp_path):
    """Nothing configured and no address file: the one-line hint."""
    with pytest.raises(NoPoolFound, match="roost pool up"):
        find_pool(None, config(f"POOL_ADDRESS_FILE = {tmp_path}/none.json\n", tmp_path))
    assert "COLLECTOR_HOST" in NO_POOL


def test_a_corrupt_pool_file_says_what_to_do(tmp_path):
    """A pool file that is not JSON is named, with the way out."""
    path = tmp_path / "pool.json"
    path.write_text("{half")
    with pytest.raises(ValueError, match="pool.json is not JSON"):
        find_pool(None, config(f"POOL_ADDRESS_FILE = {path}\n", tmp_path))


def test_a_bad_collector_host_is_reported_with_its_origin(tmp_path):
    """COLLECTOR_HOST with a bad port names the knob."""
    with pytest.raises(ValueError, match="COLLECTOR_HOST"):
        find_pool(None, config("COLLECTOR_HOST = host:99999\n", tmp_path))


def test_default_pool_dir_follows_xdg_data_home():
    """The pool lives under $XDG_DATA_HOME, else ~/.local/share."""
    assert default_pool_dir({"HOME": "/h"}) == "/h/.local/share/roost/pool"
    assert default_pool_dir({"HOME": "/h", "XDG_DATA_HOME": "/x"}) == "/x/roost/pool"


def test_the_personal_pool_token_is_used_unless_roost_token_is_set(tmp_path):
    """The pool's own token file is sent, but ROOST_TOKEN overrides it."""
    token_file = tmp_path / "user"
    token_file.write_text("aaa.bbb.ccc\n")
    pool = Pool("127.0.0.1:1", "test", token_file=str(token_file))
    assert pool_token(pool, config(tmp_path=tmp_path), {"HOME": str(tmp_path)}) == "aaa.bbb.ccc"
    env = {"HOME": str(tmp_path), "ROOST_TOKEN": "xxx.yyy.zzz"}
    assert pool_token(pool, config(tmp_path=tmp_path), env) == "xxx.yyy.zzz"


def test_enums_name_the_collector_types():
    """AdType and DaemonType carry HTCondor's names and the collector's ad types."""
    assert AdType.Startd.collector_type == "Machine" and AdType.Slot is AdType.Startd
    assert AdType.Schedd.collector_type == "Scheduler" and DaemonType.Master.collector_type == "DaemonMaster"


def test_constraints_and_invalidations_for_the_wire():
    """Constraints become expression text; invalidation ads become names or a constraint."""
    assert constraint_text(True) == "true" and constraint_text("  Cpus > 1 ") == "Cpus > 1"
    assert _invalidations([{"Name": "a"}, {"name": "b"}]) == [{"names": ["a", "b"]}]
    assert _invalidations([{"Requirements": "/Expr(Cpus > 1)/"}]) == [{"constraint": "Cpus > 1"}]
    with pytest.raises(ValueError, match="Name or a Requirements"):
        _invalidations([{"Memory": 1}])
