"""module_utils.pbs_conf: where pbs.conf is looked for and how its lines are read."""
from ansible_collections.hpc.pbs.plugins.module_utils.pbs import pbs_conf
from ansible_collections.hpc.pbs.plugins.modules import cluster_info
from hpc_pbs_module_fakes import run_module


def test_without_option_or_environment_pbs_conf_is_etc_pbs_conf():
    # As pbs_loadconf(): PBS_CONF_FILE from the environment, else /etc/pbs.conf.
    paths = pbs_conf.resolve_pbs_paths(None, environ={})
    assert paths.conf_file == "/etc/pbs.conf"


def test_a_value_holding_an_equals_sign_is_kept_whole():
    conf = pbs_conf.parse_pbs_conf("PBS_HOME=/var/spool/pbs\nPBS_SCP=/usr/bin/scp -o Opt=1\n")
    assert conf == {"PBS_HOME": "/var/spool/pbs", "PBS_SCP": "/usr/bin/scp -o Opt=1"}


def test_the_pbs_conf_file_option_expands_variables_as_a_path(tmp_path, monkeypatch):
    (tmp_path / "pbs.conf").write_text("PBS_HOME=%s\n" % tmp_path)
    monkeypatch.setenv("HPC_PBS_TEST_CONF_DIR", str(tmp_path))
    code, result = run_module(cluster_info.main, {"query_server": "never",
                                                  "pbs_conf_file": "$HPC_PBS_TEST_CONF_DIR/pbs.conf"})
    assert code == 0, result
    assert result["pbs_conf"]["path"] == str(tmp_path / "pbs.conf")
