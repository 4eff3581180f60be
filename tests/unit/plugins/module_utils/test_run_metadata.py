"""run_metadata: what a report says about its run (times, user, controller, versions,
inventory, check mode), and the filter hpc.pbs.run_metadata that gives it to the playbooks."""
import getpass
import json
import re
import socket

from ansible_collections.hpc.pbs.plugins.filter.run_metadata import COLLECTION_ROOT, FilterModule
from ansible_collections.hpc.pbs.plugins.module_utils.cluster import run_metadata as rm

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def test_metadata_of_a_run(tmp_path):
    (tmp_path / "galaxy.yml").write_text("namespace: hpc\nname: pbs\nversion: 1.2.3  # this release\n")
    meta = rm.run_metadata("2026-01-02T03:04:05Z", True, "/etc/ansible/hosts", "2.19.14", str(tmp_path))
    assert set(meta) == {"started", "ended", "user", "controller_host", "collection_version",
                         "ansible_core_version", "inventory", "check_mode"}
    assert meta["started"] == "2026-01-02T03:04:05Z" and ISO_UTC.match(meta["ended"]), meta
    assert meta["user"] == getpass.getuser()
    assert meta["controller_host"] in (socket.getfqdn(), socket.gethostname())
    assert meta["collection_version"] == "1.2.3"
    assert meta["ansible_core_version"] == "2.19.14"
    assert meta["inventory"] == ["/etc/ansible/hosts"] and meta["check_mode"] is True
    json.dumps(meta)


def test_installed_collection_version_comes_from_its_manifest(tmp_path):
    (tmp_path / "MANIFEST.json").write_text(json.dumps({"collection_info": {"version": "4.5.6"}}))
    (tmp_path / "galaxy.yml").write_text("version: 1.0.0\n")
    assert rm.collection_version(str(tmp_path)) == "4.5.6"
    (tmp_path / "MANIFEST.json").write_text("not json")
    assert rm.collection_version(str(tmp_path)) == "1.0.0"
    assert rm.collection_version(str(tmp_path / "nowhere")) == "unknown"


def test_missing_start_and_inventory_are_said_so(tmp_path):
    meta = rm.run_metadata(None, False, None, None, str(tmp_path), ended="2026-01-02T03:04:06Z")
    assert meta["started"] == "unknown" and meta["ended"] == "2026-01-02T03:04:06Z"
    assert meta["inventory"] == [] and meta["check_mode"] is False and meta["ansible_core_version"] == "unknown"


def test_filter_reads_this_collection():
    meta = FilterModule().filters()["run_metadata"]("2026-01-02T03:04:05Z", False, ["inv.ini"], "2.19.14")
    with open(COLLECTION_ROOT + "/galaxy.yml") as handle:
        version = re.search(r"^version:\s*(\S+)", handle.read(), re.M).group(1)
    assert meta["collection_version"] == version and meta["inventory"] == ["inv.ini"]
