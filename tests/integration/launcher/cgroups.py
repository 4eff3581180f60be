"""Per-node resources: the cpuset/memory cgroups of the mom nodes (cgroup v1, one
``hpcpbs_<id>`` cgroup per cluster holding one per mom), their CPU plan, and the vnode
definition that tells ``pbs_mom`` how many CPUs its node has (see the package docstring)."""
import errno
import hashlib
import os
import signal

from .common import CGROUP_CONTROLLERS, STOP_TIMEOUT, ClusterError, log
from .procs import signal_all, wait_until


def cgroup_v1_mounts(mounts_file="/proc/self/mounts"):
    """``{controller: mount point}`` of the host's cgroup v1 hierarchies for
    CGROUP_CONTROLLERS (a controller without a v1 mount is absent)."""
    found = {}
    with open(mounts_file) as handle:
        for line in handle:
            fields = line.split()
            if len(fields) < 4 or fields[2] != "cgroup":
                continue
            options = fields[3].split(",")
            for controller in CGROUP_CONTROLLERS:
                if controller in options and controller not in found:
                    found[controller] = fields[1].replace("\\040", " ")
    return found


def cluster_cgroup_name(workdir):
    """``hpcpbs_<10 hex digits of sha1(workdir path)>``: the cgroup holding the nodes'."""
    return "hpcpbs_" + hashlib.sha1(workdir.root.encode()).hexdigest()[:10]


def parse_cpu_list(text):
    """``"0-2,5"`` -> ``[0, 1, 2, 5]``; ``""`` -> ``[]``."""
    cpus = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, _unused, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return sorted(cpus)


def format_cpu_list(cpus):
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``."""
    ranges, cpus = [], sorted(cpus)
    for cpu in cpus:
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in ranges)


def plan_node_cpus(allowed, moms):
    """``({mom: [cpu, ...]}, shared)``: disjoint equal shares of ``allowed`` (CPU numbers)
    when there is at least one per mom (``shared`` False), else all of them for every mom."""
    if len(allowed) >= len(moms):
        share = len(allowed) // len(moms)
        return {mom: allowed[i * share:(i + 1) * share] for i, mom in enumerate(moms)}, False
    return {mom: list(allowed) for mom in moms}, True


def read_text(path):
    """Content of ``path``, stripped."""
    with open(path) as handle:
        return handle.read().strip()


def write_value(path, value):
    """Write ``str(value)`` to a cgroup control file ``path``."""
    with open(path, "w") as handle:
        handle.write(str(value))


def _host_cpus(cpuset_root):
    """The CPUs of the host's root cpuset (effective ones when the kernel says)."""
    effective = os.path.join(cpuset_root, "cpuset.effective_cpus")
    return parse_cpu_list(read_text(effective if os.path.exists(effective)
                                    else os.path.join(cpuset_root, "cpuset.cpus")))


def setup_cgroups(workdir, moms, mode):
    """Create the per-node cgroups (see the package docstring); ``mode`` auto/on/off.

    Returns None (no cgroups) or ``{"name": cgroup name, "mounts": {controller: host
    mount}, "cpus": {mom: [cpus]}, "shared": bool}``; raises ClusterError when ``mode`` is
    ``on`` and the host has no writable cpuset + memory v1 hierarchy, or a write fails."""
    if mode == "off":
        return None
    mounts = cgroup_v1_mounts()
    missing = [c for c in CGROUP_CONTROLLERS if c not in mounts or not os.access(mounts[c], os.W_OK)]
    if missing:
        message = "no writable cgroup v1 hierarchy for %s" % ", ".join(missing)
        if mode == "on":
            raise ClusterError(message + " (--cgroups on)")
        log(message + ": nodes get no cgroups of their own")
        return None
    name = cluster_cgroup_name(workdir)
    cpuset_root = mounts["cpuset"]
    allowed = _host_cpus(cpuset_root)
    mems = read_text(os.path.join(cpuset_root, "cpuset.mems"))
    plan, shared = plan_node_cpus(allowed, moms)
    try:
        for controller in CGROUP_CONTROLLERS:
            top = os.path.join(mounts[controller], name)
            os.makedirs(top, exist_ok=True)
            if controller == "cpuset":
                write_value(os.path.join(top, "cpuset.cpus"), format_cpu_list(allowed))
                write_value(os.path.join(top, "cpuset.mems"), mems)
            for mom in moms:
                directory = os.path.join(top, mom)
                os.makedirs(directory, exist_ok=True)
                if controller == "cpuset":
                    write_value(os.path.join(directory, "cpuset.cpus"), format_cpu_list(plan[mom]))
                    write_value(os.path.join(directory, "cpuset.mems"), mems)
    except OSError as exc:
        raise ClusterError("cannot set up cgroups under %s: %s" % (name, exc))
    if shared:
        log("%d CPU(s) for %d moms: every mom's cpuset holds CPUs %s (shared)"
            % (len(allowed), len(moms), format_cpu_list(allowed)))
    return {"name": name, "mounts": mounts, "cpus": plan, "shared": shared}


