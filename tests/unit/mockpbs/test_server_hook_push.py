"""Hook pushes from the server to its moms (mockpbs.server.hookpush): a hook's files go
once to each mom host however many vnodes it reports, pushes to one mom are ordered, and
the mom ends with the server's latest version of a hook after quick ``set hook`` changes
(seen before: moms kept ``enabled=false`` in NAME.HK while the server said true)."""
import hashlib
import random
import threading
import time

import pytest

from mockpbs import hookdefs, testaddr, wire
from mockpbs.cli import pbsnodes, qmgr
from mockpbs.testing import server as testing

PUSH_SETTLE_SECONDS = 30


class HookMom:
    """A mom that answers pings and keeps the hook files it is sent (the last write of
    a file wins, as on disk). ``hold_disabled`` (a hook name) makes a ``hook_copy`` of
    that hook whose HK says ``enabled=false`` wait until ``release()``; ``jitter`` delays every copy by up to that
    many seconds (random). Each request is applied before it is answered."""

    def __init__(self, address, name, server_address, hold_disabled=None, jitter=0.0):
        self.address = address
        self.name = name
        self.server_address = server_address
        self.hold_disabled = hold_disabled
        self.jitter = jitter
        self.gate = threading.Event()
        self.lock = threading.Condition()
        self.copies = []        # (hook name, files) in arrival order
        self.files = {}         # hook name -> {ext: text}
        self.in_flight = 0
        self.listener = wire.serve(address, wire.MOM_PORT, self.dispatch)

    def dispatch(self, message, peer):
        if message["op"] == "ping":
            return {"ok": True, "node": self.name, "resources_available": {"ncpus": "0"}}
        if message["op"] == "hook_delete":
            with self.lock:
                self.files.pop(message["name"], None)
            return {"ok": True}
        if message["op"] != "hook_copy":
            return {"ok": True}
        name, files = message["name"], message.get("files") or {}
        with self.lock:
            self.copies.append((name, files))
            self.in_flight += 1
            self.lock.notify_all()
        try:
            if name == self.hold_disabled and hookdefs.parse_hk(files.get("HK", "")).get("enabled") == "false":
                self.gate.wait(PUSH_SETTLE_SECONDS)
            if self.jitter:
                time.sleep(random.uniform(0, self.jitter))
            with self.lock:
                self.files.setdefault(name, {}).update(files)
        finally:
            with self.lock:
                self.in_flight -= 1
                self.lock.notify_all()
        return {"ok": True}

    def release(self):
        self.gate.set()

    def copies_of(self, name):
        with self.lock:
            return [files for each, files in self.copies if each == name]

    def hk(self, name):
        with self.lock:
            return self.files.get(name, {}).get("HK")

    def idle(self):
        with self.lock:
            return self.in_flight == 0

    def close(self):
        self.gate.set()
        self.listener.shutdown()
        self.listener.server_close()


def hello_vnodes():
    """hostA reporting itself and two more vnodes: three nodes with one Mom."""
    return {name: {"resources_available": {"ncpus": ncpus, "host": "hostA", "vnode": name}}
            for name, ncpus in (("hostA", "0"), ("hostA[0]", "2"), ("hostA[1]", "2"))}


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    """``make(**HookMom options) -> (server, mom)``: a server and one mom with three vnodes."""
    made = []

    def make(**options):
        address = testaddr.reserve_address()
        daemon = testing.start_server(tmp_path, monkeypatch)
        mom = HookMom(address, "hostA", daemon.address, **options)
        made.append((daemon, mom, address))
        assert run("create node hostA Mom=%s" % address)[0] == 0
        wire.request(daemon.address, wire.SERVER_PORT, {"op": "mom_hello", "node": "hostA", "host": "hostA",
                                                        "resources_available": {"ncpus": "0"},
                                                        "vnodes": hello_vnodes()}, timeout=30)
        testing.wait_for(lambda: testing.run_cli(pbsnodes.main, ["-a"])[1].count("state = free") == 3,
                         "3 vnodes free")
        assert daemon.core.hook_pusher.wait_idle(PUSH_SETTLE_SECONDS)
        return daemon, mom

    yield make
    for daemon, mom, address in made:
        mom.close()
        daemon.stop()
        testaddr.release_address(address)


def run(command):
    rc, out, err = testing.run_cli(qmgr.main, ["-c", command])
    assert (rc, err) == (0, ""), err
    return rc, out, err


def server_hk(daemon, name):
    with daemon.core.lock:
        return daemon.core.state.read_hook_file(name, "HK")


def test_a_hook_change_reaches_a_multi_vnode_mom_once(cluster):
    daemon, mom = cluster()
    run("create hook h1 event=execjob_begin")
    assert daemon.core.hook_pusher.wait_idle(PUSH_SETTLE_SECONDS)
    created = mom.copies_of("h1")
    assert [sorted(files) for files in created] == [["HK"]]
    run("set hook h1 enabled=false")
    assert daemon.core.hook_pusher.wait_idle(PUSH_SETTLE_SECONDS)
    changed = mom.copies_of("h1")[1:]
    assert [files["HK"] for files in changed] == [server_hk(daemon, "h1")]
    assert "enabled=false\n" in changed[0]["HK"]


