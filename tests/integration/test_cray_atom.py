"""Issue 4 point 4: the Cray ATOM hook on the mock cluster, installed by the cray_atom role
through ansible-playbook, against the mock ATOM service (``atomd``) the launcher starts in
every mom node.

The role runs with ``cray_atom_hook_source: bundled`` first: the mock's built-in
``PBS_cray_atom`` pbshook is a stand-in body that talks to no service, so only the bundled hook
exercises the real code path.  Faults are injected per node with ``python -m mockpbs atomd
--inject`` inside the node, as an admin would with ``cluster exec``.

The last tests switch the same cluster to the default ``auto`` (the built-in ``PBS_cray_atom``,
which the mock has, disabled) and to ``builtin``: config import, enabling, the .HK/.CF on every
mom, idempotence, check mode, the refusal of ``bundled`` while ``PBS_cray_atom`` is enabled, and
the report on ``$sister_join_job_alarm`` (PP-928 interface 3) printed by tasks/report.yml.
"""
import json
import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbsjobs  # noqa: E402  (running_pruned)
import rjs_demo  # noqa: E402  (run_playbook, parse_qstat_f, wait_for)

pytestmark = pytest.mark.integration

SERVER = "pbs-server"
MOMS = ("mom1", "mom2", "mom3")
PYTHON = sys.executable
TIMEOUTS = {"post_timeout": 3, "delete_timeout": 3}
OFFLINE_COMMENT = "offlined by hook 'cray_atom' due to hook error"


@pytest.fixture(scope="module")
def cluster(cluster_factory, tmp_path_factory):
    cluster = cluster_factory(moms=len(MOMS))
    extra = tmp_path_factory.mktemp("atom") / "vars.json"
    extra.write_text(json.dumps({"cray_atom_hook_source": "bundled", "cray_atom_config": TIMEOUTS}))
    rc, output, recap = rjs_demo.run_playbook(cluster.inventory, "playbooks/cray_atom.yml", str(extra))
    assert rc == 0, output[-3000:]
    assert all(r["failed"] == 0 for r in recap.values()), recap
    yield cluster
    cluster.down()


@pytest.fixture(autouse=True)
def clean_faults(cluster):
    yield
    for mom in MOMS:
        atomd(cluster, mom, "--inject", "clear")
        cluster.exec(SERVER, ["pbsnodes", "-r", mom])


def atomd(cluster, node, *args):
    return cluster.exec(node, [PYTHON, "-m", "mockpbs", "atomd"] + list(args), check=True).stdout


def registered(cluster, node):
    return [record["jobid"] for record in json.loads(atomd(cluster, node, "--jobs"))]


def requests_for(cluster, node, jobid):
    """[(method, status)] the node's atomd logged for ``jobid``."""
    text = cluster.exec(node, ["cat", "/var/run/atomd/atomd.sock.log"]).stdout
    out = []
    for line in text.splitlines():
        entry = json.loads(line)
        if entry.get("jobid") == jobid:
            out.append((entry["method"], entry["status"]))
    return out


def submit(cluster, script="sleep 6\n", select="ncpus=1+ncpus=1+ncpus=1", extra=()):
    proc = cluster.exec(SERVER, ["qsub", "-l", "select=" + select, "-l", "place=scatter"] + list(extra),
                        user="pbsuser", input=script, check=True)
    return proc.stdout.strip()


def qstat(cluster, jobid):
    proc = cluster.exec(SERVER, ["qstat", "-f", jobid])
    return rjs_demo.parse_qstat_f(proc.stdout) if proc.returncode == 0 else None


def gone(cluster, jobid):
    return cluster.exec(SERVER, ["qstat", jobid]).returncode != 0


def running_pruned(cluster, jobid):
    """``qstat -f`` of ``jobid`` once it runs on the exec_host of its last pruning, else None
    (:func:`pbsjobs.running_pruned`)."""
    return pbsjobs.running_pruned(cluster, jobid)


