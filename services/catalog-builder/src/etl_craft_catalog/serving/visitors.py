"""Who is asking: the visitor address, trusting X-Forwarded-For only from configured proxies.

A direct client could write any X-Forwarded-For, so the header counts only when the peer is
one of the trusted proxies; then the visitor is the rightmost address that is not a trusted
proxy itself (each proxy appends the address it received the request from).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(ranges: Sequence[str]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in ranges)


def parse_address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def visitor_address(
    peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[Network]
) -> Address | None:
    """``forwarded_for``: every X-Forwarded-For header value, in order."""
    address = parse_address(peer) if peer else None
    if address is None or not _within(address, trusted):
        return address
    hops = [hop for value in forwarded_for for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops):
        found = parse_address(hop)
        if found is None:
            return address  # a garbled header: the proxy is all that is known
        if not _within(found, trusted):
            return found
        address = found
    return address


def is_allowed(visitor: Address | None, allowed: Sequence[Network]) -> bool:
    if not allowed:
        return True
    return visitor is not None and _within(visitor, allowed)


def _within(address: Address, ranges: Sequence[Network]) -> bool:
    return any(address.version == network.version and address in network for network in ranges)
