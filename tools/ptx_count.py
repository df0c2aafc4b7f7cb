#!/usr/bin/env python3
"""Instruction counts of a kernel's aligned copy in PTX (docs/cuda-backend.md, tenth session).

The CUDA backend lowers each kernel's entry twice and branches on the launch's alignment
(codegen/kernel_wrapper.h). This reads a dumped .ptx (PLUGSDK_CUDA_TEST_DUMP or the
plugin's `dump` option), splits the .entry into basic blocks, follows the branch whose
condition tests the pointers' low 4 bits to the aligned copy, and prints:
  - the instructions of the blocks only the aligned copy reaches (`aligned`), and of those
    before the copies (the thread's grid point, the alignment test),
  - for each loop among them (a block that branches back to itself) its instructions,
  - the opcodes of the largest such loop, or of the whole aligned copy without loops.
Usage: tools/ptx_count.py FILE.ptx [--per N] [--ops]
  --per N: also print the counts divided by N (elements a thread handles in that code).
"""
import argparse
import collections
import re
import sys


def blocks_of(ptx):
    body = ptx[ptx.index(".entry"):]
    body = body[body.index("{") + 1:]
    order, blocks, cur = [], {}, "entry"
    order.append(cur)
    blocks[cur] = []
    for raw in body.splitlines():
        line = raw.strip()
        if not line or line.startswith("//") or line.startswith(".reg") or line.startswith(".local") \
                or line.startswith(".shared"):
            continue
        m = re.match(r"^(\$L__\w+):$", line)
        if m:
            cur = m.group(1)
            order.append(cur)
            blocks[cur] = []
            continue
        if line == "}":
            break
        blocks[cur].append(line)
        if re.search(r"\bbra(?:\.uni)?\s", line):  # what follows a branch is a block of its own
            cur = f"$after{len(order)}"
            order.append(cur)
            blocks[cur] = []
    return order, blocks


def successors(order, blocks, name):
    insns = blocks[name]
    out = []
    fall = True
    for ins in insns:
        m = re.search(r"\bbra(?:\.uni)?\s+(\$L__\w+);", ins)
        if m:
            out.append(m.group(1))
            if not ins.startswith("@"):
                fall = False
        if ins.startswith("ret") or ins.startswith("exit"):
            fall = False
    if fall:
        i = order.index(name)
        if i + 1 < len(order):
            out.append(order[i + 1])
    return out


def reach(order, blocks, start):
    seen, todo = set(), [start]
    while todo:
        b = todo.pop()
        if b in seen:
            continue
        seen.add(b)
        todo.extend(successors(order, blocks, b))
    return seen


def count(insns):
    return sum(1 for i in insns if not i.startswith("{") and not i.startswith("}"))


def opcode(ins):
    if ins.startswith("@"):
        ins = ins.split(None, 1)[1]
    if ins.startswith("{"):
        ins = ins.split(";")[-2].strip() if ";" in ins else ins
        ins = re.sub(r"^\{\s*\.reg[^;]*;\s*", "", ins)
    return ins.split()[0].rstrip(";")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ptx")
    ap.add_argument("--per", type=float, default=0)
    ap.add_argument("--ops", action="store_true")
    a = ap.parse_args()
    order, blocks = blocks_of(open(a.ptx).read())
    # The alignment test: an `and.b64 ..., 15` feeding the predicate of a branch.
    split = None
    for name in order:
        insns = blocks[name]
        if any(re.search(r"and\.b64\s+\S+,\s*\S+,\s*15;", i) for i in insns):
            for i in insns:
                m = re.match(r"@(%p\d+) bra\s+(\$L__\w+);", i)
                if m:
                    split = (name, m.group(2))
    if not split:
        sys.exit("no alignment branch found")
    name, taken = split
    succ = successors(order, blocks, name)
    other = [s for s in succ if s != taken][0]
    # setp.eq: taken = aligned; setp.ne: fallthrough = aligned.
    cond = [i for i in blocks[name] if i.startswith("setp")][-1]
    aligned, unaligned = (taken, other) if ".eq." in cond else (other, taken)
    mine = reach(order, blocks, aligned) - reach(order, blocks, unaligned)
    total = sum(count(blocks[b]) for b in mine)
    per = (lambda n: f" ({n / a.per:.1f} per element)") if a.per else (lambda n: "")
    print(f"aligned copy: {total} instructions in {len(mine)} blocks{per(total)}")
    # Before the copies: the thread's point (the grid index divisions), the alignment test.
    pre = reach(order, blocks, "entry") - reach(order, blocks, aligned) - reach(order, blocks, unaligned)
    pre_n = sum(count(blocks[b]) for b in pre)
    print(f"before the copies: {pre_n} instructions{per(pre_n)}; together{per(pre_n + total)}")
    loops = [b for b in mine if b in successors(order, blocks, b)]
    for b in loops:
        print(f"  loop {b}: {count(blocks[b])} instructions{per(count(blocks[b]))}")
    if a.ops:
        pick = max(loops, key=lambda b: count(blocks[b])) if loops else None
        insns = blocks[pick] if pick else [i for b in mine for i in blocks[b]]
        c = collections.Counter(opcode(i) for i in insns if not i.startswith("}"))
        for op, n in c.most_common():
            print(f"    {n:4d} {op}")


if __name__ == "__main__":
    main()
