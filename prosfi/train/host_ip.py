"""`python -m prosfi.train.host_ip [PEER]`: this node's IPv4 address, for `VLLM_HOST_IP`.

TRL's vLLM client sends the server the address its weight-sync group listens on, and takes it from vLLM's
`get_ip()`: `VLLM_HOST_IP` when set, else the interface of the route to a public address, else `0.0.0.0`
(with a warning). On a cluster node without a default route that is 0.0.0.0, and a vLLM server on another
node cannot reach it: the first weight push hangs. The launchers set `VLLM_HOST_IP` on each trainer node from
this: the address of the interface on the route to PEER (the vLLM node; a UDP socket's `connect` picks the
route without sending anything), else the address the node's own name resolves to, else any non-loopback
address of its interfaces. Exit 1 with one line when there is none.
"""

from __future__ import annotations

import ipaddress
import socket
import sys


def _route_to(peer: str) -> str | None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((peer, 9))  # no packet: connect on UDP only chooses the route and the local address
            return s.getsockname()[0]
    except OSError:
        return None


def _by_name() -> list[str]:
    try:
        return [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    except OSError:
        return []


def _usable(address: str | None, loopback_ok: bool) -> bool:
    if not address:
        return False
    ip = ipaddress.ip_address(address)
    return not ip.is_unspecified and (loopback_ok or not ip.is_loopback)


def host_ip(peer: str | None = None) -> str | None:
    """This node's address as seen from `peer` (loopback when `peer` is this node), else its own address."""
    if peer:
        routed = _route_to(peer)
        if _usable(routed, loopback_ok=True):
            return routed
    for address in [*_by_name(), _route_to("10.255.255.255")]:  # a private address: no route needed to exist
        if _usable(address, loopback_ok=False):
            return address
    return None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    address = host_ip(argv[0] if argv else None)
    if address is None:
        print(f"prosfi: error: no IPv4 address of {socket.gethostname()} found for VLLM_HOST_IP; set it to the address "
              "the vLLM server reaches this node at", file=sys.stderr)
        return 1
    print(address)
    return 0


if __name__ == "__main__":
    sys.exit(main())
