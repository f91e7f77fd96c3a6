#!/usr/bin/env python3
"""One table from the three cores' benchmark logs (scripts/bench.sh).

    bench_table.py DIR [JSON]

DIR holds, for each core NAME (rv32imac, rv64imac, rv64imac_zbb), NAME.bench
(the `bench` image's log) and, if divisions were counted, NAME.div (lines
"kind divisions-per-event" from scripts/profile.sh). Prints a row per event:
each core's instructions (mean / max) and divisions, and the targets of
rv32imac and of the Zbb core; then each core's cores-per-port table. With
JSON, writes {"rows": [{"event": LABEL, "rv32imac": {"mean", "max",
"divisions"}, "rv64imac": {...}, "rv64imac_zbb": {...}, "target":
{"rv32imac", "rv64imac_zbb"}}, ...]} (divisions and targets null where
there are none).
"""
import json
import os
import re
import sys

CORES = ["rv32imac", "rv64imac", "rv64imac_zbb"]
HEADINGS = {"rv32imac": "rv32imac", "rv64imac": "rv64imac", "rv64imac_zbb": "rv64imac+Zbb"}
# The benchmark's row labels and the profiler's names for the same paths
# (nic-firmware/src/bin/common/paths.rs).
KINDS = {
    "LDCP ACK (PAWA)": "ldcp-ack",
    "LDCP timer (cw < 1)": "ldcp-timer",
    "HPCC++ ACK, 1 hop": "hpcc-ack-1",
    "HPCC++ ACK, 5 hops": "hpcc-ack-5",
    "HPCC++ ACK, 5 hops, 1 queue": "hpcc-ack-5-one-queue",
    "Rx-HPCC telemetry, 5 hops": "rx-hpcc-5",
    "HPCC++ probe response": "probe-response",
    "DCTCP ACK (baseline)": "dctcp-ack",
    "DCQCN CNP (baseline)": "dcqcn-cnp",
    "TIMELY ACK": "timely-ack",
}
# Rows through the C API (cc-ffi), from NAME.c.bench, and the Rust row each
# is held to (at most 10 % more instructions, mean and max).
C_KINDS = {
    "LDCP ACK, C API": ("ldcp-ack-c", "LDCP ACK (PAWA)"),
    "HPCC++ ACK, 5 hops, C API": ("hpcc-ack-5-c", "HPCC++ ACK, 5 hops"),
}
ROW = re.compile(r"^(?P<label>.{28}) +(?P<mean>\d+) / (?P<max>\d+) .*?(≤ (?P<target>\d+) (ok|OVER)|-)\s*$")


def parse(path):
    """{label: (mean, max, target or None)} and the port table's lines."""
    rows, ports, in_ports = {}, [], False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("what that is for a port"):
                in_ports = True
            if in_ports:
                if not line.strip() or line.startswith("targets"):
                    in_ports = False
                else:
                    ports.append(line)
                    continue
            m = ROW.match(line)
            # Every row of the instruction table: those above, and the ACK
            # row of each other algorithm of cc-core's registry.
            if m and not ports:
                t = m.group("target")
                rows[m.group("label").strip()] = (int(m.group("mean")), int(m.group("max")), int(t) if t else None)
    return rows, ports


def divisions(path):
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                kind, n = line.split()
                out[kind] = float(n)
    return out


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    d = sys.argv[1]
    benches, ports, divs = {}, {}, {}
    for c in CORES:
        benches[c], ports[c] = parse(os.path.join(d, c + ".bench"))
        c_rows, _ = parse(os.path.join(d, c + ".c.bench"))
        for label in C_KINDS:
            if label in c_rows:
                benches[c][label] = c_rows[label]
        divs[c] = divisions(os.path.join(d, c + ".div"))
    rows = []
    kinds = dict(KINDS)
    # The registry's other rows, in the image's order (no profile name:
    # their divisions are not profiled here).
    kinds.update({label: None for label in benches["rv32imac"] if label not in KINDS and label not in C_KINDS})
    kinds.update({label: kind for label, (kind, _) in C_KINDS.items()})
    for label, kind in kinds.items():
        row = {"event": label}
        for c in CORES:
            mean, mx, _ = benches[c].get(label, (None, None, None))
            row[c] = {"mean": mean, "max": mx, "divisions": divs[c].get(kind)}
        row["target"] = {
            "rv32imac": benches["rv32imac"].get(label, (0, 0, None))[2],
            "rv64imac_zbb": benches["rv64imac_zbb"].get(label, (0, 0, None))[2],
        }
        if label in C_KINDS:
            row["rust_row"] = C_KINDS[label][1]
        rows.append(row)

    def cell(r, c):
        v = r[c]
        if v["mean"] is None:
            return "-"
        div = "" if v["divisions"] is None else " %4.1f" % v["divisions"]
        return "%d / %d%s" % (v["mean"], v["max"], div)

    def target(r, c, ref):
        t = r["target"][c]
        if t is None:
            return "-"
        ok = r[ref]["mean"] is not None and r[ref]["mean"] <= t and r[ref]["max"] <= t
        return "≤ %d %s" % (t, "ok" if ok else "OVER")

    print("instructions per event, mean / max (and divisions executed), engine path; QEMU -icount shift=0")
    print()
    head = "%-28s" % "event" + "".join(" %22s" % HEADINGS[c] for c in CORES) + " %13s %13s" % ("target rv32", "target Zbb")
    print(head)
    for r in rows:
        print("%-28s" % r["event"] + "".join(" %22s" % cell(r, c) for c in CORES)
              + " %13s %13s" % (target(r, "rv32imac", "rv32imac"), target(r, "rv64imac_zbb", "rv64imac_zbb")))
    over = sum(1 for r in rows for c, ref in (("rv32imac", "rv32imac"), ("rv64imac_zbb", "rv64imac_zbb"))
               if "OVER" in target(r, c, ref))
    print()
    print("%d target(s) not met; the baselines (DCTCP, DCQCN) have none." % over)
    print()
    print("the C API (cc-ffi) against the Rust engine path, instructions (target: at most +10 %, mean and max):")
    by_label = {r["event"]: r for r in rows}
    for r in rows:
        if "rust_row" not in r:
            continue
        base = by_label[r["rust_row"]]
        cells = []
        for c in CORES:
            v, b = r[c], base[c]
            if v["mean"] is None or b["mean"] is None:
                cells.append("%s -" % HEADINGS[c])
                continue
            m = 100.0 * (v["mean"] - b["mean"]) / b["mean"]
            x = 100.0 * (v["max"] - b["max"]) / b["max"]
            v["over_rust_pct"] = {"mean": round(m, 1), "max": round(x, 1)}
            cells.append("%s %+.1f %% / %+.1f %% %s" % (HEADINGS[c], m, x, "ok" if m <= 10 and x <= 10 else "OVER"))
        print("%-28s vs %-20s %s" % (r["event"], r["rust_row"], ";  ".join(cells)))
    for c in CORES:
        if ports[c]:
            print()
            print("%s, %s" % (HEADINGS[c], ports[c][0]))
            for line in ports[c][1:]:
                print(line)
    if len(sys.argv) == 3:
        with open(sys.argv[2], "w") as f:
            json.dump({"rows": rows}, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print()
        print("wrote %s" % sys.argv[2])


if __name__ == "__main__":
    main()
