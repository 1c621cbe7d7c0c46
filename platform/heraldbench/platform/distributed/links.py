"""Ranks on shaped links: each rank in its own network namespace, joined through veth pairs
shaped with ``tc`` (tbf for the rate, netem for the latency), so that a local launch runs where
communication costs what a cluster's network charges.

The topology (every name carries the launcher's pid, so concurrent launches never meet):

* a *switch* namespace ``hb-<pid>-sw`` holds one Linux bridge per host (``br<h>``; without
  tiers, one bridge ``br0`` that every rank's link reaches);
* rank ``r`` lives in ``hb-<pid>-r<r>``: one veth (``hb0`` there, address ``10.213.0.<r+1>``)
  whose other end is a port of its host's bridge;
* with one host per rank (no tiers) every rank's veth is shaped with ``between``; with
  ``ranks_per_host`` > 1, rank veths are shaped with ``inside`` and each host bridge reaches a
  ``core`` bridge through an uplink veth shaped with ``between``: the ranks of a host share
  their host's uplink, as they would share its NIC.

Both ends of each veth are shaped (a full-duplex link: the rate holds in each direction). A
link's latency is the one-way delay it adds, half on each end's egress, so a message from one
rank to another sees ``inside.latency`` inside a host and ``inside.latency + between.latency``
between hosts.

What a shaped veth does not model: NIC offloads and their CPU savings (veth segments in
software; every byte is still copied by this machine's cores), RDMA (transfers here go through
the kernel's TCP stack), switches (the bridges forward instantly, with no buffer limits or
congestion between flows beyond each link's own queue), packet loss, and CPU: all ranks still
share this machine's cores, so compute and protocol overhead are as slow as they are here.

The addresses exist only inside the namespaces created; :func:`shaped_network` removes every
namespace (and with them every veth and qdisc) when it exits, also when a rank died, and first
sweeps namespaces left by launchers that no longer run. Needs root, ``ip`` and ``tc``;
:func:`check_links_possible` refuses clearly otherwise.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from heraldbench.platform.exceptions import LinksUnavailableError, SpecError
from heraldbench.platform.units import parse_duration, parse_rate

__all__ = ["Link", "Links", "ShapedNetwork", "check_links_possible", "leftover_namespaces",
           "parse_link", "shaped_network"]  # fmt: skip

PREFIX = "hb-"
#: The interface each rank sees, in every namespace (gloo is told to use it).
RANK_INTERFACE = "hb0"
SUBNET = "10.213.0"
MASTER_PORT = 29500
#: An Ethernet frame at the veth's MTU of 1500, with its header.
FRAME_BYTES = 1514
_CLONE_NEWNET = 0x40000000
NO_NETEM = ("; a link latency needs the kernel's netem qdisc (sch_netem), which this kernel "
            "lacks: give the link's rate only")
_NAMESPACE_NAME = re.compile(rf"^{PREFIX}(\d+)-")


@dataclass(frozen=True)
class Link:
    """One link's shape: its rate (bits/s, each direction) and the one-way latency it adds (s)."""

    rate_bit_s: float
    latency_s: float = 0.0

    def __post_init__(self) -> None:
        if not 1e5 <= self.rate_bit_s <= 1e12:
            raise SpecError(f"a link rate must be 100kbit to 1tbit, got {self.rate_bit_s!r} bit/s")
        if not 0 <= self.latency_s <= 10:
            raise SpecError(f"a link latency must be 0 to 10 s, got {self.latency_s!r} s")

    def describe(self) -> str:
        latency = f", {self.latency_s * 1e3:g} ms" if self.latency_s else ""
        return f"{self.rate_bit_s / 1e6:g} Mbit/s{latency}"


def parse_link(text: str) -> Link:
    """``RATE[,LATENCY]`` as on the command line: ``"200mbit"``, ``"1gbit,0.5ms"``."""
    rate, _, latency = text.partition(",")
    try:
        return Link(parse_rate(rate.strip()), parse_duration(latency.strip()) if latency else 0.0)
    except ValueError as exc:
        raise SpecError(f"--link {text!r}: {exc}") from None


