"""mockpbs: a mock OpenPBS cluster for testing the hpc.pbs collection.

Layout (state kept apart from protocol, as moto does), in floors: a module imports only
its own floor and those below it (tests/unit/mockpbs/test_layering.py checks this).

Ground (shared; imports nothing of cli, server, mom, atom or testing):

- ``pbs``            the hook-module emulator (``import pbs`` inside hooks)
- ``selectspec``     select-spec and size parsing shared by emulator, scheduler and mom
- ``hookrun``        runs one hook event in a child process, the way pbs_python does
- ``hookdefs``       hook events, attributes, defaults and the ``.HK`` file format
- ``attributes``     attribute tables (kinds, listing order) of server, sched, queue, node
- ``arrays``         job-array index ranges and subjob ids (``qsub -J``)
- ``pbslog``         daemon log and accounting record formats
- ``pbsconf``        ``/etc/pbs.conf`` discovery (``PBS_CONF_FILE``)
- ``wire``           the JSON-lines TCP protocol between clients, server and moms, and
                     the address a host name resolves to
- ``testaddr``       loopback addresses reserved for tests

Peers (each imports ground and itself, never another peer):

- ``server``         the server: ``models`` (state), one module per concern over one
                     ``context.ServerContext`` (jobs, nodes, holds, arrays, hooks, qmgr,
                     the job life cycle, the run loop), ``errors``, and ``responses``
                     (the operation -> handler table), scheduler
- ``mom``            the mom: config parsing, daemon, the mother superior's job start
                     (``primary``), the sister side (``sister``), the task manager
                     (``tm``), the job's environment (``jobenv``)
- ``cli``            qmgr (with its language, ``qmgr_lang``), qsub, qstat, pbsnodes, ...
- ``atom``           the ATOM site service

Top:

- ``testing``        in-process helpers for unit tests (``server``: a server driven
                     through the CLI ``main()``s; ``mom``: clusters of in-process moms)
"""

PBS_VERSION = "23.06.06"
