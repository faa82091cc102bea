"""dist_train.watchdog: a hung Python worker's stacks (every thread) and
summary are written and it is killed; heartbeats and torch optimizer
steps keep it alive; a bad DT_WATCHDOG is refused by name."""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import _ranks

import dist_train


def _run(code, env_extra, timeout=60):
    env = _ranks.clean_env()
    env.update(env_extra)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    return proc, time.monotonic() - start


def _read(path):
    with open(path) as f:
        return f.read()


class WatchdogTest(unittest.TestCase):
    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.dir = self._dir.name

    def tearDown(self):
        self._dir.cleanup()

    def test_a_hung_worker_leaves_every_threads_stack_and_is_killed(self):
        proc, took = _run("""
            import threading, time
            import dist_train
            assert dist_train.install_watchdog()
            def other_thread_fn():
                time.sleep(1000)
            threading.Thread(target=other_thread_fn, daemon=True).start()
            def stuck_here():
                time.sleep(1000)
            stuck_here()
        """, {"DT_WATCHDOG": "5", "DT_WATCHDOG_DIR": self.dir})
        self.assertEqual(proc.returncode, -signal.SIGKILL, proc.stderr)
        self.assertLess(took, 5 + 30)
        self.assertIn("dist-train: watchdog: no rank progressed for 5 s; 1 of 1 ranks reported",
                      proc.stderr)
        self.assertIn("did not progress: waiting, after no collective yet", proc.stderr)
        self.assertIn("dist-train: watchdog: ending the step", proc.stderr)
        [step] = glob.glob(os.path.join(self.dir, "dist-train-watchdog-*"))
        self.assertEqual(os.stat(step).st_mode & 0o777, 0o700)
        stacks = _read(os.path.join(step, "rank-0.stacks"))
        self.assertIn("stuck_here", stacks)
        self.assertIn("other_thread_fn", stacks)
        self.assertIn("did not progress", _read(os.path.join(step, "summary.txt")))

    def test_heartbeats_keep_a_slow_loop_alive(self):
        proc, _ = _run("""
            import time
            import dist_train
            assert dist_train.install_watchdog()
            for _ in range(16):
                time.sleep(0.5)
                dist_train.heartbeat()
            print("done")
        """, {"DT_WATCHDOG": "5", "DT_WATCHDOG_DIR": self.dir})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "done\n")
        self.assertEqual(glob.glob(os.path.join(self.dir, "*", "summary.txt")), [])

    @unittest.skipIf(not _ranks.torch_available(), "torch is not installed")
    def test_torch_optimizer_steps_count_as_progress(self):
        proc, _ = _run("""
            import time
            import torch
            import dist_train; dist_train.install_watchdog()
            model = torch.nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(16):
                model(torch.ones(4)).sum().backward()
                opt.step()
                opt.zero_grad()
                time.sleep(0.5)
            print("done")
        """, {"DT_WATCHDOG": "5", "DT_WATCHDOG_DIR": self.dir}, timeout=_ranks.TORCH_TIMEOUT)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(glob.glob(os.path.join(self.dir, "*", "summary.txt")), [])

    def test_without_dt_watchdog_nothing_starts(self):
        proc, _ = _run("""
            import dist_train
            print(dist_train.install_watchdog(), dist_train.watchdog.running())
        """, {})
        self.assertEqual(proc.stdout.strip(), "False False", proc.stderr)

    def test_a_bad_value_is_refused_by_name(self):
        proc, _ = _run("""
            import dist_train
            try:
                dist_train.install_watchdog()
            except dist_train.DistTrainError as e:
                print(e)
        """, {"DT_WATCHDOG": "soon"})
        self.assertIn("DT_WATCHDOG='soon' is not an integer from 5 to 86400", proc.stdout,
                      proc.stderr)

    def _live_record(self):
        [live] = glob.glob(os.path.join(self.dir, "*", "rank-0.live"))
        return dict(line.split("=", 1) for line in _read(live).splitlines())

    def test_a_loops_compute_time_is_its_time_outside_collectives_per_step(self):
        proc, _ = _run("""
            import time
            import dist_train
            assert dist_train.install_watchdog()
            for _ in range(30):
                time.sleep(0.05)
                dist_train.heartbeat()
            time.sleep(0.6)  # the watchdog's last look
        """, {"DT_WATCHDOG": "5", "DT_WATCHDOG_DIR": self.dir})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        live = self._live_record()
        self.assertEqual(live["steps"], "30")
        self.assertGreater(int(live["windows"]), 0)
        self.assertEqual(live["ended"], "1")
        # 50 ms of sleep per step is compute (no collectives here).
        self.assertGreater(int(live["compute_us"]), 45000, live)
        self.assertLess(int(live["compute_us"]), 90000, live)

    @unittest.skipIf(not _ranks.torch_available(), "torch is not installed")
    def test_ddp_forward_time_is_the_compute_time_of_an_unchanged_script(self):
        # One added line; the step's other 100 ms are not the forward pass.
        proc, _ = _run("""
            import os, tempfile, time
            import torch
            import dist_train; dist_train.install_watchdog()
            import torch.distributed as dist
            class Slow(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = torch.nn.Linear(4, 1)
                def forward(self, x):
                    time.sleep(0.03)
                    return self.lin(x)
            dist.init_process_group("gloo", init_method="file://" + tempfile.mktemp(),
                                    rank=0, world_size=1)
            model = torch.nn.parallel.DistributedDataParallel(Slow())
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(30):
                opt.zero_grad()
                model(torch.ones(4)).sum().backward()
                opt.step()
                time.sleep(0.1)
            time.sleep(0.6)
            import copy, pickle
            ema = copy.deepcopy(model.module)  # its own forward, not the model's
            with torch.no_grad():
                ema.lin.weight.zero_()
                ema.lin.bias.zero_()
            assert ema(torch.ones(4)).item() == 0.0
            assert model.module(torch.ones(4)).item() != 0.0
            pickle.dumps(model.module)
            print("done")
        """, {"DT_WATCHDOG": "5", "DT_WATCHDOG_DIR": self.dir}, timeout=_ranks.TORCH_TIMEOUT)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        live = self._live_record()
        self.assertGreaterEqual(int(live["steps"]), 29, live)
        self.assertGreater(int(live["compute_us"]), 28000, live)
        self.assertLess(int(live["compute_us"]), 60000, live)

    def test_report_compute_time_is_what_the_report_compares(self):
        proc, _ = _run("""
            import time
            import dist_train
            assert dist_train.install_watchdog()
            for _ in range(30):
                time.sleep(0.04)
                dist_train.report_compute_time(0.007)
                dist_train.heartbeat()
            time.sleep(0.6)
        """, {"DT_WATCHDOG": "5", "DT_WATCHDOG_DIR": self.dir})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # 7 ms reported per step (a sample between the two calls: +-1 step)
        self.assertAlmostEqual(int(self._live_record()["compute_us"]), 7000, delta=1500)


if __name__ == "__main__":
    unittest.main()
