"""The machine a process runs on, as results.json names it (host name and IP address).

A model evaluated on a Ray worker names its node in its runtimes; the run, which times every model here, names
this machine beside it (:meth:`Executor.node`). Ray is asked first, since on a cluster it knows the address the
other nodes reach; it is not imported unless it is installed and asked.
"""

from __future__ import annotations

import socket


def node_info() -> dict[str, str]:
    """This machine as results.json names it: host name and IP address."""
    host = socket.gethostname()
    try:
        import ray.util

        ip = ray.util.get_node_ip_address()
    except Exception:  # Ray absent or not started: the resolver's answer
        try:
            ip = socket.gethostbyname(host)
        except OSError:
            ip = "unknown"
    return {"hostname": host, "ip": ip}
