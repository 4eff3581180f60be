"""hpc.pbs.import_vars (plugins/module_utils/cluster/import_vars.py and its filters): what
playbooks/import.yml writes from what cluster_info and the server's hook files report."""
import hashlib
import json
import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError
from ansible_collections.hpc.pbs.plugins.filter.import_dir_problem import FilterModule as DirFilters
from ansible_collections.hpc.pbs.plugins.filter.import_vars import FilterModule as VarsFilters
from ansible_collections.hpc.pbs.plugins.module_utils.cluster import import_vars as iv

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
with open(os.path.join(REPO, "files", "hooks", "reliable_job_startup.py")) as _handle:
    BODY = _handle.read()
with open(os.path.join(REPO, "files", "hooks", "reliable_job_startup.json")) as _handle:
    DEFAULT = json.load(_handle)
BUNDLED = {"body": BODY, "config": DEFAULT}
SHA = hashlib.sha256(BODY.encode("utf-8")).hexdigest()


def _bundled(name):
    with open(os.path.join(REPO, "files", "hooks", name + ".py")) as handle:
        body = handle.read()
    with open(os.path.join(REPO, "files", "hooks", name + ".json")) as handle:
        return {"body": body, "config": json.load(handle)}


CRAY = _bundled("cray_atom")
CGROUP = _bundled("cgroup_resize")
BUNDLED_ALL = dict(BUNDLED, cray_atom=CRAY, cgroup_resize=CGROUP)
CRAY_SHA = hashlib.sha256(CRAY["body"].encode("utf-8")).hexdigest()
CGROUP_SHA = hashlib.sha256(CGROUP["body"].encode("utf-8")).hexdigest()
CGROUP_EVENTS = ("execjob_begin", "execjob_launch", "execjob_resize", "execjob_end")


def hook(sha=SHA, events=("queuejob", "execjob_launch"), **attrs):
    entry = dict(type="site", events=list(events), enabled=True, order=5, alarm=40,
                 fail_action=["none"], sha256=sha)
    entry.update(attrs)
    return entry


def server(hooks=None, **more):
    data = dict(hooks={"reliable_job_startup": hook()} if hooks is None else hooks,
                tolerate_node_failures="job_start", job_run_wait="execjob_hook",
                default_qsub_arguments="-r n -W tolerate_node_failures=job_start")
    data.update(more)
    return data


def mom(delay=None, alarm=None):
    def entry(value):
        if value is None:
            return dict(value=30, source="default", default=30, hooks=[])
        return dict(value=value, source="mom_config", default=30, hooks=[])
    return dict(job_launch_delay=entry(delay), sister_join_job_alarm=entry(alarm), hooks={})


def config_text(config):
    merged = dict(DEFAULT)
    merged.update(config)
    return iv.role_config_text(merged)


def files_of(config=None, body=BODY):
    return {"body": body, "config": config_text(config or {})}


def parsed(result, path):
    return yaml.safe_load(result["files"][path])


def test_the_server_part_goes_to_group_all_with_the_role_variable_names():
    result = iv.import_vars(server(), {"mom1": mom(50, 45)}, BUNDLED,
                            files_of({"increment": 2, "queues": ["workq"]}), "srv")
    assert result["hook_name"] == "reliable_job_startup"
    assert parsed(result, "group_vars/all.yml") == {
        "reliable_job_startup_hook_name": "reliable_job_startup",
        "reliable_job_startup_hook_enabled": True, "reliable_job_startup_hook_order": 5,
        "reliable_job_startup_hook_alarm": 40,
        "reliable_job_startup_config": {"increment": 2, "queues": ["workq"]},
        "sched_tuning_job_run_wait": "execjob_hook", "site_tolerate_node_failures": "job_start"}
    assert result["notes"] == []
    assert result["files"]["group_vars/all.yml"].startswith("---\n" + iv.MARKER)