def node(cluster, name):
    proc = cluster.exec(SERVER, ["pbsnodes", name], check=True)
    return rjs_demo.parse_qstat_f("Job Id: x\n" + "\n".join(proc.stdout.splitlines()[1:]))


def mom_log(cluster, mom):
    return cluster.exec(mom, ["sh", "-c", "cat /var/spool/pbs/mom_logs/*"]).stdout


def test_job_registered_on_every_host_while_running_and_removed_at_end(cluster):
    jobid = submit(cluster, "sleep 8\n")
    rjs_demo.wait_for(lambda: (qstat(cluster, jobid) or {}).get("job_state") == "R", 60, "job running")
    for mom in MOMS:
        rjs_demo.wait_for(lambda: jobid in registered(cluster, mom), 30, "%s registered on %s" % (jobid, mom))
    record = [r for r in json.loads(atomd(cluster, "mom2", "--jobs")) if r["jobid"] == jobid][0]
    assert record["uid"] == 1500 and record["exclusive"] is False
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 90, "job end")
    for mom in MOMS:
        rjs_demo.wait_for(lambda: jobid not in registered(cluster, mom), 30, "%s removed on %s" % (jobid, mom))
        assert requests_for(cluster, mom, jobid) == [("POST", 200), ("DELETE", 204)]


def test_400_then_200_registers_once(cluster):
    atomd(cluster, "mom2", "--inject", "POST=400")
    jobid = submit(cluster, "sleep 4\n")
    rjs_demo.wait_for(lambda: jobid in registered(cluster, "mom2"), 60, "registration on mom2")
    assert registered(cluster, "mom2").count(jobid) == 1
    assert requests_for(cluster, "mom2", jobid)[:3] == [("POST", 400), ("DELETE", 404), ("POST", 200)]
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 90, "job end")
    assert node(cluster, "mom2")["state"] == "free"


@pytest.mark.parametrize("fault", ["POST=500*", "POST=delay:10*", "POST=drop*"])
def test_failed_registration_offlines_the_node_and_requeues_the_job(cluster, fault):
    atomd(cluster, "mom3", "--inject", fault)
    jobid = submit(cluster)
    rjs_demo.wait_for(lambda: node(cluster, "mom3").get("state") == "offline", 60, "mom3 offline")
    assert node(cluster, "mom3")["comment"] == OFFLINE_COMMENT
    # Requeued, and it cannot run again on the two moms left (it wants three hosts).
    rjs_demo.wait_for(lambda: (qstat(cluster, jobid) or {}).get("job_state") == "Q", 60, "job requeued")
    assert jobid not in registered(cluster, "mom3")
    assert node(cluster, "mom1")["state"] == "free" and node(cluster, "mom2")["state"] == "free"
    cluster.exec(SERVER, ["qdel", jobid], check=True)
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 60, "job deleted")


def test_delete_timeout_rejects_and_the_node_stays_online(cluster):
    atomd(cluster, "mom2", "--inject", "DELETE=delay:10")
    jobid = submit(cluster, "true\n")
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 90, "job end")
    rjs_demo.wait_for(lambda: "execjob_end request rejected by 'cray_atom'" in mom_log(cluster, "mom2"), 30,
                      "end hook rejection on mom2")
    assert node(cluster, "mom2")["state"] == "free"
    assert "comment" not in node(cluster, "mom2")


def test_missing_socket_is_skipped(cluster):
    atomd(cluster, "mom1", "--inject", "no-socket")
    rjs_demo.wait_for(lambda: cluster.exec("mom1", ["test", "-S", "/var/run/atomd/atomd.sock"]).returncode != 0,
                      10, "socket removed")
    jobid = submit(cluster, "true\n")
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 90, "job end")
    accounting = cluster.exec(SERVER, ["sh", "-c", "cat /var/spool/pbs/server_priv/accounting/*"]).stdout
    assert any(";E;%s;" % jobid in line for line in accounting.splitlines())
    assert node(cluster, "mom1")["state"] == "free"
    assert requests_for(cluster, "mom2", jobid) == [("POST", 200), ("DELETE", 204)]


