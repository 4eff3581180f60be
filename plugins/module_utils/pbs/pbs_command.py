# -*- coding: utf-8 -*-
"""The one way the collection runs a PBS command on a managed host.

Every PBS client (``qmgr``, ``qstat``, ``pbsnodes``, ``qrls``), ``pbs_python`` and
``pbs_mom`` finds its server, ``PBS_HOME`` and ``PBS_EXEC`` through ``pbs_loadconf``, which
reads ``$PBS_CONF_FILE`` or else ``/etc/pbs.conf``. A module that took its paths from the
``pbs_conf_file`` it was given must hand the same file to the commands it runs, or a host
whose ``/etc/pbs.conf`` is missing or names another server sends them elsewhere.

:class:`PbsRunner` runs argument lists (never through a shell) through
``AnsibleModule.run_command`` with ``PBS_CONF_FILE`` set to that file and a fixed C locale
(PBS's messages, which the modules read, are then those of the reference transcripts), as
community.general's ``CmdRunner`` fixes its commands' language. Standard library only.
"""

import errno
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

# The variables community.general's CmdRunner sets for force_lang="C".
C_LOCALE = {"LANGUAGE": "C", "LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}


class InputNotRead(Exception):
    """The command exited before it read the input it was fed (EPIPE): none of it ran."""


def module_run_command(module: Any) -> Callable[..., Tuple[int, str, str]]:
    """``module.run_command`` (an AnsibleModule's) for commands fed on stdin that may exit
    before they read their input: ``qmgr -a`` that cannot reach its server prints why and
    exits at once, and writing its commands then fails with EPIPE, which ``run_command``
    would turn into a bare "Error executing command." (rc 32) hiding qmgr's own message.
    Raises :class:`InputNotRead` then; every other failure to run the command is left to
    ``run_command`` as before."""
    def run(args, data=None, **kwargs):
        if data is None:
            return module.run_command(args, **kwargs)
        try:
            return module.run_command(args, data=data, handle_exceptions=False, **kwargs)
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise InputNotRead("%s exited before reading its input" % args[0])
            return module.run_command(args, data=data, **kwargs)

    return run


class PbsRunner:
    """Runs commands of one PBS installation.

    ``run_command``: ``AnsibleModule.run_command`` or a callable of the same signature
    (``args, data=None, binary_data=False, cwd=None, environ_update=None`` ->
    ``(rc, stdout, stderr)``). ``conf_file``: the pbs.conf the module resolved (its
    ``PbsPaths.conf_file``, str); None leaves ``PBS_CONF_FILE`` of the module's
    environment as it is.
    """

    def __init__(self, run_command: Callable[..., Tuple[int, str, str]],
                 conf_file: Optional[str] = None) -> None:
        self._run_command = run_command
        self.conf_file = conf_file

    def environ(self, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        """The variables every command gets (dict of str): the C locale,
        ``PBS_CONF_FILE`` when known, then ``extra`` (dict or None) on top."""
        environ = dict(C_LOCALE)
        if self.conf_file:
            environ["PBS_CONF_FILE"] = self.conf_file
        environ.update(extra or {})
        return environ

    def run_command(self, args: Sequence[str], data: Optional[str] = None,
                    binary_data: bool = False, cwd: Optional[str] = None,
                    environ_update: Optional[Mapping[str, str]] = None) -> Tuple[int, str, str]:
        """Run ``args`` (list of str) and return ``(rc, stdout, stderr)`` without judging rc;
        the signature of ``AnsibleModule.run_command``, so that the runner's method can be
        handed to code that takes such a callable.

        ``data``: text fed on stdin (``binary_data``: without a trailing newline added);
        ``cwd``: working directory; ``environ_update``: more variables (dict) on top of
        :meth:`environ`. Raises what the wrapped ``run_command`` raises (``OSError`` when
        the executable cannot be run, with a callable that does not catch it).
        """
        kwargs = dict(environ_update=self.environ(environ_update))
        if data is not None:
            kwargs.update(data=data, binary_data=binary_data)
        if cwd is not None:
            kwargs["cwd"] = cwd
        return self._run_command(list(args), **kwargs)

    @classmethod
    def for_module(cls, module: Any, paths: Any) -> "PbsRunner":
        """The runner of ``module`` (an AnsibleModule) for ``paths`` (a ``PbsPaths``)."""
        return cls(module_run_command(module), paths.conf_file)
