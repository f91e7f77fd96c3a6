#!/usr/bin/env python3
"""Worst-case stack depth of a RISC-V firmware image, from its disassembly.

    stack_bound.py OBJDUMP ELF [LIMIT_BYTES]

Reads `OBJDUMP -d ELF` (llvm-objdump from rustup's llvm-tools), and for each
function adds up every decrement of sp (`addi sp, sp, -N`, or `sub sp, sp, rX`
with rX built by lui, li, addi or slli), which over-estimates a function
that moves sp more than once. Calls are `auipc`+`jalr` pairs, `jal`, and tail jumps into
another function. The bound is the deepest path from the entry points
(`_start`, `_start_trap`) through the call graph. The check fails, exit 1,
on an indirect call (a linking jalr through a register not set by
lui/auipc; non-linking `jr` through a table is a `match` inside the
function; only
riscv-rt's trap dispatcher, whose table targets are the handler symbols, is
resolved), on
recursion, or when the bound exceeds LIMIT_BYTES; it prints the bound and
the path that reaches it.
"""
import re
import subprocess
import sys

TRAP_DISPATCH = {'_start_trap_rust'}
FUNC = re.compile(r'^([0-9a-f]+) <(.*)>:$')
INSN = re.compile(r'^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$')


def imm20(text):
    """A lui/auipc immediate as objdump prints it (0 ..= 2^20 - 1), sign-extended."""
    v = int(text, 0)
    return v - (1 << 20) if v >= 1 << 19 else v


def parse(dis):
    mask = 0xFFFF_FFFF if 'elf32' in dis[:400] else 0xFFFF_FFFF_FFFF_FFFF
    funcs = {}  # name -> {"start", "frame", "calls": set(addr), "indirect": bool}
    starts = {}
    cur = None
    regs = {}
    for line in dis.splitlines():
        m = FUNC.match(line)
        if m:
            addr, name = int(m.group(1), 16), m.group(2)
            if name.startswith('.L'):
                continue  # a local label inside the current function
            cur = funcs.setdefault(name, {'start': addr, 'frame': 0, 'calls': set(), 'indirect': False})
            starts[addr] = name
            regs = {}
            continue
        m = INSN.match(line)
        if not m or cur is None:
            continue
        addr, op, args = int(m.group(1), 16), m.group(2), [a.strip() for a in m.group(3).split(',')]
        if op == 'addi' and len(args) == 3 and args[0] == 'sp' and args[1] == 'sp':
            n = int(args[2], 0)
            if n < 0:
                cur['frame'] += -n
        elif op == 'lui' and len(args) == 2:
            regs[args[0]] = (imm20(args[1]) << 12) & mask
        elif op == 'auipc' and len(args) == 2:
            regs[args[0]] = (addr + (imm20(args[1]) << 12)) & mask
        elif op in ('addi', 'addiw') and len(args) == 3 and args[1] in regs and args[0] != 'sp':
            regs[args[0]] = (regs[args[1]] + int(args[2], 0)) & mask
        elif op == 'li' and len(args) == 2 and args[0] != 'sp':
            regs[args[0]] = int(args[1], 0) & mask
        elif op == 'slli' and len(args) == 3 and args[1] in regs and args[0] != 'sp':
            regs[args[0]] = (regs[args[1]] << int(args[2], 0)) & mask
        elif op == 'sub' and len(args) == 3 and args[0] == 'sp' and args[1] == 'sp':
            cur['frame'] += regs.get(args[2], 1 << 40)
        elif op in ('jalr', 'jr'):
            target = args[-1].split(' ')[0]  # newer objdumps append "<symbol>"
            mm = re.match(r'(-?(?:0x[0-9a-f]+|\d+))\((\w+)\)', target) or re.match(r'()(\w+)$', target)
            base = mm.group(2) if mm else None
            if base in regs:
                cur['calls'].add((regs[base] + int(mm.group(1) or "0", 0)) & mask)
            elif op == 'jr':
                # A return (jr ra), or a jump table of a `match` inside this
                # function (rustc emits tables of local labels only).
                pass
            else:
                cur['indirect'] = True
                cur.setdefault('where', hex(addr))
        elif op in ('jal', 'j', 'call', 'tail'):
            mm = re.search(r'0x([0-9a-f]+)', m.group(3))
            if mm:
                cur['calls'].add(int(mm.group(1), 16))
        elif args and args[0] in regs:
            regs.pop(args[0], None)  # overwritten by something not tracked
    # riscv-rt's trap dispatcher jumps through its exception and interrupt
    # tables; every entry is a handler symbol (the defaults alias `abort`).
    for name in TRAP_DISPATCH & funcs.keys():
        f = funcs[name]
        f['indirect'] = False
        f['calls'] |= {g['start'] for n, g in funcs.items() if n == 'abort' or n.endswith('Handler')}
    # riscv-rt's _start only jumps to _abs_start (on rv64 through a literal
    # pool this parser does not read).
    if '_start' in funcs and '_abs_start' in funcs:
        funcs['_start']['calls'].add(funcs['_abs_start']['start'])
    # Keep only calls that land on another function's first instruction.
    for name, f in funcs.items():
        f['callees'] = sorted({starts[a] for a in f['calls'] if a in starts and starts[a] != name})
    return funcs


def main():
    objdump, elf = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
    dis = subprocess.run([objdump, '-d', '--no-show-raw-insn', elf], check=True, capture_output=True, text=True).stdout
    funcs = parse(dis)
    memo = {}

    def depth(name, path):
        if name in path:
            raise SystemExit('stack bound: recursion through ' + ' -> '.join(path + [name]))
        if name in memo:
            return memo[name]
        f = funcs[name]
        if f['indirect']:
            raise SystemExit(f'stack bound: indirect call in {name} at {f["where"]}: depth not bounded')
        best = (0, [])
        for c in f['callees']:
            d, p = depth(c, path + [name])
            if d > best[0]:
                best = (d, p)
        memo[name] = (f['frame'] + best[0], [name] + best[1])
        return memo[name]

    total, worst = 0, []
    for entry in ('_start', '_start_trap'):
        if entry in funcs:
            d, p = depth(entry, [])
            if entry == '_start_trap':
                # A trap can arrive on top of the deepest normal path.
                total += d
            elif d > total:
                total, worst = d, p
    print(f'worst-case stack: {total} bytes ({elf.split("/")[-1]}); deepest path:')
    for name in worst:
        print(f'  {funcs[name]["frame"]:>8}  {name}')
    if limit is not None and total > limit:
        print(f'stack bound {total} exceeds the limit {limit}')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
