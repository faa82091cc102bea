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
        """, {"DT_WATCHDOG": "5", "DT_WATCHDOG_DIR": self.dir})
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


if __name__ == "__main__":
    unittest.main()
