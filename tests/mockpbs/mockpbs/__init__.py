"""mockpbs: a mock OpenPBS cluster for testing the hpc.pbs collection.

Layout (state kept apart from protocol, as moto does):

- ``pbs``            the hook-module emulator (``import pbs`` inside hooks)
- ``selectspec``     select-spec and size parsing shared by emulator, scheduler and mom
- ``hookrun``        runs one hook event in a child process, the way pbs_python does
- ``hookdefs``       hook events, attributes, defaults and the ``.HK`` file format
- ``pbslog``         daemon log and accounting record formats
- ``pbsconf``        ``/etc/pbs.conf`` discovery (``PBS_CONF_FILE``)
- ``wire``           the JSON-lines TCP protocol between clients, server and moms
- ``server``         the server: ``models`` (state), one module per concern over one
                     ``context.ServerContext`` (jobs, nodes, holds, arrays, hooks, qmgr,
                     the job life cycle, the run loop), ``errors``, and ``responses``
                     (the operation -> handler table), qmgr language, scheduler
- ``mom``            the mom: config parsing, daemon, the mother superior's job start
                     (``primary``), the sister side (``sister``), the task manager
                     (``tm``), the job's environment (``jobenv``)
- ``cli``            qmgr, qsub, qstat, pbsnodes, ... clients
"""

PBS_VERSION = "23.06.06"
