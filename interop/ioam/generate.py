#!/usr/bin/env python3
"""Builds the IOAM interoperability vectors in vectors.json.

Two independent implementations take part, neither written here:

- the Linux kernel's IOAM transit code (net/ipv6/ioam6.c) fills the node
  data: packets carrying an empty pre-allocated trace cross two network
  namespaces acting as IOAM transit nodes (ioam6_enabled);
- Wireshark's tshark dissects the captured packets (its IPv6 IOAM dissector,
  RFC 9197 with the RFC 9322 flags).

This script only writes the IPv6 / hop-by-hop / IOAM *header* of each probe
(the encapsulating node's part, from RFC 9486 §3 and RFC 9197 §4.4.1) and
records what the kernel wrote and what tshark read. The Rust test
cc-core/tests/interop_ioam.rs then parses the same bytes with cc-core and
compares every field with tshark's.

It also records tshark's dissection of options that cc-core's *encoder*
produced (ENCODER_CASES, bytes from `cargo run -p cc-core --example
ioam_vectors`), so the encoder is checked against tshark too.

Needs root (network namespaces), iproute2, tshark. Run from the repository:

    sudo python3 interop/ioam/generate.py
"""

import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

NS = ["ioam_snd", "ioam_r1", "ioam_r2", "ioam_rcv"]
# (trace type, what it selects)
KERNEL_CASES = [
    (0xFFF000, "all defined fixed fields (bits 0-11)"),
    (0xD00000, "hop limit + node id, ingress/egress, timestamp fraction"),
    (0x800002, "short node id + opaque state snapshot (bit 22)"),
]
NAMESPACE = 123
SCHEMA_ID = 0x777
SCHEMA_DATA = b"cc-core!"  # 8 bytes: the kernel pads to 4-byte words


def sh(*args, check=True, cwd=None):
    return subprocess.run(list(args), check=check, capture_output=True, text=True, cwd=cwd)


def netns(ns, *args, check=True):
    return sh("ip", "netns", "exec", ns, *args, check=check)


def node_words(tt):
    sizes = {23: 1, 22: 1, 21: 1, 20: 1, 19: 1, 18: 1, 17: 1, 16: 1, 15: 2, 14: 2, 13: 2, 12: 1}
    words = sum(w for bit, w in sizes.items() if tt >> bit & 1)
    words += sum(1 for bit in range(2, 12) if tt >> bit & 1)  # undefined bits 12-21
    return words


