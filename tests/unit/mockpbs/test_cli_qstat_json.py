"""``qstat -f -F json``: the mock prints what OpenPBS 23.06's qstat prints.

OpenPBS builds that output with libcjson (src/cmds/qstat.c ``prt_attr``,
src/lib/Libjson/cJSON/pbs_cjson.c): every value goes through ``cJSON_ParseWithOpts`` and
falls back to a string, resource attributes become nested objects, ``Variable_List`` an
object of its pieces, and ``cJSON_Print`` formats the whole. The reference tests below drive
the real libcjson (the library OpenPBS links, Debian's libcjson1) through ctypes, the way
qstat does, and compare its text with the mock's byte for byte; they are skipped only where
libcjson is not installed. The literal tests pin the same facts without the library.
"""
import ctypes
import ctypes.util
import json

import pytest

from mockpbs.cli import qstat, qsub
from mockpbs.testing import server as testing

# Values whose JSON form depends on cJSON's parser and printer, not on Python's json.
TRICKY_VALUES = [
    "21", "007", "-0", "0", "1e5", "1.5", "0.1", "1.", "1e", "1-2", "", " 12 ", "3000000000",
    "2147483647", "2147483648", "-2147483649", "1795523010624656", "1e400", "null", "true",
    "false", "nullx", "true false", "[1, 2]", '{"a": 1, "b": [true, null]}', '"quoted"',
    "tab\there", "new\nline", "\u00fcn\u00efcode", "00:00:05", "-", "+5", ".5", "12abc",
    "0x10", "\x01ctl", "\x0112", "\t12\n", "back\\slash", 'quote"d', "1 2", "job held, too many failed attempts to run",
]


# -- libcjson, driven as qstat drives it --------------------------------------------------
def load_libcjson():
    path = ctypes.util.find_library("cjson")
    if path is None:
        pytest.skip("libcjson is not installed (Debian: apt-get install libcjson1)")
    lib = ctypes.CDLL(path)
    lib.cJSON_CreateObject.restype = ctypes.c_void_p
    lib.cJSON_CreateString.restype = ctypes.c_void_p
    lib.cJSON_CreateString.argtypes = [ctypes.c_char_p]
    lib.cJSON_CreateNumber.restype = ctypes.c_void_p
    lib.cJSON_CreateNumber.argtypes = [ctypes.c_double]
    lib.cJSON_ParseWithOpts.restype = ctypes.c_void_p
    lib.cJSON_ParseWithOpts.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int]
    lib.cJSON_AddItemToObject.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    lib.cJSON_Print.restype = ctypes.c_void_p
    lib.cJSON_Print.argtypes = [ctypes.c_void_p]
    lib.cJSON_free.argtypes = [ctypes.c_void_p]
    lib.cJSON_Delete.argtypes = [ctypes.c_void_p]
    return lib


