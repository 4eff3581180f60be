"""In-process mom clusters for tests: real :class:`mockpbs.mom.daemon.Mom` objects on
loopback addresses, a recording stand-in for the server, "frozen" moms, and the job a
test runs on them.

- :func:`mockpbs.testaddr.reserve_address` hands out a loopback address no
  other process uses: the moms talk to each other on PBS's fixed ports (15001-15003), so
  every mom needs an address of its own, and two concurrent runs must never pick the same.
- :class:`RecordingServer` listens on the server port of its address, answers every
  request ``{"ok": true}`` and keeps them (``requests``, ``wait_for(op)``).
- :class:`MomCluster` gives each mom its own address, PBS_HOME under ``tmp_path`` and a
  resolver mapping the mom names to their addresses. A name in ``frozen`` gets only a
  listening IM socket that never answers (what a SIGSTOPped mom looks like). ``job()``
  builds the job dict a test sends with ``run_job()``.

Used by the tests under ``tests/unit/mockpbs`` (fixture ``mom_cluster`` in their
conftest.py).
"""
import os
import pwd
import socket
import threading
import time

from mockpbs import wire
from mockpbs.mom.daemon import Mom
from mockpbs.testaddr import release_address, reserve_address

# A release_nodes() launch hook (PP-928 "Case of Reliable Job Startup"): on the primary,
# when starting the job itself (PBS_NODEFILE set; not for a task), keep the chunks of
# Resource_List["site"], the select the job was submitted with.
PRUNING_LAUNCH_HOOK = '''import pbs
e = pbs.event()
j = e.job
if "PBS_NODEFILE" in e.env and j.in_ms_mom():
    if j.release_nodes(keep_select=j.Resource_List["site"]) is None:
        e.reject("unsuccessful at LAUNCH")
e.accept()
'''
# A job script that runs until the test (or MomCluster.close) calls release_jobs().
WAITING_SCRIPT = 'while [ ! -e "$PBS_O_WORKDIR/done" ]; do sleep 0.1; done\n'
# What run_job() sends by default: three single-vnode moms with two CPUs each.
VNODES = {name: {"host": name, "resources_available": {"ncpus": "2", "host": name, "vnode": name}}
          for name in ("moma", "momb", "momc")}


