#!/usr/bin/python3
"""Compares what every task of one step saw (dump_task.py records) in a job
wired by the plugin and in the same job wired by dt-wire:

    compare_wiring.py DIR PLUGIN_JOB WIRE_JOB

Every variable must be equal, except those that name the job itself (its
id, times, secret, process ids), which are checked for what they must be.
Prints each difference and exits 1 when there is one."""
import json
import os
import re
import sys

PORT_MIN, PORT_MAX, SLOTS_PER_JOB = 20000, 32767, 32  # lib/contract/port.h

# Differ by job, not by wiring: checked below or by Slurm itself (srun's
# own ports, the ports Slurm reserved for the step, 26.05's SLURM_JOB_SLUID).
PER_JOB = {"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_TASK_PID", "SLURM_JOB_START_TIME",
           "SLURM_JOB_END_TIME", "DT_JOB_TOKEN", "DT_SIGNAL_RELAY", "MASTER_PORT",
           "PET_MASTER_PORT", "DT_EXPORTED", "DT_JOB_DEADLINE", "SLURM_SUBMIT_DIR",
           "SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT",
           "SLURM_STEP_RESV_PORTS", "SLURM_JOB_SLUID"}  # 26.05: the job's unique id
# The local cluster's nodes say CPUs=8 and do not confine steps to their
# cores (TaskPlugin=task/none): dt-wire binds within the CPUs a task may
# use, the plugin within the step's cores (docs/user-guide.md). Both are
# the same set only on a machine with at most 8 CPUs and an --exclusive job.
CPU_FIELDS = {"DT_CPUS", "OMP_NUM_THREADS", "cpus_allowed"}
COMPARE_CPUS = os.cpu_count() <= 8
# The words of each wiring: the plugin's option or dt-wire's.
ONE_SIDE = re.compile(r"^(SLURM_SPANK_|_SLURM_SPANK_|SPANK_|DT_WIRE_)")


def load(out_dir, job):
    recs = {}
    for name in os.listdir(out_dir):
        m = re.fullmatch(r"%s\.0\.(\d+)\.json" % job, name)
        if m:
            with open(os.path.join(out_dir, name)) as f:
                recs[int(m.group(1))] = json.load(f)
    return recs


def fnv1a(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def check_record(env, where, problems):
    """DT_EXPORTED names what was set, each with the hash of its value."""
    names = []
    for entry in env.get("DT_EXPORTED", "").split(","):
        name, _, digest = entry.partition(":")
        names.append(name)
        if name not in env or int(digest, 16) != fnv1a(env[name]):
            problems.append("%s: DT_EXPORTED's %s is not its value" % (where, name))
    return names


def check_job_values(env, job, where, problems):
    port = str(PORT_MIN + (job * SLOTS_PER_JOB) % (PORT_MAX - PORT_MIN + 1))
    if "SLURM_STEP_RESV_PORTS" in env:  # the first port Slurm reserved
        port = re.match(r"\d+", env["SLURM_STEP_RESV_PORTS"]).group(0)
    for name in ("MASTER_PORT", "PET_MASTER_PORT"):
        if name in env and env[name] != port:
            problems.append("%s: %s=%s, want %s" % (where, name, env[name], port))
    if not re.fullmatch(r"[0-9a-f]{64}", env.get("DT_JOB_TOKEN", "")):
        problems.append("%s: DT_JOB_TOKEN is not 64 hex digits" % where)
    if not env.get("DT_SIGNAL_RELAY", "").isdigit():
        problems.append("%s: no DT_SIGNAL_RELAY" % where)


def compare(out_dir, plugin_job, wire_job):
    problems = []
    p, w = load(out_dir, plugin_job), load(out_dir, wire_job)
    if not p or sorted(p) != sorted(w):
        return ["tasks differ: plugin %s, dt-wire %s" % (sorted(p), sorted(w))]
    for rank in sorted(p):
        pe, we = p[rank]["env"], w[rank]["env"]
        for side, env, job in (("plugin", pe, plugin_job), ("dt-wire", we, wire_job)):
            where = "%s rank %d" % (side, rank)
            check_job_values(env, job, where, problems)
            names = check_record(env, where, problems)
            env["DT_EXPORTED"] = ",".join(names)
        if pe["DT_EXPORTED"] != we["DT_EXPORTED"]:
            problems.append("rank %d: set %s by the plugin, %s by dt-wire"
                            % (rank, pe["DT_EXPORTED"], we["DT_EXPORTED"]))
        if ("DT_JOB_DEADLINE" in pe) != ("DT_JOB_DEADLINE" in we):
            problems.append("rank %d: DT_JOB_DEADLINE set by one only" % rank)
        for name in sorted(set(pe) | set(we)):
            if name in PER_JOB or ONE_SIDE.match(name):
                continue
            if name in CPU_FIELDS and not COMPARE_CPUS:
                continue
            if pe.get(name) != we.get(name):
                problems.append("rank %d: %s=%r with the plugin, %r with dt-wire"
                                % (rank, name, pe.get(name), we.get(name)))
        for key in ("host", "cpus_allowed", "master_ip"):
            if key in CPU_FIELDS and not COMPARE_CPUS:
                continue
            if p[rank][key] != w[rank][key]:
                problems.append("rank %d: %s %r with the plugin, %r with dt-wire"
                                % (rank, key, p[rank][key], w[rank][key]))
    return problems


def main():
    out_dir, plugin_job, wire_job = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    problems = compare(out_dir, plugin_job, wire_job)
    for line in problems:
        print(line)
    n = len(load(out_dir, plugin_job))
    print("%d tasks compared, %d differences%s" % (
        n, len(problems), "" if COMPARE_CPUS else
        " (CPU sets not compared: %d CPUs here, the nodes say 8)" % os.cpu_count()))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
