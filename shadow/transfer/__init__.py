"""File transfer for one job: what to send and receive (``plan``), the concrete
files (``resolve``), checksummed tar streams (``archive``) and URL/S3 transfers
(``urls``). Errors carry the hold code and subcode the schedd applies."""

from shadow.transfer.archive import (
    PackStream, Placement, TransferStats, into_directory, into_iwd, pack, stream_of, unpack)
from shadow.transfer.errors import TransferError
from shadow.transfer.plan import (
    STDERR_NAME, STDOUT_NAME, InputPlan, OutputPlan, input_plan, output_plan)
from shadow.transfer.resolve import PackItem, resolve_inputs, resolve_outputs, snapshot_sandbox

__all__ = [
    "PackStream", "Placement", "TransferStats", "into_directory", "into_iwd", "pack", "stream_of",
    "unpack", "TransferError", "STDERR_NAME", "STDOUT_NAME", "InputPlan", "OutputPlan",
    "input_plan", "output_plan", "PackItem", "resolve_inputs", "resolve_outputs", "snapshot_sandbox",
]
