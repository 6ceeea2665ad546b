"""File transfer for one job: what to send and receive (``plan``), the concrete
files (``resolve``), checksummed tar streams (``archive``) and URL/S3 transfers
(``urls``), and the four steps the shadow and starter call (``steps``). Errors carry the hold code and subcode the schedd applies."""

from transfer.archive import PackStream, Placement, TransferStats, into_directory, into_iwd, pack, stream_of, unpack
from transfer.errors import TransferError
from transfer.plan import STDERR_NAME, STDOUT_NAME, InputPlan, OutputPlan, input_plan, output_plan
from transfer.resolve import PackItem, resolve_inputs, resolve_outputs, snapshot_sandbox
from transfer.steps import input_attributes, output_attributes, receive_input, receive_output, send_input, send_output

__all__ = [
    "PackStream", "Placement", "TransferStats", "into_directory", "into_iwd", "pack", "stream_of",
    "unpack", "TransferError", "STDERR_NAME", "STDOUT_NAME", "InputPlan", "OutputPlan",
    "input_plan", "output_plan", "PackItem", "resolve_inputs", "resolve_outputs", "snapshot_sandbox",
    "send_input", "receive_input", "send_output", "receive_output", "input_attributes",
    "output_attributes",
]