@dataclass(frozen=True)
class Links:
    """Shaped links for a launch: ``between`` hosts, and ``inside`` a host of ``ranks_per_host``
    ranks (1: every rank is a host of its own and ``inside`` is unused)."""

    between: Link
    ranks_per_host: int = 1
    inside: Link | None = None

    def __post_init__(self) -> None:
        if self.ranks_per_host < 1:
            raise SpecError(f"ranks_per_host must be at least 1, got {self.ranks_per_host!r}")
        if self.ranks_per_host > 1 and self.inside is None:
            raise SpecError(f"ranks_per_host={self.ranks_per_host} needs the inside link's shape")

    @classmethod
    def from_spec(cls, section) -> Links | None:
        """From a spec's ``train.distributed.links`` section (None: loopback)."""
        if section is None:
            return None
        inside = None if section.inside is None else Link(section.inside.rate_bit_s,
                                                          section.inside.latency_s)  # fmt: skip
        return cls(Link(section.rate_bit_s, section.latency_s), section.ranks_per_host, inside)

    def hosts(self, world: int) -> int:
        if world % self.ranks_per_host:
            raise SpecError(f"{world} ranks do not split into hosts of {self.ranks_per_host}")
        return world // self.ranks_per_host

    def describe(self) -> str:
        if self.ranks_per_host == 1:
            return f"every rank: {self.between.describe()}"
        return (f"hosts of {self.ranks_per_host} ranks: {self.inside.describe()} inside, "  # type: ignore[union-attr]
                f"{self.between.describe()} between")  # fmt: skip


def check_links_possible(euid: Callable[[], int] = os.geteuid,
                         which: Callable[[str], str | None] = shutil.which) -> None:  # fmt: skip
    """Refuse shaped links where they cannot be made: not root, or no ``ip``/``tc``."""
    missing = [tool for tool in ("ip", "tc") if which(tool) is None]
    if missing:
        raise LinksUnavailableError(f"shaped links need the {' and '.join(missing)} command(s) "
                                    "(iproute2); run without links, or install iproute2")  # fmt: skip
    if euid() != 0:
        raise LinksUnavailableError("shaped links need root (network namespaces, veth pairs and tc "
                                    "qdiscs); run as root, or without links")  # fmt: skip


def _ip(*args: str) -> None:
    _run(["ip", *args])


def _run(command: list[str], hint: str = "") -> None:
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise LinksUnavailableError(f"shaped links: `{' '.join(command)}` failed: "
                                    f"{done.stderr.strip() or done.returncode}{hint}")  # fmt: skip


def _shape(namespace: str, device: str, link: Link) -> None:
    """Egress of ``device``: netem for half the link's latency (the other half is on the far
    end), if it adds any, then tbf for the rate. The bucket holds 1 ms at the rate, at least four
    full frames (a NIC sends at line rate and saves no credit while idle, so the burst a round
    gets for free is kept small); tbf cuts larger GSO packets into frames. Its queue holds 0.5 s
    at the rate, so that TCP sees queueing, not drops."""
    rate_bytes = link.rate_bit_s / 8
    burst = max(int(rate_bytes * 1e-3), 4 * FRAME_BYTES)
    limit = max(int(rate_bytes * 0.5), 64 * FRAME_BYTES)
    tc = ["tc", "-n", namespace, "qdisc", "add", "dev", device]
    parent = ["root"]
    if link.latency_s > 0:
        delay = f"{max(int(link.latency_s * 1e6 / 2), 1)}us"
        _run([*tc, "root", "handle", "1:", "netem", "delay", delay, "limit", "100000"],
             hint=NO_NETEM)  # fmt: skip
        parent = ["parent", "1:1"]
    _run([*tc, *parent, "handle", "10:", "tbf", "rate", f"{int(link.rate_bit_s)}bit",
          "burst", str(burst), "limit", str(limit)])  # fmt: skip


