"""schedd.execution.StartdContacts: calls to a startd go a few at a time, in order."""

from twisted.internet.defer import Deferred

from schedd.execution import StartdContacts


def _sender(sent: list, name: str):
    """A call that records it went and waits for the test to answer it."""
    def send() -> Deferred:
        answer: Deferred = Deferred()
        sent.append((name, answer))
        return answer
    return send


def test_calls_beyond_the_limit_wait_and_go_in_order_as_answers_come():
    """Two of four calls to one startd go at once; each answer lets the next waiting one go."""
    contacts, sent, answered = StartdContacts(limit=2), [], []
    for name in "abcd":
        contacts.call("<127.0.0.1:1>", _sender(sent, name)).addCallback(answered.append)
    assert [name for name, _ in sent] == ["a", "b"]
    assert contacts.waiting("<127.0.0.1:1>") == 2
    sent[1][1].callback("B")
    assert [name for name, _ in sent] == ["a", "b", "c"]
    sent[0][1].callback("A")
    sent[2][1].callback("C")
    sent[3][1].callback("D")
    assert answered == ["B", "A", "C", "D"]


def test_each_startd_has_its_own_limit_and_a_failure_frees_its_place():
    """A full startd does not hold back calls to another; a failed call lets the next go,
    and a startd with nothing left waiting is forgotten."""
    contacts, sent, failed = StartdContacts(limit=1), [], []
    contacts.call("one", _sender(sent, "one-a")).addErrback(failed.append)
    contacts.call("one", _sender(sent, "one-b"))
    contacts.call("two", _sender(sent, "two-a"))
    assert [name for name, _ in sent] == ["one-a", "two-a"]
    sent[0][1].errback(RuntimeError("refused"))
    assert [name for name, _ in sent] == ["one-a", "two-a", "one-b"] and len(failed) == 1
    sent[1][1].callback(None)
    sent[2][1].callback(None)
    assert contacts._lanes == {}


def test_a_call_whose_turn_comes_may_decide_to_send_nothing():
    """A waiting call whose turn comes runs then (not when queued): one that finds it has
    nothing to send answers at once and lets the next go."""
    from twisted.internet.defer import succeed

    contacts, sent, still_wanted = StartdContacts(limit=1), [], {"b": False}
    contacts.call("one", _sender(sent, "a"))
    skipped = contacts.call("one", lambda: _sender(sent, "b")() if still_wanted["b"] else succeed("nothing sent"))
    contacts.call("one", _sender(sent, "c"))
    sent[0][1].callback(None)
    assert [name for name, _ in sent] == ["a", "c"]
    assert skipped.result == "nothing sent"
