"""``pbsnodes -a -F json`` / ``pbsnodes -F json NAME``: the mock prints what OpenPBS 23.06's
pbsnodes prints (src/cmds/pbsnodes.c ``encode_to_json``, libcjson's ``cJSON_Print``).

``REAL_OUTPUT`` was captured from a real OpenPBS 23.06.06 test cluster (two moms, mom1
marked offline with a comment, one job running on mom2); the listing items below are that
same cluster's ``pbsnodes -a`` as the mock server hands them to the CLI.
"""
import json

import pytest

from mockpbs.cli import pbsnodes
from mockpbs.testing import server as testing

ASSIGNED_ZERO = [("resources_assigned.accelerator_memory", "0kb"), ("resources_assigned.hbmem", "0kb"),
                 ("resources_assigned.mem", "0kb"), ("resources_assigned.naccelerators", "0")]


def listing(name, state, extra, assigned_ncpus, stamp):
    head = [("Mom", name), ("Port", "15002"), ("pbs_version", "23.06.06"), ("ntype", "PBS"), ("state", state),
            ("pcpus", "2")]
    available = [("resources_available.arch", "linux"), ("resources_available.host", name),
                 ("resources_available.mem", "24684092kb"), ("resources_available.ncpus", "1"),
                 ("resources_available.vnode", name)]
    assigned = ASSIGNED_ZERO + [("resources_assigned.ncpus", assigned_ncpus), ("resources_assigned.vmem", "0kb")]
    tail = [("resv_enable", "True"), ("sharing", "default_shared"), ("license", "l"),
            ("last_state_change_time", stamp)]
    jobs = [item for item in extra if item[0] == "jobs"]
    comment = [item for item in extra if item[0] == "comment"]
    return head + jobs + available + assigned + comment + tail


REAL_OUTPUT = """{
\t"timestamp":\t1795535722,
\t"pbs_version":\t"23.06.06",
\t"pbs_server":\t"pbs-server",
\t"nodes":\t{
\t\t"mom1":\t{
\t\t\t"Mom":\t"mom1",
\t\t\t"Port":\t15002,
\t\t\t"pbs_version":\t"23.06.06",
\t\t\t"ntype":\t"PBS",
\t\t\t"state":\t"offline",
\t\t\t"pcpus":\t2,
\t\t\t"resources_available":\t{
\t\t\t\t"arch":\t"linux",
\t\t\t\t"host":\t"mom1",
\t\t\t\t"mem":\t"24684092kb",
\t\t\t\t"ncpus":\t1,
\t\t\t\t"vnode":\t"mom1"
\t\t\t},
\t\t\t"resources_assigned":\t{
\t\t\t},
\t\t\t"comment":\t"disk failure, says ops",
\t\t\t"resv_enable":\t"True",
\t\t\t"sharing":\t"default_shared",
\t\t\t"license":\t"l",
\t\t\t"last_state_change_time":\t1795535716
\t\t},
\t\t"mom2":\t{
\t\t\t"Mom":\t"mom2",
\t\t\t"Port":\t15002,
\t\t\t"pbs_version":\t"23.06.06",
\t\t\t"ntype":\t"PBS",
\t\t\t"state":\t"job-busy",
\t\t\t"pcpus":\t2,
\t\t\t"jobs":\t["0.pbs-server"],
\t\t\t"resources_available":\t{
\t\t\t\t"arch":\t"linux",
\t\t\t\t"host":\t"mom2",
\t\t\t\t"mem":\t"24684092kb",
\t\t\t\t"ncpus":\t1,
\t\t\t\t"vnode":\t"mom2"
\t\t\t},
\t\t\t"resources_assigned":\t{
\t\t\t\t"ncpus":\t1
\t\t\t},
\t\t\t"resv_enable":\t"True",
\t\t\t"sharing":\t"default_shared",
\t\t\t"license":\t"l",
\t\t\t"last_state_change_time":\t1795535716
\t\t}
\t}
}
"""
REAL_UNKNOWN_TAIL = '\t\t"nosuch":\t{\n\t\t\t"nosuch":\t"Unknown node "\n\t\t}\n\t}\n}\n'