def test_every_name_written_is_an_option_of_the_roles_or_of_site_yml():
    with open(os.path.join(REPO, "roles", "reliable_job_startup", "meta", "argument_specs.yml")) as handle:
        names = set(yaml.safe_load(handle)["argument_specs"]["main"]["options"])
    with open(os.path.join(REPO, "roles", "sched_tuning", "defaults", "main.yml")) as handle:
        names |= set(yaml.safe_load(handle))
    for role in ("cray_atom", "cgroup_resize"):
        with open(os.path.join(REPO, "roles", role, "meta", "argument_specs.yml")) as handle:
            names |= set(yaml.safe_load(handle)["argument_specs"]["main"]["options"])
    with open(os.path.join(REPO, "playbooks", "site.yml")) as handle:
        text = handle.read()
        names |= set(n for n in ("site_tolerate_node_failures", "site_cray_atom", "site_cgroup_resize") if n in text)
    hooks = {"reliable_job_startup": hook(), "cray_atom": cray_hook(), "cgroup_resize": cgroup_hook()}
    files = {"hooks": {"reliable_job_startup": files_of(body=BODY + "#\n"),
                       "cray_atom": part_files(CRAY, {"post_timeout": 5}, 4, body=CRAY["body"] + "#\n"),
                       "cgroup_resize": part_files(CGROUP, {"kill_timeout": 3}, body=CGROUP["body"] + "#\n")}}
    result = iv.import_vars(server(hooks=hooks), {"mom1": mom(50, 45), "mom2": mom(None, 60)}, BUNDLED_ALL,
                            files, "srv", "/srv/imported")
    assert {"reliable_job_startup_hook_body_src", "cray_atom_config", "cgroup_resize_config",
            "cray_atom_hook_body_src", "cgroup_resize_hook_body_src"} <= set(
        parsed(result, "group_vars/all.yml"))
    written = set()
    for path in result["files"]:
        if path.endswith(".yml"):
            written |= set(parsed(result, path))
    assert written and written <= names, sorted(written - names)


def test_moms_with_equal_values_share_the_group_and_only_a_differing_mom_gets_host_vars():
    moms = {"mom1": mom(50, 45), "mom2": mom(50, 60), "mom3": mom(50, 45)}
    result = iv.import_vars(server(), moms, BUNDLED, files_of())
    assert parsed(result, "group_vars/pbs_mom.yml") == {
        "reliable_job_startup_job_launch_delay": 50, "reliable_job_startup_sister_join_job_alarm": 45}
    assert sorted(p for p in result["files"] if p.startswith("host_vars/")) == ["host_vars/mom2.yml"]
    assert parsed(result, "host_vars/mom2.yml") == {"reliable_job_startup_sister_join_job_alarm": 60}


def test_a_missing_line_is_null_and_a_tie_goes_to_the_first_mom_by_name():
    # mom1's 60 wins although 45 sorts first.
    moms = {"mom2": mom(None, 45), "mom1": mom(None, 60)}
    result = iv.import_vars(server(), moms, BUNDLED, files_of())
    assert parsed(result, "group_vars/pbs_mom.yml") == {
        "reliable_job_startup_job_launch_delay": None, "reliable_job_startup_sister_join_job_alarm": 60}
    assert parsed(result, "host_vars/mom2.yml") == {"reliable_job_startup_sister_join_job_alarm": 45}


def test_a_default_computed_from_the_hooks_is_no_line():
    # cluster_info's value 90 comes from the hooks' alarms (source default): not a line to write.
    moms = {"mom1": mom(None, None)}
    moms["mom1"]["sister_join_job_alarm"]["value"] = 90
    result = iv.import_vars(server(), moms, BUNDLED, files_of())
    assert parsed(result, "group_vars/pbs_mom.yml")["reliable_job_startup_sister_join_job_alarm"] is None


def test_other_hooks_are_listed_and_not_managed():
    hooks = {"reliable_job_startup": hook(), "site_accounting": hook(sha="0" * 64, events=["queuejob"]),
             "PBS_power": hook(sha=None, type="pbs", enabled=False, events=["periodic"])}
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED, files_of())
    assert [h["name"] for h in result["unmanaged_hooks"]] == ["PBS_power", "site_accounting"]
    text = result["files"]["group_vars/all.yml"]
    assert "#   site_accounting (site, enabled, events queuejob)" in text
    assert "#   PBS_power (pbs, disabled, events periodic)" in text


