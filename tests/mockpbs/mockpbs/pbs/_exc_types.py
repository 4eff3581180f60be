"""The exceptions of the ``pbs`` hook module (pbs_python's ``pbs/v1/_exc_types.py``) and
the texts of the ``AssertionError`` a hook gets for a set its event does not allow."""


class EventIncompatibleError(Exception):
    """An event parameter the current event does not have."""


class UnsetAttributeNameError(Exception):
    pass


class BadAttributeValueTypeError(Exception):
    pass


class BadAttributeValueError(Exception):
    """A value PBS refuses, or a read-only attribute or parameter being set."""


class UnsetResourceNameError(Exception):
    pass


class BadResourceValueTypeError(Exception):
    pass


class BadResourceValueError(Exception):
    """A resource value PBS refuses (e.g. a select spec with a chunk count below 1)."""


class NothingSettableError(AssertionError):
    """Raised when anything is set under execjob_resize (PP-928 interface 9): OpenPBS
    raises a plain ``AssertionError("nothing is settable inside an execjob_resize hook!")``,
    and so does this (a subclass only so the mock can name it)."""


LAUNCH_SET_REFUSED = ("Can only set progname, argv, env event parameters as well as job, "
                      "resource, vnode under execjob_launch hook.")
RESIZE_SET_REFUSED = "nothing is settable inside an execjob_resize hook!"
