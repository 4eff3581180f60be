"""Errors the mock server answers with: the PBS error numbers it uses, their texts and
:class:`PbsError`, the exception every handler raises to refuse a request."""

# PBS error numbers and texts used by the server (src/include/pbs_error.h).
PBSE_UNKJOBID = 15001
PBSE_NOATTR = 15002
PBSE_PERM = 15007
PBSE_IVALREQ = 15004
PBSE_SYSTEM = 15010
PBSE_BADATVAL = 15014
PBSE_UNKQUE = 15018
PBSE_QUEEXIST = 15025
PBSE_BADSTATE = 15033
PBSE_UNKNODE = 15062
PBSE_NODEEXIST = 15063
PBSE_HOOKERROR = 15165
PBSE_HISTJOBID = 15139
PBSE_MOMREJECT = 15059
PBSE_FORCE_QSUB_UPDATE = 15160

ERROR_TEXT = {
    PBSE_UNKJOBID: "Unknown Job Id",
    PBSE_IVALREQ: "Invalid request",
    PBSE_NOATTR: "Undefined attribute ",   # sic: real qmgr prints the trailing space
    PBSE_PERM: "Unauthorized Request",
    PBSE_BADATVAL: "Illegal attribute or resource value",
    PBSE_UNKQUE: "Unknown queue",
    PBSE_QUEEXIST: "Queue already exists",
    PBSE_BADSTATE: "Request invalid for state of job",
    PBSE_UNKNODE: "Unknown node",
    PBSE_NODEEXIST: "Node name already exists",
    PBSE_MOMREJECT: "Execution server rejected request",
    PBSE_FORCE_QSUB_UPDATE: "a qsub action needs to be redone",
}


class PbsError(Exception):
    """A request the server refuses: ``code`` (PBS errno), ``text`` (PBS message);
    ``hook_error`` marks hook-object errors (qmgr prints them differently)."""

    def __init__(self, code, text=None, hook_error=False):
        super().__init__(text or ERROR_TEXT.get(code, "Error %d" % code))
        self.code = code
        self.text = text or ERROR_TEXT.get(code, "Error %d" % code)
        self.hook_error = hook_error


def hook_error(text):
    """A :class:`PbsError` about a hook object (PBSE_HOOKERROR, printed as qmgr prints
    hook errors) with message ``text``."""
    return PbsError(PBSE_HOOKERROR, text, hook_error=True)