def ioam_option(tt, nodes):
    """An IOAM pre-allocated trace option with room for `nodes` nodes."""
    nl = node_words(tt)
    oss_words = (1 + (len(SCHEMA_DATA) + 3) // 4) if tt & 0x2 else 0
    free = nodes * (nl + oss_words)
    trace = struct.pack("!HHI", NAMESPACE, (nl << 11) | free, tt << 8) + b"\0" * (4 * free)
    body = b"\0" + b"\0" + trace  # reserved, IOAM option-type 0 (pre-allocated)
    return bytes([0x31, len(body)]) + body


def hop_by_hop(option, next_header=17):
    # RFC 9486 §3: the IOAM option is 4n-aligned; a PadN of two bytes puts
    # it at offset 4 of the header.
    opts = bytes([1, 0]) + option
    pad = (-(2 + len(opts))) % 8
    if pad == 1:
        opts += b"\0"
    elif pad:
        opts += bytes([1, pad - 2]) + b"\0" * (pad - 2)
    return bytes([next_header, (2 + len(opts)) // 8 - 1]) + opts


def setup():
    teardown()
    for ns in NS:
        sh("ip", "netns", "add", ns)
        netns(ns, "ip", "link", "set", "lo", "up")
    links = [("ioam_snd", "s0", "ioam_r1", "a1"), ("ioam_r1", "b1", "ioam_r2", "a2"), ("ioam_r2", "b2", "ioam_rcv", "r0")]
    for i, (n1, i1, n2, i2) in enumerate(links):
        sh("ip", "link", "add", i1, "netns", n1, "type", "veth", "peer", "name", i2, "netns", n2)
        netns(n1, "ip", "addr", "add", f"2001:db8:{i}::1/64", "dev", i1, "nodad")
        netns(n2, "ip", "addr", "add", f"2001:db8:{i}::2/64", "dev", i2, "nodad")
        netns(n1, "ip", "link", "set", i1, "up")
        netns(n2, "ip", "link", "set", i2, "up")
    netns("ioam_snd", "ip", "-6", "route", "add", "default", "via", "2001:db8:0::2")
    netns("ioam_r1", "ip", "-6", "route", "add", "default", "via", "2001:db8:1::2")
    netns("ioam_r2", "ip", "-6", "route", "add", "2001:db8:0::/64", "via", "2001:db8:1::1")
    netns("ioam_rcv", "ip", "-6", "route", "add", "default", "via", "2001:db8:2::1")
    for k, (r, ingress, egress) in enumerate([("ioam_r1", "a1", "b1"), ("ioam_r2", "a2", "b2")], start=1):
        netns(r, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
        netns(r, "sysctl", "-qw", f"net.ipv6.ioam6_id={0xA00000 + k}")
        netns(r, "sysctl", "-qw", f"net.ipv6.ioam6_id_wide={0x00BB00000000CC00 + k}")
        netns(r, "sysctl", "-qw", f"net.ipv6.conf.{ingress}.ioam6_enabled=1")
        netns(r, "sysctl", "-qw", f"net.ipv6.conf.{ingress}.ioam6_id={10 * k + 1}")
        netns(r, "sysctl", "-qw", f"net.ipv6.conf.{ingress}.ioam6_id_wide={0x10000 * k + 1}")
        netns(r, "sysctl", "-qw", f"net.ipv6.conf.{egress}.ioam6_id={10 * k + 2}")
        netns(r, "sysctl", "-qw", f"net.ipv6.conf.{egress}.ioam6_id_wide={0x10000 * k + 2}")
        netns(r, "ip", "ioam", "namespace", "add", str(NAMESPACE), "data", hex(0xDA7A0000 + k), "wide", hex(0x0123456789AB0000 + k))
        netns(r, "ip", "ioam", "schema", "add", str(SCHEMA_ID), SCHEMA_DATA.decode())
        netns(r, "ip", "ioam", "namespace", "set", str(NAMESPACE), "schema", str(SCHEMA_ID))


def teardown():
    for ns in NS:
        sh("ip", "netns", "del", ns, check=False)


def send_probe(tt, nodes):
    """Sends one UDP packet with the IOAM option from ioam_snd (raw IPv6)."""
    payload = b"cc-core ioam interop"
    hbh = hop_by_hop(ioam_option(tt, nodes))
    udp_len = 8 + len(payload)
    udp = struct.pack("!HHHH", 40000, 40001, udp_len, 0) + payload
    src = socket.inet_pton(socket.AF_INET6, "2001:db8:0::1")
    dst = socket.inet_pton(socket.AF_INET6, "2001:db8:2::2")
    pseudo = src + dst + struct.pack("!I3xB", udp_len, 17) + udp
    if len(pseudo) % 2:
        pseudo += b"\0"
    s = sum(struct.unpack(f"!{len(pseudo) // 2}H", pseudo))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    udp = udp[:6] + struct.pack("!H", (~s & 0xFFFF) or 0xFFFF) + udp[8:]
    ip6 = struct.pack("!IHBB", 6 << 28, len(hbh) + len(udp), 0, 64) + src + dst
    packet = ip6 + hbh + udp
    code = (
        "import socket,sys;"
        "s=socket.socket(socket.AF_INET6,socket.SOCK_RAW,socket.IPPROTO_RAW);"
        f"s.sendto(bytes.fromhex('{packet.hex()}'),('2001:db8:2::2',0))"
    )
    netns("ioam_snd", sys.executable, "-c", code)


def tshark_fields(pcap, fields):
    out = sh("tshark", "-r", pcap, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=;", "-E", "separator=\t", *sum((["-e", f] for f in fields), [])).stdout
    rows = []
    for line in out.strip().splitlines():
        rows.append({f: (v.split(";") if v else []) for f, v in zip(fields, line.split("\t"))})
    return rows


FIELDS = [
    "ipv6.opt.ioam.opt_type",
    "ipv6.opt.ioam.trace.ns",
    "ipv6.opt.ioam.trace.nodelen",
    "ipv6.opt.ioam.trace.flag.o",
    "ipv6.opt.ioam.trace.flag.l",
    "ipv6.opt.ioam.trace.flag.a",
    "ipv6.opt.ioam.trace.remlen",
    "ipv6.opt.ioam.trace.type",
    "ipv6.opt.ioam.trace.node.hlim",
    "ipv6.opt.ioam.trace.node.id",
    "ipv6.opt.ioam.trace.node.iif",
    "ipv6.opt.ioam.trace.node.eif",
    "ipv6.opt.ioam.trace.node.tss",
    "ipv6.opt.ioam.trace.node.tsf",
    "ipv6.opt.ioam.trace.node.trdelay",
    "ipv6.opt.ioam.trace.node.nsdata",
    "ipv6.opt.ioam.trace.node.qdepth",
    "ipv6.opt.ioam.trace.node.csum",
    "ipv6.opt.ioam.trace.node.id_wide",
    "ipv6.opt.ioam.trace.node.iif_wide",
    "ipv6.opt.ioam.trace.node.eif_wide",
    "ipv6.opt.ioam.trace.node.nsdata_wide",
    "ipv6.opt.ioam.trace.node.bufoccup",
    "ipv6.opt.ioam.trace.node.oss.len",
    "ipv6.opt.ioam.trace.node.oss.scid",
    "ipv6.opt.ioam.trace.node.oss.data",
]


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic != 0xA1B2C3D4:
        raise SystemExit("expected a little-endian microsecond pcap")
    linktype = struct.unpack("<I", data[20:24])[0]
    at, packets = 24, []
    while at < len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[at:at + 16])
        frame = data[at + 16:at + 16 + incl]
        at += 16 + incl
        packets.append(frame[14:] if linktype == 1 else frame)
    return packets


def capture(sends):
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "cap.pcap")
        cap = subprocess.Popen(
            ["ip", "netns", "exec", "ioam_rcv", "dumpcap", "-q", "-i", "r0", "-f", "ip6 and ip6[6] == 0 and ip6[40] == 17", "-P", "-w", pcap, "-c", str(len(sends))],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.5)
        for tt, nodes in sends:
            send_probe(tt, nodes)
            time.sleep(0.2)
        cap.wait(timeout=20)
        return read_pcap(pcap), tshark_fields(pcap, FIELDS)


def dissect(packets):
    """tshark's dissection of packets written to a fresh pcap (raw IPv6)."""
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "enc.pcap")
        with open(pcap, "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101))  # LINKTYPE_RAW
            for p in packets:
                f.write(struct.pack("<IIII", 0, 0, len(p), len(p)) + p)
        return tshark_fields(pcap, FIELDS)


def wrap_option(option):
    """An IPv6/HbH/UDP packet around an IOAM option cc-core emitted."""
    hbh = hop_by_hop(option, next_header=59)
    src = socket.inet_pton(socket.AF_INET6, "2001:db8::1")
    dst = socket.inet_pton(socket.AF_INET6, "2001:db8::2")
    return struct.pack("!IHBB", 6 << 28, len(hbh), 0, 64) + src + dst + hbh


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root (network namespaces)")
    tshark_version = sh("tshark", "--version").stdout.splitlines()[0]
    kernel = os.uname().release
    setup()
    try:
        packets, dissected = capture([(tt, 2) for tt, _ in KERNEL_CASES])
    finally:
        teardown()
    vectors = []
    for (tt, what), pkt, fields in zip(KERNEL_CASES, packets, dissected):
        vectors.append({
            "source": "kernel",
            "description": f"trace type {tt:#08x}: {what}; node data written by two Linux IOAM transit nodes",
            "packet": pkt.hex(),
            "tshark": fields,
        })
    enc = sh("cargo", "run", "-q", "-p", "cc-core", "--example", "ioam_vectors", cwd=ROOT).stdout.split()
    enc_packets = [wrap_option(bytes.fromhex(h)) for h in enc]
    for i, (pkt, fields) in enumerate(zip(enc_packets, dissect(enc_packets))):
        vectors.append({
            "source": "cc-core encoder",
            "description": f"cc-core's emitter, case {i} of examples/ioam_cases.rs; dissected by tshark",
            "packet": pkt.hex(),
            "tshark": fields,
        })
    doc = {
        "produced_by": {
            "node_data": f"Linux {kernel} IOAM transit (net/ipv6/ioam6.c)",
            "dissector": tshark_version,
            "script": "interop/ioam/generate.py",
        },
        "vectors": vectors,
    }
    with open(os.path.join(HERE, "vectors.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {len(vectors)} vectors: {len(packets)} kernel-filled, {len(enc_packets)} from the encoder")


if __name__ == "__main__":
    main()
