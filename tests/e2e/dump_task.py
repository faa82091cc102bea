#!/usr/bin/python3
"""Run as a Slurm task: writes this task's view (environment, hostname,
how MASTER_ADDR resolves here) to DIR/<job>.<step>.<procid>.json."""
import json
import os
import socket
import sys

PREFIXES = ("SLURM_", "DT_", "PET_")
NAMES = {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK",
         "LOCAL_WORLD_SIZE", "NODE_RANK", "GROUP_RANK", "GROUP_WORLD_SIZE",
         "ROLE_NAME", "ROLE_RANK", "ROLE_WORLD_SIZE", "OMP_NUM_THREADS",
         "NNODES", "NPROC_PER_NODE", "TORCHELASTIC_RUN_ID", "CUDA_VISIBLE_DEVICES",
         "CUDA_DEVICE_ORDER", "UCX_NET_DEVICES", "NCCL_IB_HCA",
         "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"}


def main():
    out_dir = sys.argv[1]
    env = {k: v for k, v in os.environ.items()
           if k.startswith(PREFIXES) or k in NAMES}
    try:
        master_ip = socket.gethostbyname(env.get("MASTER_ADDR", ""))
    except OSError as e:
        master_ip = "unresolved: %s" % e
    with open("/proc/self/status") as f:
        allowed = [l.split(":", 1)[1].strip() for l in f if l.startswith("Cpus_allowed_list")][0]
    rec = {"host": socket.gethostname(), "env": env, "master_ip": master_ip,
           "cpus_allowed": allowed}
    # The batch script has no SLURM_STEP_ID before Slurm 26.05, -5 from it.
    step = env.get("SLURM_STEP_ID", "batch")
    step = "batch" if step in ("-5", "4294967291") else step
    name = "%s.%s.%s.json" % (env.get("SLURM_JOB_ID"), step,
                              env.get("SLURM_PROCID", "0"))
    with open(os.path.join(out_dir, name), "w") as f:
        json.dump(rec, f)


if __name__ == "__main__":
    main()