def test_the_bundled_body_under_another_name_is_the_managed_hook():
    hooks = {"a_other": hook(sha="1" * 64), "rjs_site": hook(), "z_rjs": hook()}
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED, files_of())
    assert result["hook_name"] == "rjs_site"
    assert parsed(result, "group_vars/all.yml")["reliable_job_startup_hook_name"] == "rjs_site"
    assert [h["name"] for h in result["unmanaged_hooks"]] == ["a_other", "z_rjs"]


def test_a_pbshook_is_never_the_managed_hook():
    assert iv.managed_hook_name({"reliable_job_startup": hook(type="pbs")}, BODY) is None


def test_no_hook_is_a_note_and_no_hook_variable():
    result = iv.import_vars(server(hooks={}), {}, BUNDLED, None)
    assert result["hook_name"] is None
    assert not [k for k in parsed(result, "group_vars/all.yml") if k.startswith("reliable_job_startup_hook")]
    assert any("site.yml would create it" in n for n in result["notes"])


def test_an_own_body_is_written_out_and_the_role_variable_points_to_it():
    own = BODY + "\n# local change\n"
    result = iv.import_vars(server(), {}, BUNDLED, files_of(body=own), "srv", "/srv/imported")
    assert result["files"]["hook_bodies/reliable_job_startup.py"] == own
    assert parsed(result, "group_vars/all.yml")["reliable_job_startup_hook_body_src"] == \
        "/srv/imported/hook_bodies/reliable_job_startup.py"
    assert result["notes"] == []
    # Without import_dir, the path is relative to it.
    result = iv.import_vars(server(), {}, BUNDLED, {"hooks": {"reliable_job_startup": files_of(body=own)}})
    assert parsed(result, "group_vars/all.yml")["reliable_job_startup_hook_body_src"] == \
        "hook_bodies/reliable_job_startup.py"


@pytest.mark.parametrize("import_dir", ["relative/dir", 5, ""])
def test_an_import_dir_that_is_not_an_absolute_path_is_refused(import_dir):
    with pytest.raises(iv.ImportRefused, match="import_dir must be an absolute path"):
        iv.import_vars(server(), {}, BUNDLED, files_of(), "srv", import_dir)


def test_the_bundled_body_is_not_written_out():
    result = iv.import_vars(server(), {}, BUNDLED, files_of(), "srv", "/srv/imported")
    assert not [p for p in result["files"] if p.startswith(iv.BODY_DIR)]
    assert "reliable_job_startup_hook_body_src" not in parsed(result, "group_vars/all.yml")


def cray_hook(sha=CRAY_SHA, **attrs):
    return hook(sha=sha, events=("execjob_begin", "execjob_end"),
                **dict(dict(order=90, alarm=200, fail_action=["offline_vnodes"]), **attrs))


def cgroup_hook(sha=CGROUP_SHA, **attrs):
    return hook(sha=sha, events=CGROUP_EVENTS, **dict(dict(order=70, alarm=25), **attrs))


def part_files(bundled, config, indent=2, body=None):
    merged = dict(bundled["config"])
    merged.update(config)
    return {"body": bundled["body"] if body is None else body, "config": iv.role_config_text(merged, indent)}


def test_the_bundled_cgroup_resize_hook_is_imported_with_its_own_config_keys():
    hooks = {"reliable_job_startup": hook(), "cgroup_resize": cgroup_hook(enabled=False)}
    first = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL)
    assert first["read_hooks"] == ["reliable_job_startup", "cgroup_resize"]
    files = {"hooks": {"reliable_job_startup": files_of(),
                       "cgroup_resize": part_files(CGROUP, {"kill_timeout": 3, "exclude_cpus": [0]})}}
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL, files, "srv", "/srv/imported")
    common = parsed(result, "group_vars/all.yml")
    assert dict((k, v) for k, v in common.items() if "cgroup" in k) == {
        "site_cgroup_resize": True, "cgroup_resize_hook_source": "bundled",
        "cgroup_resize_hook_name": "cgroup_resize", "cgroup_resize_hook_enabled": False,
        "cgroup_resize_hook_order": 70, "cgroup_resize_hook_alarm": 25,
        "cgroup_resize_config": {"kill_timeout": 3, "exclude_cpus": [0]}}
    assert result["notes"] == [] and result["unmanaged_hooks"] == []
    assert not [k for k in common if k.startswith("cray_atom") or k == "site_cray_atom"]


