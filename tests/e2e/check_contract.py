#!/usr/bin/python3
"""Checks the task-mode contract for every task of one step, from the files
dump_task.py wrote, against Slurm's own variables and Slurm's own node-list
expansion (scontrol show hostnames). Exit 0 and one summary line if all
agree; otherwise each disagreement on stderr and exit 1.

usage: check_contract.py DIR JOBID STEPID --mode task|node [--tasks-per-node 3,2]
       [--port-range 20000-32767] [--resv-port] [--omp N]
MASTER_PORT must be the step's first reserved port when Slurm reserved
some (SLURM_STEP_RESV_PORTS), else inside --port-range.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

TASK_ONLY = ["WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
             "GROUP_WORLD_SIZE", "ROLE_NAME", "ROLE_RANK", "ROLE_WORLD_SIZE"]
NODE_ONLY = ["NNODES", "NPROC_PER_NODE", "PET_NNODES", "PET_NODE_RANK",
             "PET_NPROC_PER_NODE", "PET_MASTER_ADDR", "PET_MASTER_PORT"]


def hostnames(nodelist):
    out = subprocess.run(["scontrol", "show", "hostnames", nodelist], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


class Checker:
    def __init__(self):
        self.errors = []

    def eq(self, what, got, want):
        if str(got) != str(want):
            self.errors.append("%s: got %r, want %r" % (what, got, want))

    def true(self, what, cond):
        if not cond:
            self.errors.append(what)


def check_common(c, recs, nodes):
    first = recs[0]["env"]
    for r in recs:
        e, who = r["env"], "task %s" % r["env"].get("SLURM_PROCID")
        c.eq(who + " MASTER_ADDR", e.get("MASTER_ADDR"), nodes[0])
        c.eq(who + " MASTER_PORT", e.get("MASTER_PORT"), first.get("MASTER_PORT"))
        c.true(who + " MASTER_ADDR does not resolve on " + r["host"],
               not r["master_ip"].startswith("unresolved"))
        c.eq(who + " MASTER_ADDR resolves to", r["master_ip"], recs[0]["master_ip"])
        c.eq(who + " NODE_RANK", e.get("NODE_RANK"), e["SLURM_NODEID"])
        c.eq(who + " hostname is node SLURM_NODEID", r["host"], nodes[int(e["SLURM_NODEID"])])
        c.eq(who + " DT_JOB_TOKEN same in all tasks", e.get("DT_JOB_TOKEN"),
             first.get("DT_JOB_TOKEN"))
        token = e.get("DT_JOB_TOKEN", "")
        c.true(who + " DT_JOB_TOKEN is 64 hex digits",
               len(token) == 64 and all(ch in "0123456789abcdef" for ch in token))


def check_task_mode(c, recs, nodes, tasks_per_node, omp):
    per_node = {}
    for r in recs:
        per_node.setdefault(r["env"]["SLURM_NODEID"], []).append(r)
    for r in recs:
        e, who = r["env"], "task %s" % r["env"]["SLURM_PROCID"]
        c.eq(who + " RANK", e.get("RANK"), e["SLURM_PROCID"])
        c.eq(who + " ROLE_RANK", e.get("ROLE_RANK"), e["SLURM_PROCID"])
        c.eq(who + " LOCAL_RANK", e.get("LOCAL_RANK"), e["SLURM_LOCALID"])
        c.eq(who + " WORLD_SIZE", e.get("WORLD_SIZE"), len(recs))
        c.eq(who + " ROLE_WORLD_SIZE", e.get("ROLE_WORLD_SIZE"), len(recs))
        c.eq(who + " LOCAL_WORLD_SIZE", e.get("LOCAL_WORLD_SIZE"),
             len(per_node[e["SLURM_NODEID"]]))
        c.eq(who + " GROUP_RANK", e.get("GROUP_RANK"), e["SLURM_NODEID"])
        c.eq(who + " GROUP_WORLD_SIZE", e.get("GROUP_WORLD_SIZE"), len(nodes))
        c.eq(who + " ROLE_NAME", e.get("ROLE_NAME"), "default")
        if omp is not None or "DT_CPUS" not in e:  # bound: binding.bats checks it
            c.eq(who + " OMP_NUM_THREADS", e.get("OMP_NUM_THREADS"), omp or "1")
        for k in NODE_ONLY:
            c.true("%s has node-mode variable %s" % (who, k), k not in e)
    if tasks_per_node:
        got = [len(per_node.get(str(i), [])) for i in range(len(nodes))]
        c.eq("tasks per node", ",".join(map(str, got)), tasks_per_node)


def check_node_mode(c, recs, nodes):
    for r in recs:
        e, who = r["env"], "node task %s" % r["env"]["SLURM_PROCID"]
        c.eq(who + " NNODES", e.get("NNODES"), len(nodes))
        c.eq(who + " PET_NNODES", e.get("PET_NNODES"), len(nodes))
        c.eq(who + " PET_NODE_RANK", e.get("PET_NODE_RANK"), e["SLURM_NODEID"])
        c.eq(who + " PET_MASTER_ADDR", e.get("PET_MASTER_ADDR"), nodes[0])
        c.eq(who + " PET_MASTER_PORT", e.get("PET_MASTER_PORT"), e.get("MASTER_PORT"))
        c.eq(who + " PET_NPROC_PER_NODE", e.get("PET_NPROC_PER_NODE"), e.get("NPROC_PER_NODE"))
        for k in TASK_ONLY:
            c.true("%s has per-worker variable %s" % (who, k), k not in e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("job")
    ap.add_argument("step")
    ap.add_argument("--mode", default="task")
    ap.add_argument("--tasks-per-node", default="")
    ap.add_argument("--port-range", default="20000-32767")
    ap.add_argument("--resv-port", action="store_true",
                    help="require Slurm-reserved ports for the step")
    ap.add_argument("--omp", default=None,
                    help="expected OMP_NUM_THREADS (default: 1 when tasks are not CPU-bound)")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.dir, "%s.%s.*.json" % (a.job, a.step))))
    recs = [json.load(open(f)) for f in files]
    if not recs:
        sys.exit("no task files for step %s.%s in %s" % (a.job, a.step, a.dir))
    nodes = hostnames(recs[0]["env"]["SLURM_STEP_NODELIST"])
    c = Checker()
    c.eq("number of task files", len(recs), recs[0]["env"]["SLURM_STEP_NUM_TASKS"])
    check_common(c, recs, nodes)
    if a.mode == "task":
        check_task_mode(c, recs, nodes, a.tasks_per_node, a.omp)
    else:
        check_node_mode(c, recs, nodes)
    port = int(recs[0]["env"].get("MASTER_PORT", "0"))
    resv = recs[0]["env"].get("SLURM_STEP_RESV_PORTS", "")
    c.true("step has no SLURM_STEP_RESV_PORTS", resv or not a.resv_port)
    if resv:
        c.eq("MASTER_PORT is the first reserved port", port,
             resv.replace(",", "-").split("-")[0])
    else:
        lo, hi = map(int, a.port_range.split("-"))
        c.true("MASTER_PORT %d outside %s" % (port, a.port_range), lo <= port <= hi)
    for err in c.errors:
        print(err, file=sys.stderr)
    if c.errors:
        sys.exit(1)
    print("ok: %d tasks on %d nodes (%s), master %s:%d" %
          (len(recs), len(nodes), ",".join(nodes), nodes[0], port))


if __name__ == "__main__":
    main()
