# -*- coding: utf-8 -*-
"""Options every hpc.pbs module shares: where PBS lives on the managed host."""


class ModuleDocFragment:

    DOCUMENTATION = r'''
options:
  pbs_conf_file:
    description:
      - Path of C(pbs.conf) on the managed host.
      - When omitted, the environment variable E(PBS_CONF_FILE) of the module process is
        used, else C(/etc/pbs.conf), as PBS itself does.
      - C(PBS_HOME) and C(PBS_EXEC) are read from this file (defaults C(/var/spool/pbs)
        and C(/opt/pbs)); environment variables of the same name override the file, as in
        PBS's C(pbs_loadconf). C(qmgr) is C(PBS_EXEC/bin/qmgr).
      - A missing file is an error only when this option is given explicitly; otherwise
        the defaults are used.
      - Every PBS command the module runs (C(qmgr), C(qstat), C(pbsnodes), C(qrls),
        C(pbs_python), C(pbs_mom)) gets this file as E(PBS_CONF_FILE), in the C locale, so
        that it reaches the server this file names whatever C(/etc/pbs.conf) says.
      - C(module_defaults) can set it for every module of the collection at once through
        the action group C(group/hpc.pbs.pbs); the roles and playbooks take it from the
        variable C(hpc_pbs_conf_file).
    type: path
    required: false
'''