def test_the_bundled_cgroup_resize_body_under_another_name_and_an_own_body_is_kept():
    hooks = {"reliable_job_startup": hook(), "a_cg": cgroup_hook(sha="2" * 64), "my_cg": cgroup_hook()}
    own = CGROUP["body"] + "# site\n"
    files = {"hooks": {"reliable_job_startup": files_of(), "my_cg": part_files(CGROUP, {}, body=own)}}
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL, files, "srv", "/srv/imported")
    assert result["read_hooks"] == ["reliable_job_startup", "my_cg"]
    common = parsed(result, "group_vars/all.yml")
    assert common["cgroup_resize_hook_name"] == "my_cg"
    assert result["files"]["hook_bodies/my_cg.py"] == own
    # The role installs that file again: site.yml keeps the body, so no note says otherwise.
    assert common["cgroup_resize_hook_body_src"] == "/srv/imported/hook_bodies/my_cg.py"
    assert not [n for n in result["notes"] if "body" in n], result["notes"]
    assert [h["name"] for h in result["unmanaged_hooks"]] == ["a_cg"]
    # Without import_dir, the path is relative to it.
    relative = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL, files, "srv")
    assert parsed(relative, "group_vars/all.yml")["cgroup_resize_hook_body_src"] == "hook_bodies/my_cg.py"


def test_an_own_cray_atom_body_is_kept_and_the_bundled_one_is_not_written():
    hooks = {"reliable_job_startup": hook(), "cray_atom": cray_hook()}
    own = CRAY["body"] + "# site\n"
    files = {"hooks": {"reliable_job_startup": files_of(), "cray_atom": part_files(CRAY, {}, 4, body=own)}}
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL, files, "srv", "/srv/imported")
    common = parsed(result, "group_vars/all.yml")
    assert common["cray_atom_hook_source"] == "bundled"
    assert common["cray_atom_hook_body_src"] == "/srv/imported/hook_bodies/cray_atom.py"
    assert result["files"]["hook_bodies/cray_atom.py"] == own
    assert result["notes"] == [], result["notes"]
    files["hooks"]["cray_atom"] = part_files(CRAY, {}, 4)
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL, files, "srv", "/srv/imported")
    assert "cray_atom_hook_body_src" not in parsed(result, "group_vars/all.yml")
    assert not [p for p in result["files"] if p.startswith("hook_bodies/")]


@pytest.mark.parametrize("events, imported", [(["execjob_begin", "execjob_resize"], True), (["execjob_begin"], False)])
def test_pbs_cgroups_with_execjob_resize_is_the_cgroup_resize_hook(events, imported):
    hooks = {"reliable_job_startup": hook(), "pbs_cgroups": hook(sha="3" * 64, events=events)}
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL, {"hooks": {"reliable_job_startup": files_of()}})
    common = parsed(result, "group_vars/all.yml")
    if imported:
        assert dict((k, v) for k, v in common.items() if "cgroup" in k) == {
            "site_cgroup_resize": True, "cgroup_resize_hook_source": "pbs_cgroups",
            "cgroup_resize_pbs_cgroups_hook_name": "pbs_cgroups"}
        assert result["unmanaged_hooks"] == [] and result["read_hooks"] == ["reliable_job_startup"]
    else:
        assert not [k for k in common if "cgroup" in k]
        assert [h["name"] for h in result["unmanaged_hooks"]] == ["pbs_cgroups"]


