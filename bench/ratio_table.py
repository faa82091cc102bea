#!/usr/bin/python3
"""The ratio tables of bench/runtime_vs_mpi.sh and bench/cluster_vs_mpi.sh.

Reads "TOOL REP SIZE TIME_US BUSBW WRONG" lines (one per tool, repetition
and size; the first tool named is ours) and prints, per size, each tool's
median time and busbw and every peer's ratio against ours: the peer's time
over ours (= our busbw over the peer's), so > 1 means dist-train is faster.
  ratio_table.py RESULTS TITLE OURS PEER [PEER...]"""
import statistics
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__.split("\n\n")[1])
    path, title, tools = sys.argv[1], sys.argv[2], sys.argv[3:]
    times, busbw, wrong = {}, {}, 0
    for line in open(path):
        tool, _, size, t, bw, bad = line.split()
        times.setdefault((tool, int(size)), []).append(float(t))
        busbw.setdefault((tool, int(size)), []).append(float(bw))
        wrong += int(bad)
    ours, peers = tools[0], tools[1:]
    print(f"# {title}")
    head = f"# {'size(B)':>10} " + " ".join(f"{t + ' us':>10}" for t in tools)
    head += f" {ours + ' GB/s':>10} " + " ".join(f"{'vs ' + p:>9}" for p in peers)
    print(head)
    for size in sorted({s for _, s in times}):
        if any((t, size) not in times for t in tools):
            continue
        med = {t: statistics.median(times[(t, size)]) for t in tools}
        row = f"  {size:>10} " + " ".join(f"{med[t]:10.2f}" for t in tools)
        row += f" {statistics.median(busbw[(ours, size)]):10.3f} "
        row += " ".join(f"{med[p] / med[ours]:8.2f}x" for p in peers)
        print(row)
    print(f"# wrong elements (every tool, every size): {wrong}")
    print(f"# vs X = X's median time / {ours}'s (= {ours}'s busbw / X's): > 1 means {ours} is faster")


if __name__ == "__main__":
    main()
