"""Roost's public Python API, with the class and method names of HTCondor's
``htcondor2`` bindings (``import bindings as htcondor`` ports a script written for
HTCondor), and the ``roost`` command-line tool built on it.
"""

from bindings.collector import Collector
from bindings.enums import AdType, AdTypes, DaemonType, DaemonTypes
from bindings.eventlog import JobEvent, JobEventLog, JobEventType
from bindings.negotiator import Negotiator
from bindings.schedd import JobAction, QueryOpt, Schedd, SubmitResult
from bindings.submit import Submit

__all__ = [
    "Collector", "AdType", "AdTypes", "DaemonType", "DaemonTypes",
    "Schedd", "JobAction", "QueryOpt", "SubmitResult", "Submit",
    "JobEvent", "JobEventLog", "JobEventType", "Negotiator",
]
