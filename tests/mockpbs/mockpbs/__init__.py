"""mockpbs: a mock OpenPBS cluster for testing the hpc.pbs collection.

Layout (state kept apart from protocol, as moto does):

- ``pbs``            the hook-module emulator (``import pbs`` inside hooks)
- ``selectspec``     select-spec and size parsing shared by emulator, scheduler and mom
- ``hookrun``        runs one hook event in a child process, the way pbs_python does
- ``hookdefs``       hook events, attributes, defaults and the ``.HK`` file format
- ``pbslog``         daemon log and accounting record formats
- ``pbsconf``        ``/etc/pbs.conf`` discovery (``PBS_CONF_FILE``)
- ``wire``           the JSON-lines TCP protocol between clients, server and moms
- ``server``         server models (state), responses (protocol), qmgr language, scheduler
- ``mom``            mom config parsing, daemon, tolerant job start
- ``cli``            qmgr, qsub, qstat, pbsnodes, ... clients
"""

PBS_VERSION = "23.06.06"