def test_subjob_id_reaches_the_service_intact(cluster):
    array = submit(cluster, "sleep 4\n", select="ncpus=1", extra=["-J", "1-2"])
    subjob = array.replace("[]", "[1]")
    rjs_demo.wait_for(lambda: any(subjob == j for m in MOMS for j in registered(cluster, m)), 60,
                      "subjob %s registered" % subjob)
    text = "".join(cluster.exec(m, ["cat", "/var/run/atomd/atomd.sock.log"]).stdout for m in MOMS)
    posts = [json.loads(l) for l in text.splitlines() if '"POST"' in l and subjob in l]
    body = posts[0]["body"] if posts else None
    body = json.loads(body) if isinstance(body, str) else body
    assert body and body["jobid"] == subjob and posts[0]["jobid"] == subjob
    rjs_demo.wait_for(lambda: gone(cluster, array), 120, "array end")
    deletes = [json.loads(l) for m in MOMS for l in cluster.exec(m, ["cat", "/var/run/atomd/atomd.sock.log"]).stdout.splitlines()
               if '"DELETE"' in l and subjob in l]
    assert deletes and deletes[0]["path"].endswith("/rm/v1/jobs/" + subjob.replace("[", "%5B").replace("]", "%5D"))
    assert deletes[0]["jobid"] == subjob and deletes[0]["status"] == 204


def test_tolerant_padded_job_starts_on_the_other_hosts(cluster):
    # After the job tests: the reliable_job_startup hook pads and prunes every later job of
    # this cluster, and its demo vars set $sister_join_job_alarm 10 in mom_priv/config.
    rc, output, _unused = rjs_demo.run_playbook(cluster.inventory)
    assert rc == 0, output[-3000:]
    atomd(cluster, "mom3", "--inject", "POST=500*")
    jobid = submit(cluster, "sleep 4\n", select="ncpus=1+ncpus=1")
    attrs = rjs_demo.wait_for(lambda: running_pruned(cluster, jobid), 90, "job running pruned (s record)")
    assert "mom3" not in attrs["exec_host"] and attrs["exec_host"].count("/") == 2
    assert node(cluster, "mom3")["state"] == "offline"
    assert jobid in registered(cluster, "mom1") and jobid in registered(cluster, "mom2")
    rjs_demo.wait_for(lambda: gone(cluster, jobid), 90, "job end")


# --- The built-in PBS_cray_atom (cray_atom_hook_source auto / builtin) and the report. ---

BUILTIN = "PBS_cray_atom"
BUNDLED = "cray_atom"
DEFAULT_CONFIG = {"post_timeout": 30, "delete_timeout": 30, "unix_socket_file": "/var/run/atomd/atomd.sock"}
MOM_HOOKS = "/var/spool/pbs/mom_priv/hooks/"
REPORT_RE = re.compile(r'^ok: \[(\S+)\] => \{\n    "msg": (".*")\n\}$', re.M)
REFUSAL = ("the built-in PBS_cray_atom is enabled: with the bundled hook every job would be "
           "registered twice")