@pytest.fixture
def fixed_clock(monkeypatch):
    monkeypatch.setattr(pbsnodes.time, "time", lambda: 1795535722.4)
    monkeypatch.setattr(pbsnodes.common, "server_name", lambda: "pbs-server")


def real_entries():
    return [("mom1", listing("mom1", "offline", [("comment", "disk failure, says ops")], "0", 1795535716)),
            ("mom2", listing("mom2", "job-busy", [("jobs", "0.pbs-server/0")], "1", 1795535716))]


def test_document_is_what_real_openpbs_printed(fixed_clock):
    assert pbsnodes.json_document(real_entries()) == REAL_OUTPUT


def test_unknown_named_node_is_an_object_of_its_error(fixed_clock):
    out = pbsnodes.json_document(real_entries()[:1] + [("nosuch", None)])
    assert out.endswith(REAL_UNKNOWN_TAIL)


@pytest.mark.parametrize("text,ids", [
    ("1.s/0", ["1.s"]), ("1.s/0, 1.s/1", ["1.s"]), ("1.s/0, 2.s/0, 1.s/1", ["1.s", "2.s", "1.s"]),
    ("3[1].s/0,3[2].s/0", ["3[1].s", "3[2].s"]),
])
def test_jobs_array_drops_slots_and_repeats(text, ids):
    assert pbsnodes.json_job_ids(text) == ids


@pytest.mark.parametrize("attribute,text,kept", [
    ("resources_assigned", "0kb", False), ("resources_assigned", "0", False), ("resources_assigned", "0.0", False),
    ("resources_assigned", "2gb", True), ("resources_assigned", "1", True),
    ("resources_available", "0", True), ("resources_available", "0kb", True),
])
def test_only_assigned_zero_resources_are_left_out(attribute, text, kept):
    assert pbsnodes.json_resource_value(attribute, text)[0] is kept


@pytest.fixture
def server(tmp_path, monkeypatch):
    daemon = testing.start_server(tmp_path, monkeypatch)
    with daemon.core.lock:
        for name in ("mom1", "mom2"):
            daemon.core.state.nodes[name] = daemon.core._new_node(name)
    yield daemon
    daemon.stop()


def test_cli_lists_every_node_and_named_ones(server, fixed_clock):
    rc, out, err = testing.run_cli(pbsnodes.main, ["-a", "-F", "json"])
    assert (rc, err) == (0, "")
    document = json.loads(out)
    assert list(document) == ["timestamp", "pbs_version", "pbs_server", "nodes"]
    assert sorted(document["nodes"]) == ["mom1", "mom2"]
    rc, out, err = testing.run_cli(pbsnodes.main, ["-F", "JSON", "mom2", "nosuch"])
    assert (rc, err) == (0, "")
    assert list(json.loads(out)["nodes"]) == ["mom2", "nosuch"] and out.endswith(REAL_UNKNOWN_TAIL)


@pytest.mark.parametrize("argv", [["-v", "-F", "json", "mom2", "nosuch"], ["-v", "mom2", "nosuch", "-F", "json"]])
def test_cli_json_of_named_vnodes_with_options_before_or_after_the_names(server, fixed_clock, argv):
    rc, out, err = testing.run_cli(pbsnodes.main, argv)
    assert (rc, err) == (0, "")
    assert list(json.loads(out)["nodes"]) == ["mom2", "nosuch"] and out.endswith(REAL_UNKNOWN_TAIL)


def test_cli_text_names_an_unknown_node_and_lists_the_others(server):
    rc, out, err = testing.run_cli(pbsnodes.main, ["nosuch", "mom1"])
    assert rc == 1 and err == "Node: nosuch,  Error: Unknown node \n"
    assert out.startswith("mom1\n     Mom = mom1\n")


@pytest.mark.parametrize("argv,err", [(["-a", "-F", "xml"], "usage:"),
                                      (["-a", "-F", "dsv"], "pbsnodes: -F dsv is not emulated")])
def test_other_formats_are_refused(server, argv, err):
    rc, out, text = testing.run_cli(pbsnodes.main, argv)
    assert rc == 1 and out == "" and text.startswith(err)
