"""Inter-mom requests of a job's mom (the IM port): one request, one per host in
parallel with a deadline, or fire and forget. ``mom`` provides ``address_of(host)``."""
import threading
import time

from mockpbs import wire


def im_request(mom, host, message, timeout):
    """Send ``message`` to the mom of ``host``; returns its reply dict. Raises
    :class:`mockpbs.wire.WireError` when it cannot be reached or does not answer within
    ``timeout`` seconds."""
    return wire.request(mom.address_of(host), wire.IM_PORT, message, timeout=timeout)


def parallel(mom, hosts, make_message, wait_seconds, replies=None, socket_timeout=None):
    """Send one IM request per host in parallel; wait at most ``wait_seconds``.
    Returns {host: reply dict, or None when it did not answer in time}. ``replies``
    (a dict) keeps receiving answers that arrive later, up to ``socket_timeout``
    seconds (default ``wait_seconds``)."""
    replies = {} if replies is None else replies
    threads = []

    def worker(host):
        try:
            replies[host] = im_request(mom, host, make_message(host), socket_timeout or wait_seconds)
        except wire.WireError as exc:
            replies[host] = {"ok": False, "code": 15010, "error": str(exc), "unreachable": True}

    for host in hosts:
        thread = threading.Thread(target=worker, args=(host,), daemon=True)
        thread.start()
        threads.append(thread)
    deadline = time.monotonic() + wait_seconds
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    out = {}
    for host in hosts:
        reply = replies.get(host)
        if reply is not None and reply.get("unreachable") and "timed out" in reply.get("error", ""):
            reply = None
        out[host] = reply
    return out


def fire_and_forget(mom, hosts, make_message):
    for host in hosts:
        def send(target=host):
            try:
                im_request(mom, target, make_message(target), 10)
            except wire.WireError:
                pass
        threading.Thread(target=send, daemon=True).start()
