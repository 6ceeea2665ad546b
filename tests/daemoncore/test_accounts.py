"""Local accounts are looked up once a minute at most, since the schedd asks at every
transfer step, in its reactor, and the answer may come from a directory service."""

import pwd

from daemoncore.security import accounts


def test_a_found_account_is_remembered_and_an_unknown_one_is_asked_again(monkeypatch):
    calls = []
    real = pwd.getpwnam

    def counting(name):
        calls.append(name)
        return real(name)

    monkeypatch.setattr(accounts.pwd, "getpwnam", counting)
    monkeypatch.setattr(accounts, "_remembered", {})
    root = real("root")
    assert accounts.local_account("root").uid == root.pw_uid
    assert accounts.local_account("root").uid == root.pw_uid
    assert accounts.local_account("no_such_user_here") is None
    assert accounts.local_account("no_such_user_here") is None
    assert calls == ["root", "no_such_user_here", "no_such_user_here"]
