"""HTCondor's submit description language: read a description, expand its queue
statements, and build the job ads (a cluster ad plus per-proc differences).

>>> from schedd.submit import parse_description, SubmitOptions, expand, to_classads
"""

from schedd.submit.description import Description, parse_description
from schedd.submit.errors import SubmitError, SubmitWarning
from schedd.submit.jobs import SubmitOptions, expand, host_predefined, to_classads, warn_misspellings

__all__ = ["Description", "SubmitError", "SubmitOptions", "SubmitWarning", "expand",
           "host_predefined", "parse_description", "to_classads", "warn_misspellings"]