class RecordingServer:
    """Stand-in for pbs_server: records each request, answers ``{"ok": true}``."""

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

    def wait_for(self, op, timeout=60, where=None):
        """First request with ``op`` (and ``where(message)`` true); AssertionError after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for message in self.requests:
                    if message.get("op") == op and (where is None or where(message)):
                        return message
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError("no %s among %r" % (op, self.ops()))
                self.cond.wait(remaining)

    def ops(self):
        return [m.get("op") for m in list(self.requests)]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class MomCluster:
    """Moms ``names`` (the first is meant as primary) plus a recording server ``srv``.

    ``tmp_path``: directory of the moms' PBS_HOMEs (``<tmp_path>/<name>``) and the jobs'
    working directory (``PBS_O_WORKDIR``, output files, the ``done`` file of
    :data:`WAITING_SCRIPT`). ``frozen``: names that only get a mute IM socket."""

    def __init__(self, tmp_path, names=("moma", "momb", "momc"), frozen=()):
        self.tmp_path = tmp_path
        self.names = tuple(names)
        self.addresses = {name: reserve_address() for name in ("srv",) + self.names}
        self.moms = {}
        self.frozen = []
        self.server = None
        try:
            self.server = RecordingServer(self.addresses["srv"])
            for name in self.names:
                if name in frozen:
                    sock = socket.socket()
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    sock.bind((self.addresses[name], wire.IM_PORT))
                    sock.listen(16)
                    self.frozen.append(sock)
                    continue
                home = os.path.join(str(tmp_path), name)
                os.makedirs(os.path.join(home, "mom_priv"), exist_ok=True)
                self.moms[name] = Mom(home, name, name, self.addresses[name], "srv",
                                      server_address=self.addresses["srv"], resolve=self.resolve)
                self.moms[name].jobs._user = self._job_owner
        except BaseException:
            self.close()
            raise

    def _job_owner(self, job):
        """The job owner's passwd entry with its home in ``<tmp_path>/home``: the moms run
        jobs as the test's own user, whose login shell must not read the host user's
        dotfiles (a ``pyenv rehash`` in them waits 60 s on a lock left by a killed shell)."""
        try:
            user = pwd.getpwnam(job.get("euser") or "")
        except KeyError:
            user = pwd.getpwuid(os.getuid())
        home = os.path.join(str(self.tmp_path), "home")
        os.makedirs(home, exist_ok=True)
        return pwd.struct_passwd((user.pw_name, user.pw_passwd, user.pw_uid, user.pw_gid, user.pw_gecos,
                                  home, user.pw_shell))

    def resolve(self, host):
        try:
            return self.addresses[host]
        except KeyError:
            raise OSError("unknown host %s" % host) from None

    def write(self, name, relpath, text):
        """Write ``PBS_HOME/<relpath>`` of mom ``name``."""
        path = os.path.join(self.moms[name].pbs_home, relpath)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text)

    def config(self, name, text):
        self.write(name, "mom_priv/config", text)

    def hook(self, name, event, body, on=None, alarm=30, fail_action=None):
        """Install an enabled site hook on the moms ``on`` (default all running ones).
        ``event``: one event or a comma-separated list; ``fail_action``: the hook's
        ``fail_action`` attribute (default: not set, i.e. ``none``)."""
        attributes = "type=site\nenabled=true\nevent=%s\nalarm=%d\n" % (event, alarm)
        if fail_action is not None:
            attributes += "fail_action=%s\n" % fail_action
        for mom in on or list(self.moms):
            if mom in self.moms:
                self.moms[mom].hooks.write(name, "HK", attributes)
                self.moms[mom].hooks.write(name, "PY", body)

    def job(self, **attributes):
        """A job dict as the server sends it in ``run_job`` (PROTOCOL.md): job ``17.srv``
        of the current user, padded to three chunks on moma, momb, momc (select
        ``1:ncpus=1+2:ncpus=1``, its original select ``1:ncpus=1+1:ncpus=1`` in
        ``Resource_List["site"]``, as the reliable-job-startup queuejob hook leaves it),
        ``tolerate_node_failures=job_start``, script ``true``, output files in
        ``tmp_path``. ``attributes`` replace top-level attributes."""
        user = pwd.getpwuid(os.getuid())
        workdir = str(self.tmp_path)
        job = {
            "id": "17.srv", "Job_Name": "STDIN", "Job_Owner": "%s@srv" % user.pw_name,
            "euser": user.pw_name, "egroup": user.pw_name, "queue": "workq",
            "Resource_List": {"select": "1:ncpus=1+2:ncpus=1", "ncpus": "3", "nodect": "3",
                              "place": "scatter", "site": "1:ncpus=1+1:ncpus=1"},
            "schedselect": "1:ncpus=1+2:ncpus=1",
            "exec_vnode": "(moma:ncpus=1)+(momb:ncpus=1)+(momc:ncpus=1)",
            "exec_host": "moma/0+momb/0+momc/0",
            "tolerate_node_failures": "job_start", "Hold_Types": "n", "run_count": "1",
            "Variable_List": {"PBS_O_HOME": user.pw_dir, "PBS_O_WORKDIR": workdir},
            "script": "true\n",
            "Output_Path": "srv:%s" % os.path.join(workdir, "STDIN.o17"),
            "Error_Path": "srv:%s" % os.path.join(workdir, "STDIN.e17"),
            "Join_Path": "n",
        }
        job.update(attributes)
        return job

    def run_job(self, job, vnodes=None, mom=None):
        """Send ``run_job`` to ``mom`` (default: the first name) with ``vnodes`` (default
        :data:`VNODES`); AssertionError unless it answers ``{"ok": true}``."""
        reply = wire.request(self.addresses[mom or self.names[0]], wire.MOM_PORT,
                             {"op": "run_job", "job": job, "vnodes": VNODES if vnodes is None else vnodes})
        assert reply == {"ok": True}, reply

    def output(self, stream="o"):
        """Text of the job's output (``o``) or error (``e``) file; None when absent."""
        path = os.path.join(str(self.tmp_path), "STDIN.%s17" % stream)
        if not os.path.exists(path):
            return None
        with open(path) as handle:
            return handle.read()

    def nodefile(self, mom=None, jobid="17.srv"):
        """Lines of the job's PBS_NODEFILE on ``mom`` (default: the first name)."""
        with open(os.path.join(self.moms[mom or self.names[0]].pbs_home, "aux", jobid)) as handle:
            return handle.read().splitlines()

    def release_jobs(self):
        """End the jobs running :data:`WAITING_SCRIPT`."""
        with open(os.path.join(str(self.tmp_path), "done"), "w"):
            pass

    def start(self):
        for mom in self.moms.values():
            assert mom.start()
        self.server.wait_for("mom_hello")

    def close(self):
        self.release_jobs()
        for mom in self.moms.values():
            mom.stop()
        for sock in self.frozen:
            sock.close()
        if self.server is not None:
            self.server.close()
        for address in self.addresses.values():
            release_address(address)

    def log(self, name):
        """Lines of mom ``name``'s logs without the timestamp field."""
        logdir = os.path.join(self.moms[name].pbs_home, "mom_logs")
        lines = []
        for entry in sorted(os.listdir(logdir)):
            with open(os.path.join(logdir, entry)) as handle:
                lines.extend(line.split(";", 1)[1] for line in handle.read().splitlines())
        return lines

    def wait_log(self, name, line, timeout=60):
        """Wait until mom ``name`` logged exactly ``line``; AssertionError otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if line in self.log(name):
                return
            time.sleep(0.1)
        raise AssertionError("%s never logged %r" % (name, line))