class CJsonQstat(object):
    """qstat.c's JSON output built with the real libcjson."""

    def __init__(self, lib):
        self.lib = lib

    def add(self, parent, key, item):
        self.lib.cJSON_AddItemToObject(parent, key.encode(), item)

    def insert_parsed(self, parent, key, value):
        """pbs_json_insert_parsed(parent, key, value, 0)."""
        item = self.lib.cJSON_ParseWithOpts(value.encode(), None, 1)
        if not item:
            item = self.lib.cJSON_CreateString(value.encode())
        self.add(parent, key, item)

    @staticmethod
    def variable_list_pieces(value):
        """prt_attr's loop over Variable_List: a piece runs to the next comma not escaped
        by a backslash (which is dropped) and splits at its first '='; a piece starts only
        where a character is left."""
        pieces, index = [], 0
        while index < len(value):
            key, val = [], None
            while index < len(value) and value[index] != ",":
                if value[index] == "\\" and value[index + 1:index + 2] == ",":
                    index += 1
                elif val is None and value[index] == "=":
                    val = []
                    index += 1
                    continue
                (key if val is None else val).append(value[index])
                index += 1
            pieces.append(("".join(key), "".join(val or [])))
            index += 1
        return pieces

    def document(self, timestamp, version, server, section, objects):
        lib = self.lib
        root = lib.cJSON_CreateObject()
        self.add(root, "timestamp", lib.cJSON_CreateNumber(timestamp))
        self.add(root, "pbs_version", lib.cJSON_CreateString(version.encode()))
        self.add(root, "pbs_server", lib.cJSON_CreateString(server.encode()))
        if objects:
            members = lib.cJSON_CreateObject()
            self.add(root, section, members)
            for name, triples in objects:
                self.add_object(members, name, triples)
        printed = lib.cJSON_Print(root)
        try:
            return ctypes.string_at(printed).decode() + "\n"
        finally:
            lib.cJSON_free(printed)
            lib.cJSON_Delete(root)

    def add_object(self, members, name, triples):
        lib = self.lib
        obj = lib.cJSON_CreateObject()
        self.add(members, name, obj)
        resources, resources_of = None, None
        for attribute, resource, value in triples:
            if resource:
                if resources_of != attribute:
                    resources, resources_of = lib.cJSON_CreateObject(), attribute
                    self.add(obj, attribute, resources)
                self.insert_parsed(resources, resource, value)
                continue
            resources_of = None
            if attribute == "Variable_List":
                variables = lib.cJSON_CreateObject()
                self.add(obj, attribute, variables)
                for key, val in self.variable_list_pieces(value):
                    self.insert_parsed(variables, key, val)
            elif attribute in ("Job_Name", "project", "Account_Name"):
                self.add(obj, attribute, lib.cJSON_CreateString(value.encode()))
            else:
                self.insert_parsed(obj, attribute, value)


@pytest.fixture
def fixed_clock(monkeypatch):
    monkeypatch.setattr(qstat.time, "time", lambda: 1795522891.7)
    monkeypatch.setattr(qstat.common, "server_name", lambda: "vm")
    return 1795522891


def submit(argv):
    rc, out, err = testing.run_cli(qsub.main, argv)
    assert rc == 0, err
    return out.strip()


def test_tricky_values_are_what_libcjson_makes_of_them(fixed_clock):
    cjson = CJsonQstat(load_libcjson())
    triples = [("a%d" % i, None, value) for i, value in enumerate(TRICKY_VALUES)]
    triples += [("Resource_List", "r%d" % i, value) for i, value in enumerate(TRICKY_VALUES)]
    triples += [("Job_Name", None, "007"), ("project", None, "true"), ("Account_Name", None, "1")]
    triples += [("Variable_List", None, "A=1,B=b\\,c,C=,D=x=y,E=007,F=back\\slash")]
    objects = [("1.vm", triples), ("2.vm", [("comment", None, "")])]
    expected = cjson.document(fixed_clock, "23.06.06", "vm", "Jobs", objects)
    assert qstat.json_document("Jobs", objects) == expected


def test_listing_of_real_jobs_matches_libcjson(server, fixed_clock):
    cjson = CJsonQstat(load_libcjson())
    submit(["-J", "1-3", "-N", "007", "--", "/bin/true"])
    submit(["-v", "LIST=a\\,b,N=12", "-l", "select=2:ncpus=1:mem=1gb", "--", "/bin/sleep", "5"])
    rc, out, err = testing.run_cli(qstat.main, ["-f", "-F", "json", "-t"])
    assert rc == 0 and err == ""
    jobs = qstat.common.call("stat_jobs", ids=None, history=False, subjobs=True, arrays_only=False)["jobs"]
    objects = [(job["id"], qstat.job_attributes(job)) for job in jobs]
    assert len(objects) == 5
    assert out == cjson.document(fixed_clock, "23.06.06", "vm", "Jobs", objects)


def test_server_listing_matches_libcjson(server, fixed_clock):
    cjson = CJsonQstat(load_libcjson())
    rc, out, _unused = testing.run_cli(qstat.main, ["-B", "-f", "-F", "json"])
    reply = qstat.common.call("stat_server")
    assert rc == 0
    assert out == cjson.document(fixed_clock, "23.06.06", "vm", "Server",
                                 [(reply["name"], qstat.server_attributes(reply))])


