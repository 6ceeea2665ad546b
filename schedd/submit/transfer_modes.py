"""``should_transfer_files`` and ``when_to_transfer_output``: the spellings HTCondor
accepts, the defaults, and the combinations it refuses.

HTCondor reads both through its translation tables (``enum_utils.cpp``:
``ShouldTransferFilesTranslation`` and ``FileTransferOutputTranslation``, matched
without regard to case) and writes back each table's first name for the value, so
``should_transfer_files = true`` becomes ``ShouldTransferFiles = "YES"``.
"""

from __future__ import annotations

import attrs

from schedd.submit.errors import SubmitError
from schedd.submit.values import string_value

#: every spelling of should_transfer_files and the value written to the job
SHOULD_SPELLINGS = {"YES": "YES", "TRUE": "YES", "ALWAYS": "YES", "NO": "NO", "FALSE": "NO",
                    "NEVER": "NO", "IF_NEEDED": "IF_NEEDED", "AUTO": "IF_NEEDED"}
#: every spelling of when_to_transfer_output; "" stands for HTCondor's FTO_NONE
WHEN_SPELLINGS = {"ON_EXIT_OR_EVICT": "ON_EXIT_OR_EVICT", "ALWAYS": "ON_EXIT_OR_EVICT",
                  "ON_EXIT": "ON_EXIT", "ONEXIT": "ON_EXIT", "ON_SUCCESS": "ON_SUCCESS",
                  "ONSUCCESS": "ON_SUCCESS", "NONE": "", "NULL": ""}


@attrs.frozen
class TransferModes:
    """The job's ``ShouldTransferFiles`` and ``WhenToTransferOutput`` (None: not written)."""

    should: str
    when: str | None


def _lookup(text: str, table: dict[str, str], command: str, choices: str) -> str:
    word = string_value(text).upper()
    if word not in table:
        raise SubmitError(f"{string_value(text)!r} is not a value HTCondor knows; use {choices}",
                          command=command)
    return table[word]


def transfer_modes(should_text: str | None, when_text: str | None, *,
                   has_transfer_lists: bool = False) -> TransferModes:
    """The transfer modes for the commands as given (None: not given), by the rules of
    HTCondor's ``SubmitHash::SetTransferFiles``: ``should_transfer_files`` defaults to
    IF_NEEDED and ``when_to_transfer_output`` to ON_EXIT; NO given alone turns the
    output time off; ON_EXIT_OR_EVICT given alone turns transfer on (YES).

    Raises:
        SubmitError: an unknown spelling, NO with an output time or with
            transfer_input_files/transfer_output_files, an output time of NONE while
            files may move, or IF_NEEDED with ON_EXIT_OR_EVICT.
    """
    given_should = should_text is not None and should_text.strip() != ""
    given_when = when_text is not None and when_text.strip() != ""
    should = (_lookup(should_text, SHOULD_SPELLINGS, "should_transfer_files", "YES, NO or IF_NEEDED")
              if given_should else "IF_NEEDED")
    when = (_lookup(when_text, WHEN_SPELLINGS, "when_to_transfer_output",
                    "ON_EXIT, ON_EXIT_OR_EVICT or ON_SUCCESS") if given_when else "ON_EXIT")
    if should == "NO" and has_transfer_lists:
        raise SubmitError("transfer_input_files or transfer_output_files is given but "
                          "should_transfer_files = NO turns file transfer off; remove one",
                          command="should_transfer_files")
    if should == "NO" and not given_when:
        when = ""
    if should == "NO" and when:
        raise SubmitError(f"when_to_transfer_output = {when} contradicts should_transfer_files = NO; "
                          "remove one of them", command="when_to_transfer_output")
    if should != "NO" and not when:
        raise SubmitError(f"when_to_transfer_output = {string_value(when_text or '')} contradicts "
                          f"should_transfer_files = {should}; use ON_EXIT", command="when_to_transfer_output")
    if when == "ON_EXIT_OR_EVICT" and should == "IF_NEEDED":
        if given_should:
            raise SubmitError("ON_EXIT_OR_EVICT needs should_transfer_files = YES (IF_NEEDED may not "
                              "transfer at all)", command="when_to_transfer_output")
        should = "YES"
    return TransferModes(should, when if should != "NO" else None)
