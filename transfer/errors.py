"""Errors file transfer raises; each names the job and the file, and carries the
hold code and subcode the schedd puts on the job when the error ends a transfer."""

from __future__ import annotations

import errno as _errno

#: HTCondor's ``HoldReasonCode`` values for transfer failures.
TRANSFER_OUTPUT_FAILED = 12
TRANSFER_INPUT_FAILED = 13
MAX_INPUT_SIZE_EXCEEDED = 32
MAX_OUTPUT_SIZE_EXCEEDED = 33


class TransferError(Exception):
    """Base class of every file-transfer error; ``hold_code``/``hold_subcode`` say how
    the job is held when this error stops its transfer."""

    hold_code: int = TRANSFER_INPUT_FAILED
    hold_subcode: int = 0

    def __init__(self, message: str, *, hold_code: int | None = None,
                 hold_subcode: int | None = None) -> None:
        super().__init__(message)
        if hold_code is not None:
            self.hold_code = hold_code
        if hold_subcode is not None:
            self.hold_subcode = hold_subcode

    @property
    def hold_reason(self) -> str:
        """The text for the job's ``HoldReason``."""
        return str(self)

    def hold_attributes(self) -> dict[str, object]:
        """``HoldReason``, ``HoldReasonCode`` and ``HoldReasonSubCode`` for the job ad."""
        return {"HoldReason": self.hold_reason, "HoldReasonCode": self.hold_code,
                "HoldReasonSubCode": self.hold_subcode}


class BadTransferPathError(TransferError, ValueError):
    """A file name in the job's transfer lists escapes the sandbox or is malformed."""

    hold_subcode = _errno.EINVAL


class InputMissingError(TransferError):
    """An input file or the executable named by the job cannot be read on the submit side."""


class OutputMissingError(TransferError):
    """A file listed in ``TransferOutput`` does not exist in the sandbox."""

    hold_code = TRANSFER_OUTPUT_FAILED
    hold_subcode = _errno.ENOENT


class UnsafeArchiveError(TransferError):
    """A transfer stream holds a member that escapes its destination, a link, a device,
    or a file whose bytes do not match its checksum."""

    hold_subcode = _errno.EPERM


class TransferLimitError(TransferError):
    """A transfer is larger than the size or file-count limit it was given."""

    hold_code = MAX_INPUT_SIZE_EXCEEDED
    hold_subcode = _errno.EFBIG


class UrlTransferError(TransferError):
    """Fetching or uploading a URL (http, https, file, s3) failed; the message says why."""

    hold_subcode = _errno.EIO


class S3CredentialsError(UrlTransferError):
    """The job's S3 credential files are missing, unreadable, or were refused."""

    hold_subcode = _errno.EACCES
