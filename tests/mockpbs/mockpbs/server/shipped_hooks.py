"""Hooks a fresh OpenPBS 23.06 server has (transcripts a, b and c of reference/openpbs).

``.HK`` texts are the shipped files byte for byte. PBS's own hook bodies are not part of
the reference, so each body here is a stand-in that accepts its event; the configs of
``PBS_cray_atom`` and ``pbs_cgroups`` are the shipped ones (as ``export`` printed them).
"""

PBS_ALPS_HK = """type=pbs
enabled=false
user=pbsadmin
event=exechost_periodic
freq=300
alarm=90
"""

PBS_CRAY_ATOM_HK = """type=pbs
enabled=false
user=pbsadmin
event=execjob_begin,execjob_end
order=100
alarm=300
fail_action=offline_vnodes
"""

PBS_POWER_HK = """type=pbs
enabled=false
user=pbsadmin
event=periodic,execjob_prologue,execjob_epilogue,exechost_periodic,exechost_startup,execjob_begin,execjob_end
order=2000
alarm=180
freq=300
"""

PBS_CGROUPS_HK = """type=site
enabled=false
debug=false
user=pbsadmin
event=exechost_periodic,exechost_startup,execjob_attach,execjob_begin,execjob_end,execjob_epilogue,execjob_launch,execjob_resize,execjob_abort,execjob_postsuspend,execjob_preresume
fail_action=offline_vnodes
order=100
alarm=90
freq=120
"""

PBS_CRAY_ATOM_CF = """{
    "post_timeout": 30,
    "delete_timeout": 30,
    "unix_socket_file": "/var/run/atomd/atomd.sock"
}
"""

PBS_CGROUPS_CF = """{
    "cgroup_prefix"         : "pbs_jobs",
    "exclude_hosts"         : [],
    "exclude_vntypes"       : ["no_cgroups"],
    "run_only_on_hosts"     : [],
    "periodic_resc_update"  : true,
    "vnode_per_numa_node"   : false,
    "online_offlined_nodes" : true,
    "use_hyperthreads"      : false,
    "ncpus_are_cores"       : false,
    "discover_gpus"         : true,
    "manage_rlimit_as"      : true,
    "cgroup" : {
        "cpuacct" : {
            "enabled"            : true,
            "exclude_hosts"      : [],
            "exclude_vntypes"    : []
        },
        "cpuset" : {
            "enabled"            : true,
            "exclude_cpus"       : [],
            "exclude_hosts"      : [],
            "exclude_vntypes"    : [],
            "mem_fences"         : false,
            "mem_hardwall"       : false,
            "memory_spread_page" : false
        },
        "devices" : {
            "enabled"            : false,
            "exclude_hosts"      : [],
            "exclude_vntypes"    : [],
            "allow"              : [
                "b *:* rwm",
                "c *:* rwm"
            ]
        },
        "memory" : {
            "enabled"            : true,
            "exclude_hosts"      : [],
            "exclude_vntypes"    : [],
            "soft_limit"         : false,
            "enforce_default"    : true,
            "exclhost_ignore_default" : false,
            "default"            : "256MB",
            "reserve_percent"    : 0,
            "reserve_amount"     : "1GB"
        },
        "memsw" : {
            "enabled"            : false,
            "exclude_hosts"      : [],
            "exclude_vntypes"    : [],
            "enforce_default"    : true,
            "exclhost_ignore_default" : false,
            "default"            : "0B",
            "reserve_percent"    : 0,
            "reserve_amount"     : "64MB",
            "manage_cgswap"      : false
        },
        "hugetlb" : {
            "enabled"            : false,
            "exclude_hosts"      : [],
            "exclude_vntypes"    : [],
            "enforce_default"    : true,
            "exclhost_ignore_default" : false,
            "default"            : "0B",
            "reserve_percent"    : 0,
            "reserve_amount"     : "0B"
        }
    }
}
"""


def _stand_in_body(name):
    return (
        "# mockpbs stand-in for the body of the hook %s shipped with OpenPBS\n"
        "# (the real body is not part of the reference); it accepts every event.\n"
        "import pbs\n"
        "pbs.event().accept()\n" % name
    )


# name -> {"HK": text, "PY": text, "CF": text or absent}, in the order ``list`` shows them.
SHIPPED = {
    "pbs_cgroups": {"HK": PBS_CGROUPS_HK, "PY": _stand_in_body("pbs_cgroups"), "CF": PBS_CGROUPS_CF},
    "PBS_alps_inventory_check": {"HK": PBS_ALPS_HK, "PY": _stand_in_body("PBS_alps_inventory_check")},
    "PBS_power": {"HK": PBS_POWER_HK, "PY": _stand_in_body("PBS_power")},
    "PBS_cray_atom": {"HK": PBS_CRAY_ATOM_HK, "PY": _stand_in_body("PBS_cray_atom"), "CF": PBS_CRAY_ATOM_CF},
}
