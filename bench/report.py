#!/usr/bin/python3
"""Reads Google Benchmark JSON (stdin) and prints the ratios we claim."""
import json
import sys

rows = {b["name"]: b["real_time"] * {"ms": 1e3, "us": 1.0, "ns": 1e-3}[b["time_unit"]]
        for b in json.load(sys.stdin)["benchmarks"]}
live = rows["BM_LoadLiveDiscovery"]
cache = rows["BM_LoadThisMachineFromXmlCache"]
load16 = rows["BM_Load16GpuXml"]
plan16 = rows["BM_Plan16GpuNode/16"]
print("this machine: live hwloc discovery %.0f us, from the XML cache %.0f us: cache %.1fx faster"
      % (live, cache, live / cache))
print("16-GPU topology: load from XML %.0f us, plan 16 ranks %.1f us (plan = %.1f%% of load), "
      "64 ranks %.1f us" % (load16, plan16, 100 * plan16 / load16, rows["BM_Plan16GpuNode/64"]))
model16 = rows.get("BM_Load16GpuSavedModel")
if model16:
    print("16-GPU topology: the saved node model loads in %.0f us, the XML in %.0f us: %.0fx faster"
          % (model16, load16, load16 / model16))
