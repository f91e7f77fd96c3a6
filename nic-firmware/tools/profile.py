#!/usr/bin/env python3
"""Per-function instruction counts from a QEMU exec trace.

    profile.py ADDR2LINE NM ELF TRACE EVENTS [DETAIL]

TRACE is QEMU's `-singlestep -d exec,nochain` log of the `profile` image:
one line per executed instruction, the guest PC second in the brackets.
Counting runs from each return of `profile_resume` to the next call of
`profile_pause`; the markers' own instructions are left out. Each counted
PC is attributed, through the debug info's inline chain (ADDR2LINE -a -f
-i -C), to

- "self": the innermost cc_core function on the chain (helpers from core
  and compiler_builtins count for the cc_core function that used them);
- "inclusive": every cc_core function on the chain once (inlined callees
  included; a callee that was not inlined counts under its own name).

Prints instructions per event (total / EVENTS), heaviest first. With
DETAIL (a substring of a function name), also every counted instruction
attributed to a matching function, with its count per event (needs
llvm-objdump beside NM).
"""
import bisect
import collections
import re
import subprocess
import sys


def symbols(nm, elf):
    """Sorted (start, size, name) of the ELF's sized symbols, demangled."""
    out = subprocess.run([nm, "-S", "-C", elf], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[2] in "tTwW":
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    syms.sort()
    return syms


def containing(syms, pc):
    """The symbol whose range holds pc (for code without debug info)."""
    i = bisect.bisect_right([s[0] for s in syms], pc) - 1
    if i >= 0 and syms[i][0] <= pc < syms[i][0] + syms[i][1]:
        return syms[i][2]
    return "??"


def markers(nm, elf):
    """(start, size) of profile_resume and profile_pause."""
    out = subprocess.run([nm, "-S", elf], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] in ("profile_resume", "profile_pause"):
            found[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    if len(found) != 2:
        sys.exit("profile.py: %s has no profile_resume/profile_pause symbols" % elf)
    return found["profile_resume"], found["profile_pause"]


def count(trace, resume, pause):
    pc_re = re.compile(r"\[[0-9a-f]+/([0-9a-f]+)/")
    counts = collections.Counter()
    counting = pending = False
    with open(trace, errors="replace") as f:
        for line in f:
            m = pc_re.search(line)
            if not m:
                continue
            pc = int(m.group(1), 16)
            if resume[0] <= pc < resume[0] + resume[1]:
                pending, counting = True, False
                continue
            if pause[0] <= pc < pause[0] + pause[1]:
                pending = counting = False
                continue
            if pending:
                pending, counting = False, True
            if counting:
                counts[pc] += 1
    return counts


where = {}


def chains(addr2line, elf, pcs):
    """pc → inline chain of function names, innermost first."""
    out = subprocess.run(
        [addr2line, "-a", "-f", "-i", "-C", "-e", elf] + ["0x%x" % pc for pc in pcs],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    result, cur, i = {}, None, 0
    global where
    while i < len(out):
        line = out[i]
        if line.startswith("0x"):
            cur = int(line, 16)
            result[cur] = []
            i += 1
            continue
        # A frame: function name, then file:line.
        loc = out[i + 1] if i + 1 < len(out) else "?"
        result[cur].append(line)
        where.setdefault(cur, loc.rsplit("/", 1)[-1])
        i += 2
    return result


def tidy(name):
    """A demangled name without its hash, legacy escapes spelled out."""
    name = re.sub(r"::h[0-9a-f]{16}$", "", name)
    for esc, ch in (("$LT$", "<"), ("$GT$", ">"), ("$C$", ","), ("$u7b$", "{"), ("$u7d$", "}"),
                    ("$u20$", " "), ("$RF$", "&"), ("$BP$", "*"), ("..", "::")):
        name = name.replace(esc, ch)
    return name


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__)
    addr2line, nm, elf, trace, events = sys.argv[1:6]
    detail = sys.argv[6] if len(sys.argv) == 7 else None
    events = int(events)
    resume, pause = markers(nm, elf)
    counts = count(trace, resume, pause)
    total = sum(counts.values())
    if total == 0:
        sys.exit("profile.py: nothing counted (did the image reach the brackets?)")
    frames = chains(addr2line, elf, sorted(counts))
    syms = symbols(nm, elf)
    own = collections.Counter()
    incl = collections.Counter()
    owner = {}
    for pc, n in counts.items():
        chain = [tidy(f.strip()) for f in frames.get(pc) or []]
        ours = [f for f in chain if "cc_core::" in f]
        # Outside cc_core (compiler_builtins, whose debug info names no
        # function, or the image's own code): the symbol around the PC.
        owner[pc] = ours[0] if ours else tidy(containing(syms, pc))
        own[owner[pc]] += n
        for f in dict.fromkeys(ours):
            incl[f] += n
    print("%d instructions per event (%d events)" % (round(total / events), events))
    print("%.1f divisions per event (div, divu, rem, remu: one instruction to QEMU, 32-64 cycles on a serial divider)"
          % (divisions(nm, elf, counts) / events))
    print()
    print("%8s  %s" % ("self", "function (innermost cc_core frame)"))
    for f, n in own.most_common():
        if n / events >= 0.5:
            print("%8.1f  %s" % (n / events, f))
    print()
    print("%8s  %s" % ("incl.", "function (inlined callees included)"))
    for f, n in incl.most_common():
        if n / events >= 0.5:
            print("%8.1f  %s" % (n / events, f))
    if detail:
        show_detail(nm, elf, counts, owner, events, detail)



def mnemonics(nm, elf, pcs):
    """{pc: mnemonic} for the instructions at `pcs`, from llvm-objdump."""
    import os
    objdump = os.path.join(os.path.dirname(nm), "llvm-objdump")
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", "--start-address=0x%x" % min(pcs),
                          "--stop-address=0x%x" % (max(pcs) + 4), elf],
                         capture_output=True, text=True, check=True).stdout
    want = set(pcs)
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s*(\S+)", line)
        if m and int(m.group(1), 16) in want:
            found[int(m.group(1), 16)] = m.group(2)
    return found


def divisions(nm, elf, counts):
    """How many divide and remainder instructions the counted run executed."""
    ops = mnemonics(nm, elf, list(counts))
    return sum(n for pc, n in counts.items() if re.match(r"(div|rem)u?w?$", ops.get(pc, "")))


def show_detail(nm, elf, counts, owner, events, detail):
    """The counted instructions of functions matching `detail`, by address."""
    import os
    objdump = os.path.join(os.path.dirname(nm), "llvm-objdump")
    pcs = sorted(pc for pc in counts if detail in owner[pc])
    if not pcs:
        print("no counted instruction in a function matching %r" % detail)
        return
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", "--start-address=0x%x" % pcs[0],
                          "--stop-address=0x%x" % (pcs[-1] + 4), elf],
                         capture_output=True, text=True, check=True).stdout
    want = set(pcs)
    print()
    print("%8s  %s" % ("per event", "instruction (functions matching %r)" % detail))
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s*(.*)", line)
        if m and int(m.group(1), 16) in want:
            pc = int(m.group(1), 16)
            print("%8.1f  %08x  %-36s %-28s %s" % (counts[pc] / events, pc, m.group(2).strip()[:36],
                                                   where.get(pc, "?"), owner[pc]))


if __name__ == "__main__":
    main()