def test_an_enabled_pbs_cgroups_beside_the_bundled_hook_is_a_note():
    hooks = {"cgroup_resize": cgroup_hook(), "pbs_cgroups": hook(sha="3" * 64, events=["execjob_begin"])}
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL)
    assert any("pbs_cgroups is enabled beside the bundled hook cgroup_resize" in n for n in result["notes"])


def test_the_bundled_cray_atom_hook_its_config_layout_and_fail_action():
    hooks = {"reliable_job_startup": hook(), "cray_atom": cray_hook(),
             "PBS_cray_atom": hook(sha=None, type="pbs", enabled=False, events=["execjob_begin"])}
    files = {"hooks": {"reliable_job_startup": files_of(), "cray_atom": part_files(CRAY, {"post_timeout": 5}, 4)}}
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL, files)
    common = parsed(result, "group_vars/all.yml")
    assert dict((k, v) for k, v in common.items() if "cray" in k) == {
        "site_cray_atom": True, "cray_atom_hook_source": "bundled", "cray_atom_hook_name": "cray_atom",
        "cray_atom_hook_enabled": True, "cray_atom_hook_order": 90, "cray_atom_hook_alarm": 200,
        "cray_atom_config": {"post_timeout": 5}}
    assert result["notes"] == []
    assert [h["name"] for h in result["unmanaged_hooks"]] == ["PBS_cray_atom"]
    # The reliable_job_startup layout (indent 2) is not the cray_atom role's: a note. A
    # fail_action other than the role's default is kept in cray_atom_hook_fail_action.
    hooks["cray_atom"] = cray_hook(fail_action=["scheduler_restart_cycle", "offline_vnodes"])
    files["hooks"]["cray_atom"] = part_files(CRAY, {"post_timeout": 5}, 2)
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL, files)
    notes = result["notes"]
    assert any("hook cray_atom holds these values in another layout" in n and "indent 4" in n for n in notes), notes
    assert not any("fail_action" in n for n in notes), notes
    assert parsed(result, "group_vars/all.yml")["cray_atom_hook_fail_action"] == ["offline_vnodes", "scheduler_restart_cycle"]
    hooks["cray_atom"] = cray_hook(fail_action=[])
    assert parsed(iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL, files), "group_vars/all.yml")[
        "cray_atom_hook_fail_action"] == ["none"]


def test_an_enabled_builtin_pbs_cray_atom_is_the_cray_atom_hook():
    hooks = {"reliable_job_startup": hook(), "cray_atom": cray_hook(),
             "PBS_cray_atom": hook(sha=None, type="pbs", enabled=True, events=["execjob_begin"])}
    first = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL)
    assert first["read_hooks"] == ["reliable_job_startup", "PBS_cray_atom"]
    files = {"hooks": {"reliable_job_startup": files_of(),
                       "PBS_cray_atom": part_files(CRAY, {"unix_socket_file": "/run/a.sock"}, 4)}}
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED_ALL, files)
    common = parsed(result, "group_vars/all.yml")
    assert dict((k, v) for k, v in common.items() if "cray" in k) == {
        "site_cray_atom": True, "cray_atom_hook_source": "builtin", "cray_atom_hook_enabled": True,
        "cray_atom_config": {"unix_socket_file": "/run/a.sock"}}
    assert any("site.yml would remove the site hook cray_atom" in n for n in result["notes"]), result["notes"]
    assert result["unmanaged_hooks"] == []


def test_without_their_bundled_files_the_optional_hooks_are_not_imported():
    hooks = {"reliable_job_startup": hook(), "cray_atom": cray_hook(), "cgroup_resize": cgroup_hook()}
    result = iv.import_vars(server(hooks=hooks), {}, BUNDLED, files_of())
    assert not [k for k in parsed(result, "group_vars/all.yml") if "cray" in k or "cgroup" in k]
    assert [h["name"] for h in result["unmanaged_hooks"]] == ["cgroup_resize", "cray_atom"]