def play(cluster, variables, check=False):
    """ansible-playbook playbooks/cray_atom.yml -e JSON [--check]: (rc, output, {host: recap})."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(rjs_demo.REPO, "ansible.cfg"), ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_NOCOLOR="1")
    argv = [os.path.join(os.path.dirname(PYTHON), "ansible-playbook"), "-i", cluster.inventory,
            "playbooks/cray_atom.yml", "-e", json.dumps(variables)] + (["--check"] if check else [])
    proc = subprocess.run(argv, cwd=rjs_demo.REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, stdin=subprocess.DEVNULL, check=False)
    recap = {m.group(1): {"changed": int(m.group(3)), "failed": int(m.group(5))}
             for m in rjs_demo.RECAP_RE.finditer(proc.stdout)}
    return proc.returncode, proc.stdout, recap


def set_join_alarm(cluster, seconds):
    """$sister_join_job_alarm on every mom through hpc.pbs.mom_config; None removes it."""
    args = {"options": {"sister_join_job_alarm": seconds}, "state": "present" if seconds else "absent"}
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(rjs_demo.REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(os.path.dirname(PYTHON), "ansible"), "pbs_mom", "-i", cluster.inventory,
                           "-m", "hpc.pbs.mom_config", "-a", json.dumps(args)],
                          cwd=rjs_demo.REPO, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def join_reports(output):
    """{mom: message} of the $sister_join_job_alarm report (tasks/report.yml) in ``output``."""
    found = {host: json.loads(text) for host, text in REPORT_RE.findall(output)}
    return {host: msg for host, msg in found.items() if msg.startswith("$sister_join_job_alarm")}


def server_state(cluster):
    """(config imported into PBS_cray_atom, its enabled flag, whether site hook cray_atom exists)."""
    exported = cluster.exec(SERVER, ["qmgr", "-c", "export pbshook %s application/x-config default" % BUILTIN],
                            check=True).stdout
    listed = cluster.exec(SERVER, ["qmgr", "-c", "list pbshook %s" % BUILTIN], check=True).stdout
    enabled = re.search(r"^\s*enabled = (\w+)$", listed, re.M).group(1)
    site = cluster.exec(SERVER, ["qmgr", "-c", "list hook %s" % BUNDLED]).returncode == 0
    return json.loads(exported), enabled, site


def hk_attributes(text):
    """``key=value`` lines of a .HK file as a dict; PBS leaves defaults (enabled=true) out."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def other_begin_alarms(cluster, mom):
    """Sum of the alarms of the enabled execjob_begin hooks on ``mom`` other than the ATOM hooks,
    read from its mom_priv/hooks/*.HK."""
    text = cluster.exec(mom, ["sh", "-c", "for f in %s*.HK; do echo \"== $f\"; cat \"$f\"; done" % MOM_HOOKS],
                        check=True).stdout
    total = 0
    for block in text.split("== ")[1:]:
        path, _unused, body = block.partition("\n")
        name = os.path.basename(path)[:-3]
        attrs = hk_attributes(body)
        if (name not in (BUILTIN, BUNDLED) and attrs.get("enabled", "true") == "true"
                and "execjob_begin" in attrs.get("event", "").split(",")):
            total += int(attrs.get("alarm", 30))
    return total


def mom_has_builtin(cluster, mom, config):
    """True once ``mom`` holds PBS_cray_atom enabled with ``config`` and no cray_atom hook."""
    hk = cluster.exec(mom, ["cat", MOM_HOOKS + BUILTIN + ".HK"])
    cf = cluster.exec(mom, ["cat", MOM_HOOKS + BUILTIN + ".CF"]).stdout
    bundled_left = cluster.exec(mom, ["test", "-e", MOM_HOOKS + BUNDLED + ".HK"]).returncode == 0
    try:
        same_config = json.loads(cf) == config
    except ValueError:
        same_config = False
    enabled = hk.returncode == 0 and hk_attributes(hk.stdout).get("enabled", "true") == "true"
    return enabled and same_config and not bundled_left


def assert_unchanged_run(rc, output, recap):
    assert rc == 0, output[-3000:]
    assert recap and all(r["changed"] == 0 and r["failed"] == 0 for r in recap.values()), recap


def test_auto_takes_over_from_the_bundled_hook_with_the_builtin_one(cluster):
    assert server_state(cluster) == (DEFAULT_CONFIG, "false", True)
    expected = dict(DEFAULT_CONFIG, **TIMEOUTS)
    rc, output, recap = play(cluster, {"cray_atom_config": TIMEOUTS})
    assert rc == 0, output[-3000:]
    assert recap[SERVER]["changed"] > 0 and recap[SERVER]["failed"] == 0, recap
    assert server_state(cluster) == (expected, "true", False)
    for mom in MOMS:
        rjs_demo.wait_for(lambda: mom_has_builtin(cluster, mom, expected), 30, "PBS_cray_atom enabled on " + mom)
    # The reliable_job_startup demo vars left $sister_join_job_alarm 10 on every mom.
    others = other_begin_alarms(cluster, "mom1")
    assert join_reports(output) == {mom: (
        "$sister_join_job_alarm is 10 s, set in mom_priv/config: the ATOM hook PBS_cray_atom (alarm 300 s) "
        "does not change it. WARNING: it is below the %d s the execjob_begin hooks may take: the mom stops "
        "waiting for sisters first." % (others + 300)) for mom in MOMS}


