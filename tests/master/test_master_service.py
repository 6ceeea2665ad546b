"""Which daemons the master supervises, read from DAEMON_LIST."""

from daemoncore.config import Config
from daemoncore.master.service import supervised_daemons


def test_the_master_supervises_daemon_list_without_itself_collector_first():
    """MASTER is left out, duplicates dropped, and the collector starts first."""
    config = Config.from_text("DAEMON_LIST = master, schedd, COLLECTOR, schedd, startd\n")
    assert supervised_daemons(config) == ["COLLECTOR", "SCHEDD", "STARTD"]


def test_the_personal_role_supervises_the_collector():
    """use ROLE : Personal gives the master one daemon to run: the collector."""
    daemons = supervised_daemons(Config.from_text("use ROLE : Personal\n"))
    assert daemons[0] == "COLLECTOR" and "MASTER" not in daemons