@dataclass
class ShapedNetwork:
    """The namespaces of one launch; :meth:`enter` and :meth:`environment` place a rank."""

    pid: int
    world: int
    links: Links

    def namespace(self, rank: int | None) -> str:
        return f"{PREFIX}{self.pid}-{'sw' if rank is None else f'r{rank}'}"

    def address(self, rank: int) -> str:
        return f"{SUBNET}.{rank + 1}"

    def master(self) -> str:
        """Rank 0's shaped address and a fixed port: the namespace is new, so the port is free."""
        return f"{self.address(0)}:{MASTER_PORT}"

    def build(self) -> None:
        switch = self.namespace(None)
        _ip("netns", "add", switch)
        tiers = self.links.ranks_per_host > 1
        for host in range(self.links.hosts(self.world) if tiers else 1):
            self._bridge(switch, f"br{host}")
        if tiers:
            self._bridge(switch, "core")
            for host in range(self.links.hosts(self.world)):
                self._uplink(switch, host)
        for rank in range(self.world):
            self._rank_port(switch, rank)

    def _bridge(self, switch: str, name: str) -> None:
        _ip("-n", switch, "link", "add", name, "type", "bridge")
        _ip("-n", switch, "link", "set", name, "up")

    def _uplink(self, switch: str, host: int) -> None:
        near, far = f"up{host}", f"core{host}"
        _ip("-n", switch, "link", "add", near, "type", "veth", "peer", "name", far)
        for device, bridge in ((near, f"br{host}"), (far, "core")):
            _ip("-n", switch, "link", "set", device, "master", bridge, "up")
            _shape(switch, device, self.links.between)

    def _rank_port(self, switch: str, rank: int) -> None:
        own, port = self.namespace(rank), f"p{rank}"
        link = self.links.between if self.links.ranks_per_host == 1 else self.links.inside
        _ip("netns", "add", own)
        _ip("-n", switch, "link", "add", port, "type", "veth", "peer", "name", f"r{rank}")
        _ip("-n", switch, "link", "set", f"r{rank}", "netns", own, "name", RANK_INTERFACE)
        _ip("-n", switch, "link", "set", port, "master", self._bridge_of(rank), "up")
        _ip("-n", own, "addr", "add", f"{self.address(rank)}/24", "dev", RANK_INTERFACE)
        _ip("-n", own, "link", "set", RANK_INTERFACE, "up")
        _ip("-n", own, "link", "set", "lo", "up")
        _shape(switch, port, link)  # type: ignore[arg-type]
        _shape(own, RANK_INTERFACE, link)  # type: ignore[arg-type]

    def _bridge_of(self, rank: int) -> str:
        """Its host's bridge; without tiers every rank is a host on the one bridge ``br0``."""
        return f"br{rank // self.links.ranks_per_host}" if self.links.ranks_per_host > 1 else "br0"

    def enter(self, rank: int, then: Callable[[], None] | None = None) -> Callable[[], None]:
        """A ``preexec_fn``: the child joins rank ``rank``'s namespace, then runs ``then``."""
        path = f"/var/run/netns/{self.namespace(rank)}"

        def join() -> None:  # pragma: no cover - runs in the child
            if then is not None:
                then()
            fd = os.open(path, os.O_RDONLY)
            if ctypes.CDLL(None, use_errno=True).setns(fd, _CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns {path}")
            os.close(fd)

        return join

    def environment(self) -> dict[str, str]:
        """Gloo binds to the rank's shaped interface (never to a loopback name lookup gives)."""
        return {"GLOO_SOCKET_IFNAME": RANK_INTERFACE, "TP_SOCKET_IFNAME": RANK_INTERFACE}

    def tear_down(self) -> None:
        for name in [self.namespace(r) for r in range(self.world)] + [self.namespace(None)]:
            subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)


def leftover_namespaces(pid: int | None = None) -> list[str]:
    """Namespaces of this module's launches: of ``pid``, or of every launcher."""
    done = subprocess.run(["ip", "netns", "list"], check=False, capture_output=True, text=True)
    names = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    return [n for n in names if (m := _NAMESPACE_NAME.match(n))
            and (pid is None or int(m.group(1)) == pid)]  # fmt: skip


def _sweep_orphans() -> None:
    """Remove namespaces whose launcher no longer runs (one killed before its cleanup)."""
    for name in leftover_namespaces():
        pid = int(_NAMESPACE_NAME.match(name).group(1))  # type: ignore[union-attr]
        if not os.path.exists(f"/proc/{pid}"):
            subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)


@contextmanager
def shaped_network(links: Links, world: int) -> Iterator[ShapedNetwork]:
    """Build the namespaces, veths and qdiscs of ``world`` ranks; remove them all on exit."""
    check_links_possible()
    links.hosts(world)
    _sweep_orphans()
    network = ShapedNetwork(os.getpid(), world, links)
    try:
        network.build()
        yield network
    finally:
        network.tear_down()