@pytest.mark.parametrize("config, note", [
    ('{"increment": 2}', "lacks " + ", ".join(sorted(k for k in DEFAULT if k != "increment"))),
    ("increment = 2", "is not JSON"),
    ("[1, 2]", "not an object"),
    (None, "has no config"),
    (json.dumps(dict(DEFAULT, increment=2)), "in another layout"),
])
def test_a_config_site_yml_would_rewrite_is_a_note(config, note):
    result = iv.import_vars(server(), {}, BUNDLED, {"body": BODY, "config": config})
    assert any(note in n for n in result["notes"]), result["notes"]


def test_a_config_in_the_role_layout_is_no_note():
    result = iv.import_vars(server(), {}, BUNDLED, files_of({"tolerate": "all"}))
    assert result["notes"] == []
    assert parsed(result, "group_vars/all.yml")["reliable_job_startup_config"] == {"tolerate": "all"}


def test_other_events_and_no_job_run_wait_are_notes_no_tolerate_is_no_variable():
    data = server(hooks={"reliable_job_startup": hook(events=["queuejob"])},
                  tolerate_node_failures=None, job_run_wait=None)
    result = iv.import_vars(data, {}, BUNDLED, files_of())
    common = parsed(result, "group_vars/all.yml")
    assert "site_tolerate_node_failures" not in common and "sched_tuning_job_run_wait" not in common
    assert any("site.yml would set its events to queuejob,execjob_launch" in n for n in result["notes"])
    assert any("lists no job_run_wait" in n for n in result["notes"])


def test_values_that_yaml_could_misread_are_quoted():
    result = iv.import_vars(server(tolerate_node_failures="none"), {}, BUNDLED, files_of({"keep_select_resource": "yes"}))
    common = parsed(result, "group_vars/all.yml")
    assert common["site_tolerate_node_failures"] == "none"
    assert common["reliable_job_startup_config"] == {"keep_select_resource": "yes"}


@pytest.mark.parametrize("moms, server_data, words", [
    ({"../etc": mom()}, server(), "cannot name a host_vars file"),
    ({}, None, "reported no server data"),
    ([], server(), "moms must map"),
])
def test_refusals(moms, server_data, words):
    with pytest.raises(iv.ImportRefused, match=words):
        iv.import_vars(server_data, moms, BUNDLED, None)
    with pytest.raises(AnsibleFilterError, match="hpc.pbs.import_vars: .*" + words):
        VarsFilters().filters()["import_vars"](server_data, moms, BUNDLED)


def test_a_mom_without_mom_priv_is_a_note():
    result = iv.import_vars(server(), {"mom1": None, "mom2": mom(10, 10)}, BUNDLED, files_of())
    assert any("mom1 has no mom_priv" in n for n in result["notes"])
    assert parsed(result, "group_vars/pbs_mom.yml")["reliable_job_startup_job_launch_delay"] == 10


def test_import_dir_accepted(tmp_path):
    problem = DirFilters().filters()["import_dir_problem"]
    assert problem(str(tmp_path)) == ""
    assert problem(str(tmp_path / "new")) == ""  # made by the playbook
    (tmp_path / "group_vars").mkdir()
    assert problem(str(tmp_path)) == ""


@pytest.mark.parametrize("value, words", [
    (None, "import_dir is not set"),
    ("  ", "import_dir is not set"),
    (5, "is not a path"),
    ("a\0b", "NUL"),
    ("/nonexistent/x/y", "does not exist"),
    ("/proc/hpc-pbs-import", "cannot be written"),
    ("/proc", "cannot be written"),
])
def test_import_dir_refused(value, words):
    problem = iv.import_dir_problem(value)
    assert words in problem and "accepted:" in problem


def test_import_dir_that_is_a_file_or_holds_a_file_for_a_directory_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    assert "is not a directory" in iv.import_dir_problem(str(tmp_path / "file"))
    (tmp_path / "host_vars").write_text("x")
    assert "host_vars exists and is not a directory" in iv.import_dir_problem(str(tmp_path))


def test_import_dir_with_a_read_only_subdirectory_is_refused(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes through the permission bits")
    sub = tmp_path / "group_vars"
    sub.mkdir()
    sub.chmod(0o500)
    try:
        assert "cannot be written" in iv.import_dir_problem(str(tmp_path))
    finally:
        sub.chmod(0o700)