def test_a_later_change_cannot_be_overtaken_by_an_earlier_one(cluster):
    daemon, mom = cluster(hold_disabled="h1")
    run("create hook h1 event=execjob_begin")
    testing.wait_for(lambda: mom.hk("h1"), "h1 at the mom")
    run("set hook h1 enabled=false")
    testing.wait_for(lambda: any(hookdefs.parse_hk(files["HK"]).get("enabled") == "false"
                                 for files in mom.copies_of("h1")), "the enabled=false copy at the mom")
    arrived = len(mom.copies_of("h1"))
    run("set hook h1 enabled=true")
    # The enabled=true push must wait in the queue behind the held enabled=false one (a push
    # that did not wait would reach the mom at once and then be overwritten by the held copy).
    testing.wait_for(lambda: daemon.core.hook_pusher.queued("h1"), "the enabled=true push queued behind the held one")
    assert len(mom.copies_of("h1")) == arrived
    mom.release()
    testing.wait_for(lambda: mom.idle() and mom.hk("h1") == server_hk(daemon, "h1"),
                     "the mom to keep the server's h1.HK", deadline=PUSH_SETTLE_SECONDS)
    assert daemon.core.hook_pusher.wait_idle(PUSH_SETTLE_SECONDS)
    assert mom.hk("h1") == server_hk(daemon, "h1")
    assert "enabled" not in hookdefs.parse_hk(mom.hk("h1"))
    assert [hookdefs.parse_hk(files["HK"]).get("enabled") for files in mom.copies_of("h1")] == \
        [None, "false", None]


def test_quick_flips_leave_the_mom_with_the_servers_last_version(cluster):
    daemon, mom = cluster(jitter=0.03)
    run("create hook h1 event=execjob_begin")
    for flip in range(20):
        run("set hook h1 enabled=%s" % ("false" if flip % 2 == 0 else "true"))
    run("set hook h1 enabled=false")
    assert daemon.core.hook_pusher.wait_idle(PUSH_SETTLE_SECONDS)
    testing.wait_for(mom.idle, "the mom's last request")
    assert mom.hk("h1") == server_hk(daemon, "h1")
    assert hookdefs.parse_hk(mom.hk("h1"))["enabled"] == "false"


def test_changes_made_while_a_copy_is_in_flight_collapse_into_one_later_copy(cluster):
    daemon, mom = cluster(hold_disabled="h1")
    run("create hook h1 event=execjob_begin")
    testing.wait_for(lambda: mom.hk("h1"), "h1 at the mom")
    run("set hook h1 enabled=false")
    testing.wait_for(lambda: len(mom.copies_of("h1")) == 2, "the enabled=false copy held at the mom")
    for flip in range(20):
        run("set hook h1 enabled=%s" % ("true" if flip % 2 == 0 else "false"))
    mom.release()
    assert daemon.core.hook_pusher.wait_idle(PUSH_SETTLE_SECONDS)
    testing.wait_for(mom.idle, "the mom's last request")
    # the 20 changes queued behind the held copy went in exactly one later copy
    assert len(mom.copies_of("h1")) == 3
    assert mom.copies_of("h1")[2]["HK"] == mom.hk("h1") == server_hk(daemon, "h1")
    assert hookdefs.parse_hk(mom.hk("h1"))["enabled"] == "false"


def test_delete_and_create_again_replaces_the_moms_files(cluster, tmp_path):
    daemon, mom = cluster()
    config = tmp_path / "h1.cf"
    config.write_text("old=1\n")
    run("create hook h1 event=execjob_begin")
    run("import hook h1 application/x-config default %s" % config)
    assert daemon.core.hook_pusher.wait_idle(PUSH_SETTLE_SECONDS)
    assert mom.files["h1"].get("CF") == "old=1\n"
    run("delete hook h1")
    run("create hook h1 event=execjob_end")
    assert daemon.core.hook_pusher.wait_idle(PUSH_SETTLE_SECONDS)
    assert "CF" not in mom.files["h1"]
    assert mom.hk("h1") == server_hk(daemon, "h1")


def hello(daemon, **extra):
    message = {"op": "mom_hello", "node": "hostA", "host": "hostA", "resources_available": {"ncpus": "0"},
               "vnodes": hello_vnodes()}
    message.update(extra)
    wire.request(daemon.address, wire.SERVER_PORT, message, timeout=30)
    assert daemon.core.hook_pusher.wait_idle(PUSH_SETTLE_SECONDS)


def test_a_hello_gets_only_the_hooks_whose_files_differ_from_the_moms_checksums(cluster):
    """As a real server copies only the hooks whose checksums the mom reports different: a
    mom's reload (SIGHUP) or restart gets no .HK copy of a hook it holds unchanged, so its
    derived $sister_join_job_alarm is not summed again."""
    daemon, mom = cluster()
    run("create hook same event=execjob_begin")
    run("create hook stale event=execjob_begin")
    assert daemon.core.hook_pusher.wait_idle(PUSH_SETTLE_SECONDS)
    with mom.lock:
        held = {name: {ext: hashlib.sha256(text.encode("utf-8")).hexdigest() for ext, text in files.items()}
                for name, files in mom.files.items()}
    held["stale"]["HK"] = hashlib.sha256(b"enabled=false\n").hexdigest()
    before = {name: len(mom.copies_of(name)) for name in ("same", "stale")}
    hello(daemon, hook_checksums=held)
    assert {name: len(mom.copies_of(name)) - before[name] for name in before} == {"same": 0, "stale": 1}
    hello(daemon)       # no checksums: every hook
    assert {name: len(mom.copies_of(name)) - before[name] for name in before} == {"same": 1, "stale": 2}
