"""The cray_atom role's inputs for pip on moms with no way to the internet
(cray_atom_pip_wheels_src, cray_atom_pip_find_links, cray_atom_pip_index_url) and the OS
family package lists: a bad value stops the play before anything runs, naming the variable
and what is accepted (real ansible-playbook runs against a fake PBS that records any call)."""
import re

import pytest

from test_cray_atom_role import assert_nothing_ran, run_playbook


@pytest.mark.parametrize("extra_vars,message", [
    ({"cray_atom_pip_index_url": "ftp://mirror/simple"},
     'cray_atom_pip_index_url must be an http://, https:// or file:// URL, not "ftp://mirror/simple"'),
    ({"cray_atom_pip_find_links": "wheels"},
     'cray_atom_pip_find_links must be an absolute path on the moms or an http://, https:// or file:// URL, '
     'not "wheels"'),
    ({"cray_atom_pip_wheels_src": "/nonexistent/wheels"},
     'cray_atom_pip_wheels_src must be the absolute path of a directory on the controller, not "/nonexistent/wheels"'),
    ({"cray_atom_pip_find_links": "/shared/wheels", "cray_atom_pip_index_url": "https://pypi.example/simple"},
     "set at most one of cray_atom_pip_wheels_src, cray_atom_pip_find_links and cray_atom_pip_index_url"),
    ({"cray_atom_install_method": "package", "cray_atom_os_packages": []},
     "cray_atom_os_packages may not be empty with cray_atom_install_method package"),
    ({"cray_atom_os_packages_by_family": "python3-requests"}, "cray_atom_os_packages_by_family"),
])
def test_bad_offline_input_stops_the_play_before_any_change(fake_pbs, extra_vars, message):
    result = run_playbook(fake_pbs, extra_vars)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr, (result.stdout + result.stderr)[-3000:]
    assert_nothing_ran(fake_pbs)


def test_good_offline_input_passes_validation(fake_pbs, tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    result = run_playbook(fake_pbs, {"cray_atom_pip_wheels_src": str(wheels)}, groups=("pbs_mom",))
    # Past the checks (the play stops later, at this fixture's PBS, which has no pbs_python).
    assert re.search(r"TASK \[hpc.pbs.cray_atom : Check the hook attributes and the install method\] \**\n"
                     r"ok: \[localhost\]", result.stdout), result.stdout[-3000:]