def cgroup_tree_pids(directory):
    """PIDs in the cgroup ``directory`` and every cgroup below it."""
    pids = set()
    for sub, _dirs, _files in os.walk(directory):
        try:
            with open(os.path.join(sub, "cgroup.procs")) as handle:
                pids.update(int(p) for p in handle.read().split())
        except (OSError, ValueError):
            continue
    return pids


def remove_cgroups(workdir, quiet=False):
    """Remove this workdir's ``hpcpbs_<id>`` cgroups from every controller: SIGKILL what
    is left inside (only node processes can be there), then rmdir deepest first.  Raises
    ClusterError if one cannot be removed."""
    name = cluster_cgroup_name(workdir)
    try:
        mounts = cgroup_v1_mounts()
    except OSError:
        return
    for _controller, mount_point in sorted(mounts.items()):
        top = os.path.join(mount_point, name)
        if os.path.isdir(top):
            _remove_cgroup_tree(top, quiet)


def _remove_cgroup_tree(top, quiet):
    """SIGKILL every process in cgroup ``top`` (and below), then rmdir it deepest first;
    ClusterError if a cgroup stays busy for STOP_TIMEOUT seconds."""
    left = cgroup_tree_pids(top)
    signal_all(left, signal.SIGKILL)
    if left and not quiet:
        log("killed %d process(es) left in %s" % (len(left), top))
    wait_until(lambda: not cgroup_tree_pids(top), STOP_TIMEOUT)
    for sub, _dirs, _files in sorted(os.walk(top), key=lambda entry: -entry[0].count("/")):
        if not wait_until(lambda path=sub: _rmdir_cgroup(path), STOP_TIMEOUT):
            raise ClusterError("cgroup %s still busy (tasks: %s)" % (sub, sorted(cgroup_tree_pids(sub))))


def _rmdir_cgroup(path):
    """rmdir cgroup ``path``: True when gone, False while busy; ClusterError otherwise."""
    try:
        os.rmdir(path)
        return True
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise ClusterError("cannot remove cgroup %s: %s" % (path, exc))
        return False


def vnode_definition(mom, ncpus, vnodes_per_mom, vnode_mem):
    """Text of ``mom_priv/config.d/hpcpbs_vnodes`` for ``mom`` (None when nothing to say):
    ``ncpus`` (the CPUs of its cpuset, or None) as the natural vnode's static ncpus, or
    with ``vnodes_per_mom`` K > 0 the vnodes ``mom[0..K-1]`` sharing ``ncpus`` and each
    having ``vnode_mem``, the natural vnode having none.  Raises ClusterError when K > ncpus."""
    if not vnodes_per_mom:
        if ncpus is None:
            return None
        return "$configversion 2\n%s: resources_available.ncpus = %d\n" % (mom, ncpus)
    ncpus = ncpus if ncpus is not None else (os.cpu_count() or 1)
    if vnodes_per_mom > ncpus:
        raise ClusterError("--vnodes-per-mom %d: %s has only %d CPU(s)" % (vnodes_per_mom, mom, ncpus))
    lines = ["$configversion 2", "%s: resources_available.ncpus = 0" % mom, "%s: resources_available.mem = 0" % mom]
    for index in range(vnodes_per_mom):
        share = ncpus // vnodes_per_mom + (1 if index < ncpus % vnodes_per_mom else 0)
        lines += ["%s[%d]: resources_available.ncpus = %d" % (mom, index, share),
                  "%s[%d]: resources_available.mem = %s" % (mom, index, vnode_mem)]
    return "\n".join(lines) + "\n"
