"""Mock pbs_mom: tolerant job start over three in-process moms (PP-928 interfaces 1, 3, 4, 5, 8).

Mom ``moma`` is the primary; ``momb`` and ``momc`` are sisters. A fake server
(``mockpbs.wire.serve``) records what the moms report. A "frozen" sister is a socket that
listens on the sister's IM port and never answers, as a SIGSTOPped mom does.
"""
import itertools
import os
import pwd
import socket
import threading
import time

import pytest

from mockpbs import wire
from mockpbs.mom.daemon import Mom

_ADDRESSES = itertools.count(230)

LAUNCH_HOOK = '''import pbs
e = pbs.event()
j = e.job
for vn in e.vnode_list:
    pbs.logjobmsg(j.id, "launch: found vnode_list[%s]" % vn)
for vn in e.vnode_list_fail:
    pbs.logjobmsg(j.id, "launch: found vnode_list_fail[%s]" % vn)
if "PBS_NODEFILE" in e.env and j.in_ms_mom():
    if j.release_nodes(keep_select=j.Resource_List["site"]) is None:
        j.Hold_Types = pbs.hold_types("s")
        j.rerun()
        e.reject("unsuccessful at LAUNCH")
e.accept()
'''
FAIL_BEGIN_ON_MOMB = '''import pbs
e = pbs.event()
if pbs.get_local_nodename() == "momb":
    e.reject("simulated execjob_begin failure on momb")
e.accept()
'''
REJECT_LAUNCH = '''import pbs
e = pbs.event()
e.job.Hold_Types = pbs.hold_types("s")
e.job.rerun()
e.reject("unsuccessful at LAUNCH")
'''


class FakeServer:
    def __init__(self, address):
        self.address = address
        self.requests = []
        self.cond = threading.Condition()
        self.server = wire.serve(address, wire.SERVER_PORT, self.dispatch)

    def dispatch(self, message, peer):
        with self.cond:
            self.requests.append(message)
            self.cond.notify_all()
        return {"ok": True}

    def wait_for(self, op, timeout=60):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                found = [m for m in self.requests if m.get("op") == op]
                if found:
                    return found[0]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError("no %s among %r" % (op, [m.get("op") for m in self.requests]))
                self.cond.wait(remaining)

    def ops(self):
        return [m.get("op") for m in self.requests]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Cluster:
    def __init__(self, tmp_path, frozen=()):
        self.tmp_path = tmp_path
        self.addresses = {name: "127.0.1.%d" % next(_ADDRESSES) for name in ("srv", "moma", "momb", "momc")}
        self.server = FakeServer(self.addresses["srv"])
        self.moms = {}
        self.frozen = []
        for name in ("moma", "momb", "momc"):
            if name in frozen:
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((self.addresses[name], wire.IM_PORT))
                sock.listen(16)
                self.frozen.append(sock)
                continue
            home = tmp_path / name
            (home / "mom_priv").mkdir(parents=True)
            mom = Mom(str(home), name, name, self.addresses[name], "srv",
                      server_address=self.addresses["srv"], resolve=self.addresses.__getitem__)
            self.moms[name] = mom

    def config(self, name, text):
        with open(os.path.join(self.moms[name].priv, "config"), "w") as handle:
            handle.write(text)

    def hook(self, name, event, body, on=("moma", "momb", "momc"), alarm=30):
        for mom in on:
            if mom in self.moms:
                self.moms[mom].hooks.write(name, "HK", "type=site\nenabled=true\nevent=%s\nalarm=%d\n" % (event, alarm))
                self.moms[mom].hooks.write(name, "PY", body)

    def start(self):
        for mom in self.moms.values():
            assert mom.start()
        self.server.wait_for("mom_hello")

    def close(self):
        for mom in self.moms.values():
            mom.stop()
        for sock in self.frozen:
            sock.close()
        self.server.close()

    def log(self, name):
        logdir = os.path.join(self.moms[name].pbs_home, "mom_logs")
        lines = []
        for entry in sorted(os.listdir(logdir)):
            with open(os.path.join(logdir, entry)) as handle:
                lines.extend(line.split(";", 1)[1] for line in handle.read().splitlines())
        return lines


@pytest.fixture
def cluster(tmp_path):
    made = []

    def make(**kwargs):
        c = Cluster(tmp_path, **kwargs)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def make_job(tmp_path, tolerate="job_start"):
    user = pwd.getpwuid(os.getuid())
    return {
        "id": "17.srv", "Job_Name": "STDIN", "Job_Owner": "%s@srv" % user.pw_name,
        "euser": user.pw_name, "egroup": user.pw_name, "queue": "workq",
        "Resource_List": {"select": "1:ncpus=1+2:ncpus=1", "ncpus": "3", "nodect": "3",
                          "place": "scatter", "site": "1:ncpus=1+1:ncpus=1"},
        "schedselect": "1:ncpus=1+2:ncpus=1",
        "exec_vnode": "(moma:ncpus=1)+(momb:ncpus=1)+(momc:ncpus=1)",
        "exec_host": "moma/0+momb/0+momc/0",
        "tolerate_node_failures": tolerate, "Hold_Types": "n", "run_count": "1",
        "Variable_List": {"PBS_O_HOME": user.pw_dir, "PBS_O_WORKDIR": str(tmp_path)},
        "script": 'echo "job $PBS_JOBID on $(cat $PBS_NODEFILE | tr "\\n" " ")"\n',
        "Output_Path": "srv:%s" % (tmp_path / "STDIN.o17"),
        "Error_Path": "srv:%s" % (tmp_path / "STDIN.e17"),
        "Join_Path": "n",
    }


VNODES = {name: {"host": name, "resources_available": {"ncpus": "2", "host": name, "vnode": name}}
          for name in ("moma", "momb", "momc")}


