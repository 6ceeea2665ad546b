"""The daemons' reactor sends what a handler wrote before it handles the next ready socket."""

import os
import socket
import time

import pytest
from twisted.internet import abstract

from daemoncore.prompt_reactor import PromptEPollReactor

pytestmark = pytest.mark.skipif(not hasattr(__import__("select"), "epoll"), reason="epoll is Linux's")


class _End(abstract.FileDescriptor):
    """One end of a socket pair, read and written through the reactor under test."""

    def __init__(self, reactor, sock: socket.socket, on_read=None) -> None:
        super().__init__(reactor)
        self.sock = sock
        sock.setblocking(False)
        self.on_read = on_read
        self.connected = True

    def fileno(self) -> int:
        return self.sock.fileno()

    def doRead(self):  # noqa: N802 - Twisted's name
        data = self.sock.recv(4096)
        if self.on_read is not None:
            self.on_read(data)

    def writeSomeData(self, data: bytes) -> int:  # noqa: N802 - Twisted's name
        return self.sock.send(data)


def _busy(seconds: float) -> None:
    """Hold the reactor thread ``seconds`` on the CPU, as a slow handler does."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        pass


def _pair():
    left, right = socket.socketpair()
    return left, right


@pytest.fixture
def reactor():
    made = PromptEPollReactor()
    yield made
    made._poller.close()


def test_a_reply_leaves_before_the_next_ready_socket_is_handled(reactor):
    """Two requests ready in one poll: the answer to the first reaches its peer before
    the second is handled (Twisted's own reactor sends it only after both)."""
    first_in, first_out = _pair()
    second_in, second_out = _pair()
    answer_in, answer_out = _pair()
    answered = _End(reactor, answer_in)
    seen_when_second_ran = []

    def answer_first(data):
        answered.write(b"answer to " + data)

    def second(_data):
        answer_out.setblocking(False)
        try:
            seen_when_second_ran.append(answer_out.recv(4096))
        except BlockingIOError:
            seen_when_second_ran.append(b"")

    for end in (_End(reactor, first_in, answer_first), _End(reactor, second_in, second)):
        end.startReading()
    first_out.send(b"first")
    second_out.send(b"second")
    reactor.doIteration(1.0)
    assert seen_when_second_ran == [b"answer to first"]
    for sock in (first_in, first_out, second_in, second_out, answer_in, answer_out):
        sock.close()


def test_a_socket_that_cannot_take_more_keeps_its_data_for_later(reactor):
    """A write larger than the socket takes at once is kept and sent as the peer reads."""
    writer_sock, reader_sock = _pair()
    trigger_in, trigger_out = _pair()
    writer = _End(reactor, writer_sock)
    big = os.urandom(4 * 1024 * 1024)
    _End(reactor, trigger_in, lambda _data: writer.write(big)).startReading()
    trigger_out.send(b"go")
    reactor.doIteration(1.0)
    received = bytearray()
    reader_sock.setblocking(False)
    for _ in range(10_000):
        try:
            received += reader_sock.recv(1 << 20)
        except BlockingIOError:
            reactor.doIteration(0.01)
        if len(received) == len(big):
            break
    assert bytes(received) == big
    for sock in (writer_sock, reader_sock, trigger_in, trigger_out):
        sock.close()


def test_a_socket_still_connecting_is_left_to_its_own_event(reactor):
    """Only connected writers are flushed after a read: a connecting one is not asked to write."""
    trigger_in, trigger_out = _pair()
    writer_sock, peer = _pair()
    connecting = _End(reactor, writer_sock)
    connecting.connected = False
    calls = []
    connecting.doWrite = lambda: calls.append("write")
    connecting.startWriting()
    _End(reactor, trigger_in, lambda _data: None).startReading()
    trigger_out.send(b"go")
    reactor.doIteration(0)
    assert calls.count("write") <= 1  # at most the poll's own writable event, never the flush's
    connecting.stopWriting()
    for sock in (trigger_in, trigger_out, writer_sock, peer):
        sock.close()


def test_a_turn_ends_after_its_time_and_the_next_poll_handles_the_rest(reactor):
    """Ten sockets ready at once, each handler at least 5 ms: a 12 ms turn handles at
    most three (fewer if the machine is slow), and the others are reported again by the
    next polls until all are handled, each once."""
    reactor.turn_seconds = 0.012
    handled, pairs = [], [_pair() for _ in range(10)]

    def slow(index):
        def read(_data):
            handled.append(index)
            _busy(0.005)
        return read

    for index, (inside, outside) in enumerate(pairs):
        _End(reactor, inside, slow(index)).startReading()
        outside.send(b"x")
    reactor.doIteration(1.0)
    assert 1 <= len(handled) <= 3
    for _ in range(10):
        reactor.doIteration(0)
    assert sorted(handled) == list(range(10))
    for pair in pairs:
        for sock in pair:
            sock.close()


def test_timed_calls_due_together_run_a_turns_budget_at_a_time_in_order(reactor):
    """Ten calls due at once, each at least 5 ms: a 12 ms turn runs at most three, the
    others run in the next turns, all once and in the order they were due."""
    reactor.turn_seconds = 0.012
    ran = []

    def slow(index):
        ran.append(index)
        _busy(0.005)

    for index in range(10):
        reactor.callLater(0.0001 * index, slow, index)
    time.sleep(0.01)  # all due now, in this order
    reactor.runUntilCurrent()
    assert 1 <= len(ran) <= 3
    for _ in range(10):
        reactor.runUntilCurrent()
    assert ran == list(range(10))


def test_calls_put_off_run_before_those_made_after_them(reactor):
    """A call the first of ten due calls makes with no delay runs after all ten: the
    ones put off to the next turn were due first."""
    reactor.turn_seconds = 0.012
    ran = []

    def slow(index):
        ran.append(index)
        if index == 0:
            reactor.callLater(0, ran.append, "made by 0")
        _busy(0.005)

    for index in range(10):
        reactor.callLater(0.0001 * index, slow, index)
    time.sleep(0.01)
    for _ in range(12):
        reactor.runUntilCurrent()
    assert ran == [*range(10), "made by 0"]


def test_a_full_collection_is_due_when_idle_or_after_many_young_ones():
    """Idle, the usual ten middle-generation collections make one due; busy, only the forced count does."""
    from daemoncore.prompt_reactor import FULL_COLLECTION_DUE, FULL_COLLECTION_FORCED, full_collection_due

    assert not full_collection_due(FULL_COLLECTION_DUE - 1, idle=True)
    assert full_collection_due(FULL_COLLECTION_DUE, idle=True)
    assert not full_collection_due(FULL_COLLECTION_FORCED - 1, idle=False)
    assert full_collection_due(FULL_COLLECTION_FORCED, idle=False)


@pytest.fixture
def collections(reactor, monkeypatch):
    """The reactor running full collections, with CPython's counts and collect stood in for."""
    import daemoncore.prompt_reactor as module

    counts, ran = [0, 0, 0], []
    monkeypatch.setattr(module.gc, "get_count", lambda: tuple(counts))
    monkeypatch.setattr(module.gc, "collect", lambda *args: ran.append(args))
    reactor._collects = True
    return counts, ran


def test_a_due_full_collection_waits_for_an_idle_poll(reactor, collections):
    """With a collection due, a poll that finds a socket ready does not collect, nor an
    empty one right after it; an empty poll once no socket was ready for IDLE_SECONDS does."""
    from daemoncore.prompt_reactor import FULL_COLLECTION_DUE, IDLE_SECONDS

    counts, ran = collections
    counts[2] = FULL_COLLECTION_DUE
    inside, outside = _pair()
    _End(reactor, inside, lambda _data: None).startReading()
    outside.send(b"x")
    reactor.doPoll(1.0)
    reactor.doPoll(0.001)
    assert ran == []
    reactor._last_ready -= IDLE_SECONDS
    reactor.doPoll(0.001)
    assert ran == [()]
    inside.close()
    outside.close()


def test_a_busy_reactor_collects_once_the_forced_count_is_reached(reactor, collections):
    """Never idle, the reactor still runs a full collection at a turn's start after FULL_COLLECTION_FORCED."""
    from daemoncore.prompt_reactor import FULL_COLLECTION_FORCED

    counts, ran = collections
    counts[2] = FULL_COLLECTION_FORCED - 1
    reactor.runUntilCurrent()
    assert ran == []
    counts[2] = FULL_COLLECTION_FORCED
    reactor.runUntilCurrent()
    assert ran == [()]


def test_collect_when_idle_turns_cpythons_automatic_full_collections_off(reactor):
    """The third threshold is set out of reach; the first two stay as they were."""
    import gc

    from daemoncore.prompt_reactor import NO_AUTOMATIC_FULL_COLLECTION

    before = gc.get_threshold()
    try:
        reactor.collect_when_idle()
        assert gc.get_threshold() == (before[0], before[1], NO_AUTOMATIC_FULL_COLLECTION)
    finally:
        gc.set_threshold(*before)


def test_the_reactor_counts_its_turns_and_notes_a_long_one_without_its_poll_wait(reactor):
    """Each turn is counted; a turn whose timed calls took 30 ms is noted as long, its
    idle wait in the poll left out; a short turn leaves the note as it was."""
    first = reactor.turn_number
    reactor.callLater(0, lambda: time.sleep(0.03))
    reactor.runUntilCurrent()
    reactor.doPoll(0.05)  # nothing ready: 50 ms of waiting, not of work
    reactor.runUntilCurrent()
    number, busy = reactor.long_turn
    assert (reactor.turn_number, number) == (first + 2, first + 1)
    assert 0.03 <= busy < 0.05
    reactor.runUntilCurrent()
    assert reactor.long_turn == (number, busy)
    assert not reactor.polling


def test_sockets_a_turn_left_out_go_first_in_the_next():
    """The fds the budget left out come first, in their order; the others follow in the poll's."""
    from daemoncore.prompt_reactor import waiting_first

    ready = [(3, 1), (4, 1), (5, 4), (6, 1), (7, 1)]
    assert waiting_first(ready, [6, 9, 5]) == [(6, 1), (5, 4), (3, 1), (4, 1), (7, 1)]
    assert waiting_first(ready, []) == ready


def test_sockets_that_stay_ready_do_not_starve_the_others(reactor):
    """Ten sockets that stay ready (each read takes one byte of many) and a budget of
    two or three handlers per turn: every socket is handled once before any twice
    (epoll reports them in the same order each poll; the first three took every turn)."""
    reactor.turn_seconds = 0.012
    handled, pairs = [], [_pair() for _ in range(10)]

    def one_byte(index, end):
        def read():
            end.sock.recv(1)
            handled.append(index)
            _busy(0.005)
        return read

    for index, (inside, outside) in enumerate(pairs):
        end = _End(reactor, inside)
        end.doRead = one_byte(index, end)
        end.startReading()
        outside.send(b"x" * 1000)
    while len(handled) < 10:
        reactor.doIteration(0)
    assert sorted(handled[:10]) == list(range(10))
    for pair in pairs:
        for sock in pair:
            sock.close()


def test_the_load_follows_the_share_of_time_spent_working_older_time_weighing_less():
    """Working all the time drives the load toward 1, idling toward 0; after one half-life
    a stretch counts half; no time passed changes nothing."""
    from daemoncore.prompt_reactor import LOAD_HALF_LIFE, decayed_load

    assert decayed_load(0.0, LOAD_HALF_LIFE, LOAD_HALF_LIFE) == 0.5
    assert decayed_load(1.0, 0.0, LOAD_HALF_LIFE) == 0.5
    assert decayed_load(0.3, 0.0, 0.0) == 0.3
    load = 0.0
    for _ in range(100):  # two seconds of turns, all work
        load = decayed_load(load, 0.02, 0.02)
    assert load > 0.95
    assert decayed_load(load, 0.0, 10 * LOAD_HALF_LIFE) < 0.01


def test_the_reactors_load_rises_with_busy_turns_and_falls_with_waiting(reactor):
    """Turns of work raise ``load``; a long wait in the poll brings it down."""
    for _ in range(5):
        reactor.callLater(0, lambda: time.sleep(0.05))
        reactor.runUntilCurrent()
    reactor.runUntilCurrent()
    busy = reactor.load
    assert busy > 0.5
    reactor.doPoll(0.3)  # nothing ready: waiting, not work
    reactor.runUntilCurrent()
    assert reactor.load < busy / 2
