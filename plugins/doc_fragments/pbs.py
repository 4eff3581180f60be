# -*- coding: utf-8 -*-
"""Options every hpc.pbs module shares: where PBS lives on the managed host."""


class ModuleDocFragment(object):

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
    type: path
    required: false
'''
