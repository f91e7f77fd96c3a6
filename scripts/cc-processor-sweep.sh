#!/usr/bin/env bash
# How many congestion-control cores a 100 Gb/s NIC needs: the HPCC paper's
# fat-tree under WebSearch at 50 % load, HPCC++ (5-hop ACKs) and LDCP, each
# NIC's engine on 1, 2, 4 or 8 DPA-class cores (rv64imac+Zbb at 1.8 GHz,
# nic-firmware/bench.json's costs) with each coalescing policy, two seeds,
# against the same runs with no processor (every event answered at once).
#
#   ./scripts/cc-processor-sweep.sh [OUT]     (default OUT: out/cc-processor)
#
# Writes OUT/hpcc/ and OUT/ldcp/: point-*.json and sweep.svg (FCT slowdown
# p99 of flows <= 30 kB and > 1 MB against cores, a line per policy, the
# run without a processor as level lines), and prints, per algorithm and
# policy, the fewest cores from which both p99s stay within 10 % of the
# unlimited processor's. About 10 minutes on two cores; the README's
# figures are the two sweep.svg, in docs/figures/cc-processor-*.svg.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/cc-processor}
cargo build --release -p hal-sim
# One sweep (and one plot) per algorithm: their slowdowns differ by ten.
for alg in hpcc ldcp; do
  suffix=; [ "$alg" = ldcp ] && suffix=-ldcp
  target/release/hal-sim sweep "scenarios/fattree320-websearch50-ccp$suffix.toml" \
    --vary nic.cc_processor.cores=1,2,4,8 \
    --vary nic.cc_processor.coalescing=none,latest,thinning \
    --vary seed=5,6 \
    --baseline "scenarios/fattree320-websearch50$suffix.toml" \
    --baseline-name unlimited --plot short-long --out "$out/$alg"
done
python3 - "$out" <<'PY'
import glob, json, os, sys
from collections import defaultdict

runs = defaultdict(list)    # (algorithm, policy, cores) -> [(short, long, dropped share, busiest NIC)]
base = defaultdict(list)    # algorithm -> [(short, long)]
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "point-*.json"))):
    o = json.load(open(path))
    s = o["summary"].get("Ok")
    if s is None:
        sys.exit("%s failed: %s" % (path, o["summary"]))
    alg = "LDCP" if "ldcp" in os.path.basename(o["point"]["file"]) else "HPCC++"
    sl = (s["slowdown_short"]["p99"], s["slowdown_long"]["p99"])
    if o["point"]["baseline"]:
        base[alg].append(sl)
        continue
    f = dict(o["point"]["set"])
    p = s["cc_processor"]
    busiest = max(n["utilization"] for _, n in p["per_nic"]) if p["per_nic"] else 0.0
    t = p["total"]
    runs[(alg, f["nic.cc_processor.coalescing"], f["nic.cc_processor.cores"])].append(
        sl + (t["dropped"] / max(t["offered"], 1), busiest))

mean = lambda xs: sum(xs) / len(xs)
print()
print("p99 FCT slowdown, short (<= 30 kB) / long (> 1 MB) flows, mean of the seeds;")
print("dropped events; the busiest NIC's processor utilization")
for alg in sorted(base):
    b = [mean([x[i] for x in base[alg]]) for i in (0, 1)]
    print("\n%s, no processor: %.2f / %.2f" % (alg, b[0], b[1]))
    for policy in ("none", "latest", "thinning"):
        cores = sorted(c for (a, p, c) in runs if a == alg and p == policy)
        ok = {}
        for c in cores:
            r = runs[(alg, policy, c)]
            m = [mean([x[i] for x in r]) for i in range(4)]
            ok[c] = m[0] <= 1.1 * b[0] and m[1] <= 1.1 * b[1]
            print("  %-8s %d cores: %5.2f / %5.2f   dropped %5.1f %%   busiest %5.1f %%%s" % (
                policy, c, m[0], m[1], m[2] * 100, m[3] * 100, "" if ok[c] else "   (> 10 % over)"))
        knee = next((c for c in cores if all(ok[d] for d in cores if d >= c)), None)
        print("  %-8s needs %s" % (policy, "%d core(s)" % knee if knee else "more than %d cores" % cores[-1]))
PY