def run(c, job):
    reply = wire.request(c.addresses["moma"], wire.MOM_PORT, {"op": "run_job", "job": job, "vnodes": VNODES})
    assert reply == {"ok": True}


def test_pp928_i3_join_timeout_logs_alarm_exceeded_and_tolerant_job_runs_pruned(cluster, tmp_path):
    c = cluster(frozen=("momc",))
    c.config("moma", "$sister_join_job_alarm 2\n$job_launch_delay 5\n")
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    c.start()
    run(c, make_job(tmp_path))
    update = c.server.wait_for("mom_job_update")
    assert update["exec_vnode"] == "(moma:ncpus=1)+(momb:ncpus=1)"
    assert update["exec_host"] == "moma/0+momb/0"
    assert update["schedselect"] == "1:ncpus=1+1:ncpus=1"
    obit = c.server.wait_for("mom_job_obit")
    assert obit["exit_status"] == 0
    ops = c.server.ops()
    assert ops.index("mom_job_update") < ops.index("mom_job_started") < ops.index("mom_job_obit")
    log = c.log("moma")
    expected = [
        "0004;pbs_mom;Job;17.srv;sister_join_job_alarm wait time 2 secs exceeded",
        "0008;pbs_mom;Job;17.srv;job_start_error 15169 from node momc could not JOIN_JOB successfully",
        "0008;pbs_mom;Job;17.srv;ignoring error from momc as job is tolerant of node failures",
        "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momc]",
        "0008;pbs_mom;Job;17.srv;pruned from exec_vnode=(moma:ncpus=1)+(momb:ncpus=1)+(momc:ncpus=1)",
        "0008;pbs_mom;Job;17.srv;pruned to exec_vnode=(moma:ncpus=1)+(momb:ncpus=1)",
    ]
    positions = [log.index(line) for line in expected]
    assert positions == sorted(positions)
    assert "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momb]" not in log
    assert any(line.startswith("0008;pbs_mom;Job;17.srv;Started, pid = ") for line in log)
    with open(os.path.join(c.moms["moma"].pbs_home, "aux", "17.srv")) as handle:
        assert handle.read() == "moma\nmomb\n"
    with open(tmp_path / "STDIN.o17") as handle:
        assert handle.read() == "job 17.srv on moma momb \n"
    assert "0008;pbs_mom;Job;17.srv;JOIN_JOB as node 1" in c.log("momb")
    deadline = time.monotonic() + 30
    while "0008;pbs_mom;Job;17.srv;updated nodes info" not in c.log("momb") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "0008;pbs_mom;Job;17.srv;updated nodes info" in c.log("momb")


def test_pp928_i5_sister_begin_reject_tolerated_and_host_in_vnode_list_fail(cluster, tmp_path):
    c = cluster()
    c.hook("failbegin", "execjob_begin", FAIL_BEGIN_ON_MOMB)
    c.hook("launch", "execjob_launch", LAUNCH_HOOK)
    c.start()
    run(c, make_job(tmp_path, tolerate="all"))
    update = c.server.wait_for("mom_job_update")
    assert update["exec_vnode"] == "(moma:ncpus=1)+(momc:ncpus=1)"
    c.server.wait_for("mom_job_obit")
    log = c.log("moma")
    expected = [
        "0008;pbs_mom;Job;17.srv;job_start_error 15169 from node momb could not JOIN_JOB successfully",
        "0008;pbs_mom;Job;17.srv;ignoring error from momb as job is tolerant of node failures",
        "0008;pbs_mom;Job;17.srv;simulated execjob_begin failure on momb",
        "0008;pbs_python;Job;17.srv;launch: found vnode_list_fail[momb]",
    ]
    positions = [log.index(line) for line in expected]
    assert positions == sorted(positions)
    assert not any("sister_join_job_alarm wait time" in line for line in log)
    sister = c.log("momb")
    assert "0100;pbs_mom;Hook;failbegin;execjob_begin request rejected by 'failbegin'" in sister
    assert "0008;pbs_mom;Job;17.srv;simulated execjob_begin failure on momb" in sister
    with open(os.path.join(c.moms["moma"].pbs_home, "aux", "17.srv")) as handle:
        assert handle.read() == "moma\nmomc\n"


def test_pp928_i1_non_tolerant_job_with_rejecting_sister_is_requeued(cluster, tmp_path):
    c = cluster()
    c.hook("failbegin", "execjob_begin", FAIL_BEGIN_ON_MOMB)
    c.start()
    run(c, make_job(tmp_path, tolerate="none"))
    requeue = c.server.wait_for("mom_job_requeue")
    assert requeue["jobid"] == "17.srv"
    assert "mom_job_started" not in c.server.ops()
    log = c.log("moma")
    assert "0008;pbs_mom;Job;17.srv;job_start_error 15169 from node momb could not JOIN_JOB successfully" in log
    assert not any("ignoring error from" in line for line in log)
    assert not os.path.exists(tmp_path / "STDIN.o17")


def test_pp928_i6_launch_reject_requeues_with_hook_hold_and_logs_reject(cluster, tmp_path):
    c = cluster()
    c.hook("launch", "execjob_launch", REJECT_LAUNCH)
    c.start()
    run(c, make_job(tmp_path))
    requeue = c.server.wait_for("mom_job_requeue")
    assert requeue["hold"] == "s"
    assert requeue["rerun"] is True
    assert requeue["comment"] == "unsuccessful at LAUNCH"
    log = c.log("moma")
    reject = log.index("0100;pbs_mom;Hook;launch;execjob_launch request rejected by 'launch'")
    assert log[reject + 1] == "0008;pbs_mom;Job;17.srv;unsuccessful at LAUNCH"
    assert "mom_job_started" not in c.server.ops()