# -- the same facts, without the library -------------------------------------------------------
def test_document_shape_with_a_held_array(server, fixed_clock):
    array = submit(["-J", "1-2", "-N", "007", "--", "/bin/true"])
    with server.core.lock:  # what the server does after the 21st failed start of subjob 1
        server.core.state.jobs[array.replace("[]", "[1]")].update(run_count="21", Hold_Types="s", job_state="H")
    rc, out, _unused = testing.run_cli(qstat.main, ["-f", "-t", "-F", "json"])
    assert rc == 0
    assert out.startswith('{\n\t"timestamp":\t1795522891,\n\t"pbs_version":\t"23.06.06",\n'
                          '\t"pbs_server":\t"vm",\n\t"Jobs":\t{\n\t\t"%s":\t{\n\t\t\t"Job_Name":\t"007",\n'
                          % array)
    assert out.endswith("\n\t\t}\n\t}\n}\n")
    document = json.loads(out)
    assert list(document) == ["timestamp", "pbs_version", "pbs_server", "Jobs"]
    parent, held, queued = [document["Jobs"][i] for i in (array, array.replace("[]", "[1]"),
                                                          array.replace("[]", "[2]"))]
    assert parent["array"] == "True" and parent["Hold_Types"] == "n"
    assert parent["Resource_List"] == {"ncpus": 1, "nodect": 1, "place": "pack", "select": "1:ncpus=1"}
    assert held["run_count"] == 21 and held["Hold_Types"] == "s" and held["array_index"] == 1
    assert held["array_id"] == array and "Hold_Types" not in queued
    assert parent["Variable_List"]["PBS_O_QUEUE"] == "workq"


@pytest.mark.parametrize("text,printed", [
    ("21", "21"), ("007", "7"), ("-0", "-0"), ("1e5", "100000"), ("0.1", "0.1"), ("1.", "1"),
    ("1e", '"1e"'), ("1-2", '"1-2"'), ("", '""'), (" 12 ", "12"), ("3000000000", "3000000000"),
    ("1795523010624656", "1795523010624656"), ("1e400", "null"), ("true", "true"),
    ("null", "null"), ("nullx", '"nullx"'), ("+5", '"+5"'), (".5", '".5"'), ("0x10", '"0x10"'),
    ("\x01ctl", '"\\u0001ctl"'), ("\x0112", "12"), ("00:00:05", '"00:00:05"'), ("[1, 2]", "[1, 2]"),
])
def test_value_text_is_parsed_as_cjson_does(text, printed):
    assert qstat.cjson_print(qstat.json_parsed(text)) == printed


def test_variable_list_splits_at_unescaped_commas():
    assert qstat.variable_list_object("A=1,B=b\\,c,C=,D=x=y") == {"A": 1, "B": "b,c", "C": "", "D": "x=y"}


def test_no_jobs_means_no_jobs_member(server, fixed_clock):
    assert testing.run_cli(qstat.main, ["-f", "-F", "json"]) == (
        0, '{\n\t"timestamp":\t1795522891,\n\t"pbs_version":\t"23.06.06",\n\t"pbs_server":\t"vm"\n}\n', "")


def test_only_the_first_listed_operand_reaches_the_jobs_object(server, fixed_clock):
    first = submit(["--", "/bin/true"])
    second = submit(["--", "/bin/true"])
    rc, out, err = testing.run_cli(qstat.main, ["-f", "-F", "json", "99.vm", first, second])
    assert rc == 153 and err == "qstat: Unknown Job Id 99.vm\n"
    assert list(json.loads(out)["Jobs"]) == [first]


@pytest.mark.parametrize("argv,first_line", [
    (["-F", "json"], "qstat: conflicting options."),
    (["-f", "-n", "-F", "json"], "qstat: conflicting options."),
    (["-f", "-F", "xml"], "usage: "),
    (["-f", "-F", "dsv"], "qstat: -F dsv is not emulated by the mock PBS"),
])
def test_bad_format_options_are_refused(server, argv, first_line):
    rc, out, err = testing.run_cli(qstat.main, argv)
    assert (rc, out) == (2, "") and err.splitlines()[0] == first_line
    if "usage" in err:
        assert "qstat -B [-f] [-F format] [-D delim] [ server_name... ]" in err
