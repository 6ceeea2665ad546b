"""Fixtures for startd tests: a machine with simulated GPUs and a clock."""

import pytest
from twisted.internet.task import Clock

from startd.discovery import Machine, linux_platform
from startd.gpus import read_gpus
from startd.simulated_nvml import SimulatedNvml


def make_machine(cpus=8, memory=16384, disk=1_000_000, gpus="2xA100:40G"):
    cards = read_gpus(SimulatedNvml(gpus, seed="node1")) if gpus else ()
    return Machine("node1", cpus, memory, disk, cpus, memory,
                   linux_platform("x86_64", 'ID=ubuntu\nVERSION_ID="22.04"\n'), 0.5, cards)


@pytest.fixture
def machine():
    return make_machine()


@pytest.fixture
def clock():
    clock = Clock()
    clock.advance(1_000_000)
    return clock