def test_auto_again_and_in_check_mode_changes_nothing(cluster):
    expected = dict(DEFAULT_CONFIG, **TIMEOUTS)
    assert_unchanged_run(*play(cluster, {"cray_atom_config": TIMEOUTS}))
    rc, output, recap = play(cluster, {"cray_atom_config": {"post_timeout": 9}, "cray_atom_hook_enabled": False},
                             check=True)
    assert rc == 0, output[-3000:]
    assert recap[SERVER]["changed"] > 0, recap  # it would import the config and disable the hook
    assert server_state(cluster) == (expected, "true", False)
    assert all(mom_has_builtin(cluster, mom, expected) for mom in MOMS)


def test_builtin_source_imports_and_enables_and_is_idempotent(cluster):
    cluster.exec(SERVER, ["qmgr", "-c", "set pbshook %s enabled = false" % BUILTIN], check=True)
    variables = {"cray_atom_hook_source": "builtin", "cray_atom_config": {"post_timeout": 12}}
    expected = dict(DEFAULT_CONFIG, post_timeout=12)
    rc, output, recap = play(cluster, variables, check=True)
    assert rc == 0 and recap[SERVER]["changed"] > 0, output[-3000:]
    assert server_state(cluster) == (dict(DEFAULT_CONFIG, **TIMEOUTS), "false", False)
    rc, output, recap = play(cluster, variables)
    assert rc == 0 and recap[SERVER]["changed"] > 0, output[-3000:]
    assert server_state(cluster) == (expected, "true", False)
    for mom in MOMS:
        rjs_demo.wait_for(lambda: mom_has_builtin(cluster, mom, expected), 30, "new config on " + mom)
    assert_unchanged_run(*play(cluster, variables))


def test_bundled_is_refused_while_the_builtin_hook_is_enabled(cluster):
    expected = dict(DEFAULT_CONFIG, post_timeout=12)
    rc, output, recap = play(cluster, {"cray_atom_hook_source": "bundled", "cray_atom_config": TIMEOUTS})
    assert rc != 0 and REFUSAL in output, output[-3000:]
    assert all(r["changed"] == 0 for r in recap.values()), recap
    assert server_state(cluster) == (expected, "true", False)
    assert all(mom_has_builtin(cluster, mom, expected) for mom in MOMS)


def test_report_on_the_sister_join_job_alarm(cluster):
    variables = {"cray_atom_config": {"post_timeout": 12}}
    set_join_alarm(cluster, None)
    rc, output, _unused = play(cluster, variables)
    assert rc == 0, output[-3000:]
    others = other_begin_alarms(cluster, "mom1")
    # reliable_job_startup has no execjob_begin event: no other hook, PBS's default is 30 s then.
    assert join_reports(output) == {mom: (
        "$sister_join_job_alarm is not set: its default, the sum of the alarms of the enabled execjob_begin "
        "hooks, is %d s with the ATOM hook PBS_cray_atom (alarm 300 s), against %d s without it; set it with "
        "the mom_tunables role to choose another value." % (others + 300, others or 30)) for mom in MOMS}

    set_join_alarm(cluster, others + 300)
    rc, output, _unused = play(cluster, variables)
    assert rc == 0, output[-3000:]
    assert join_reports(output) == {mom: (
        "$sister_join_job_alarm is %d s, set in mom_priv/config: the ATOM hook PBS_cray_atom (alarm 300 s) "
        "does not change it." % (others + 300)) for mom in MOMS}
