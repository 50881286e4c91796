"""Transparent mode's redirect rules, as text: nftables, iptables and macOS pf (no I/O here).

Only connections to Cursor's hosts' port 443 are redirected, and never those of mitmdump itself:
it runs with a group id of its own and every rule set starts with "that group: leave alone", so
the connections it makes upstream (pass-through hosts, forwarded Cursor calls) cannot loop back
into it. Every rule lives in a table/chain named after cursor-byok and carries the owner's pid in a
comment, so rules left by a killed run are recognised and removed on the next start.
`firewall.py` runs these; tests can read them.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

# Agent and API hosts of Cursor (docs/protocol.md §2.2): the HTTP/1.1 pair is on api2;
# api3 and the api5 agent hosts carry the HTTP/2 transport, which is decrypted and passed on.
DEFAULT_REDIRECT_HOSTS = (
    "api2.cursor.sh",
    "api3.cursor.sh",
    "agent.api5.cursor.sh",
    "agentn.api5.cursor.sh",
    "agent.global.api5.cursor.sh",
    "agentn.global.api5.cursor.sh",
)
TABLE = "cursor_byok"  # nftables table (family inet)
CHAIN = "CURSOR_BYOK"  # iptables chain in the nat table
COMMENT = "cursor-byok transparent redirect"
GROUP = "cursor-byok"  # mitmdump's group, when a group of that name exists
FALLBACK_GID = 39127  # otherwise this gid: unused by distributions, excluded by the rules
PORT = 443

_OWNER = re.compile(re.escape(COMMENT) + r" pid (\d+)")


@dataclass(frozen=True)
class Redirect:
    """What to redirect: these addresses' port 443 to `port`, except sockets of group `gid`."""

    port: int
    gid: int
    v4: tuple[str, ...] = ()
    v6: tuple[str, ...] = ()
    owner_pid: int = 0

    @property
    def comment(self) -> str:
        return f"{COMMENT} pid {self.owner_pid}"


def split_addresses(addresses: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Sorted, de-duplicated IPv4 and IPv6 addresses (anything else is dropped)."""
    v4: set[str] = set()
    v6: set[str] = set()
    for text in addresses:
        try:
            address = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            continue
        (v4 if address.version == 4 else v6).add(str(address))
    return tuple(sorted(v4)), tuple(sorted(v6))


def owner_pid(listing: str) -> int | None:
    """The pid recorded in rules found in `nft list table` / `iptables-save` output."""
    match = _OWNER.search(listing)
    return int(match.group(1)) if match else None


# --- nftables ------------------------------------------------------------------------------------


def _elements(addresses: tuple[str, ...]) -> str:
    return "elements = { " + ", ".join(addresses) + " }; " if addresses else ""


def nft_install(r: Redirect) -> str:
    """One `nft -f` transaction that (re)creates the table; replaces a stale one atomically."""
    return (
        f"table inet {TABLE} {{}}\n"
        f"delete table inet {TABLE}\n"
        f"table inet {TABLE} {{\n"
        f'  comment "{r.comment}"\n'
        f"  set v4 {{ type ipv4_addr; {_elements(r.v4)}}}\n"
        f"  set v6 {{ type ipv6_addr; {_elements(r.v6)}}}\n"
        "  chain output {\n"
        "    type nat hook output priority -100; policy accept;\n"
        f"    meta skgid {r.gid} return\n"
        f"    ip daddr @v4 tcp dport {PORT} redirect to :{r.port}\n"
        f"    ip6 daddr @v6 tcp dport {PORT} redirect to :{r.port}\n"
        "  }\n"
        "}\n"
    )


def nft_add_addresses(v4: Iterable[str], v6: Iterable[str]) -> str:
    """Add newly resolved addresses to the sets (old ones stay: connections may still use them)."""
    lines = []
    for name, addresses in (("v4", tuple(v4)), ("v6", tuple(v6))):
        if addresses:
            lines.append(f"add element inet {TABLE} {name} {{ {', '.join(addresses)} }}")
    return "".join(line + "\n" for line in lines)


def nft_remove() -> str:
    return f"delete table inet {TABLE}\n"


# --- iptables ------------------------------------------------------------------------------------


def iptables_install(r: Redirect, binary: str = "iptables") -> list[list[str]]:
    """Commands creating our chain in the nat table and jumping to it from OUTPUT."""
    v6 = binary.startswith("ip6")
    addresses = r.v6 if v6 else r.v4
    tag = ["-m", "comment", "--comment", r.comment]
    exempt = ["-m", "owner", "--gid-owner", str(r.gid), "-j", "RETURN"]
    commands = [[binary, "-t", "nat", "-N", CHAIN], [binary, "-t", "nat", "-A", CHAIN, *exempt]]
    commands += iptables_add_addresses(addresses, r.port, binary)
    commands.append(
        [binary, "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "--dport", str(PORT), *tag, "-j", CHAIN]
    )
    return commands


def iptables_add_addresses(
    addresses: Iterable[str], port: int, binary: str = "iptables"
) -> list[list[str]]:
    match = ["-p", "tcp", "--dport", str(PORT)]
    target = ["-j", "REDIRECT", "--to-ports", str(port)]
    return [[binary, "-t", "nat", "-A", CHAIN, "-d", a, *match, *target] for a in addresses]


def iptables_remove(save_output: str, binary: str = "iptables") -> list[list[str]]:
    """Commands removing every jump to our chain (as `iptables-save -t nat` lists them), then it."""
    commands = []
    chain_exists = False
    for line in save_output.splitlines():
        if line.startswith(f":{CHAIN} "):
            chain_exists = True
        elif line.startswith("-A ") and line.split()[1] != CHAIN and f"-j {CHAIN}" in line:
            commands.append([binary, "-t", "nat", "-D", *shlex.split(line)[1:]])
    if chain_exists:
        commands += [[binary, "-t", "nat", "-F", CHAIN], [binary, "-t", "nat", "-X", CHAIN]]
    return commands


# --- macOS pf ------------------------------------------------------------------------------------


def pf_rules(r: Redirect) -> str:
    """An anchor for pf: route Cursor's connections to lo0 and redirect them there."""
    addresses = ", ".join(r.v4) or "api2.cursor.sh"  # pf resolves names when the rules load
    return (
        f"# pf anchor {TABLE}: load with  sudo pfctl -a {TABLE} -f FILE  and  sudo pfctl -e\n"
        f"# (remove with  sudo pfctl -a {TABLE} -F all); mitmdump runs with group {r.gid}.\n"
        f"table <{TABLE}> {{ {addresses} }}\n"
        f"rdr pass on lo0 inet proto tcp from any to <{TABLE}> port {PORT} "
        f"-> 127.0.0.1 port {r.port}\n"
        f"pass out route-to (lo0 127.0.0.1) inet proto tcp from any to <{TABLE}> port {PORT} "
        f"group != {r.gid} keep state\n"
    )


def shell_lines(commands: list[list[str]]) -> str:
    return "".join(shlex.join(command) + "\n" for command in commands)
