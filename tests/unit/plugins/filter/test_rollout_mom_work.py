"""Filters hpc.pbs.rollout_mom_work and hpc.pbs.hook_files_differ: what the rolling rollout
still has to do on a mom, the one rule of its first look and of its batches."""
import pytest

from ansible_collections.hpc.pbs.plugins.filter.hook_files_differ import FilterModule as DifferFilters
from ansible_collections.hpc.pbs.plugins.filter.rollout_mom_work import FilterModule as WorkFilters

rollout_mom_work = WorkFilters().filters()["rollout_mom_work"]
hook_files_differ = DifferFilters().filters()["hook_files_differ"]

PREFIX = "hpc.pbs rollout "
SERVER = {"rjs.HK": "a1", "rjs.PY": "b2", "rjs.CF": "c3"}
FREE = {"state": ["free"], "comment": None, "jobs": []}


def look(changed=False, not_loaded=(), mom_files=None):
    return {"changed": False, "mom_plan": {"changed": changed, "not_loaded": list(not_loaded)},
            "health": {"hook_files": {"mom": dict(SERVER) if mom_files is None else mom_files}}}


def test_a_mom_as_desired_has_nothing_to_do():
    assert rollout_mom_work(look(), SERVER, FREE, PREFIX) == []


@pytest.mark.parametrize("plan", [dict(changed=True), dict(not_loaded=["job_launch_delay"])])
def test_a_config_to_write_or_not_loaded_is_work(plan):
    assert rollout_mom_work(look(**plan), SERVER, FREE, PREFIX) == ["mom config differs or is not loaded"]


def test_hook_files_missing_or_with_another_sha256_are_named_sorted():
    mom = {"rjs.PY": "old", "rjs.HK": "a1", "other.PY": "zz"}
    assert hook_files_differ(SERVER, mom) == ["rjs.CF", "rjs.PY"]
    assert hook_files_differ(SERVER, None) == ["rjs.CF", "rjs.HK", "rjs.PY"]
    assert rollout_mom_work(look(mom_files=mom), SERVER, FREE, PREFIX) == ["hook files differ: rjs.CF, rjs.PY"]


@pytest.mark.parametrize("result, why", [
    ({"failed": True, "msg": "pbs.conf not found"}, "not read: pbs.conf not found"),
    ({"unreachable": True, "msg": "ssh: connection refused"}, "not read: ssh: connection refused"),
    ({"changed": False, "mom_plan": None, "health": {"hook_files": {"mom": {}}}}, "not read: no mom_priv on this host"),
    (None, "not read: no result"),
])
def test_a_mom_not_read_is_work_and_its_files_are_not_judged(result, why):
    assert rollout_mom_work(result, SERVER, FREE, PREFIX) == [why]


def test_a_vnode_the_server_does_not_know_is_work():
    assert rollout_mom_work(look(), SERVER, None, PREFIX) == ["vnode unknown to the server"]


def test_offline_with_a_rollout_comment_is_work_offline_by_someone_else_is_not():
    by_rollout = {"state": ["offline"], "comment": PREFIX + "rjs-1234: applying", "jobs": []}
    by_admin = {"state": ["offline"], "comment": "disk replaced", "jobs": []}
    comment_only = {"state": ["free"], "comment": PREFIX + "rjs-1234: applying", "jobs": []}
    assert rollout_mom_work(look(), SERVER, by_rollout, PREFIX) == ["left offline by a rollout"]
    assert rollout_mom_work(look(), SERVER, by_admin, PREFIX) == []
    assert rollout_mom_work(look(), SERVER, comment_only, PREFIX) == []


def test_every_reason_in_order():
    vnode = {"state": ["offline", "job-busy"], "comment": PREFIX + "x", "jobs": ["1.srv"]}
    assert rollout_mom_work(look(changed=True, mom_files={}), SERVER, vnode, PREFIX) == [
        "mom config differs or is not loaded", "hook files differ: rjs.CF, rjs.HK, rjs.PY", "left offline by a rollout"]
