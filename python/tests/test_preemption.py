"""dist_train.preemption: the C stop handler, agree_to_stop over the native
communicator and torch.distributed, seconds_left, requeue."""
import signal
import subprocess
import sys
import textwrap
import time
import unittest

import _ranks

import dist_train
from dist_train import preemption

# A worker that installs the handler, runs `pre`, says "ready", runs `body`,
# then blocks in read(2) on stdin until the test writes a line after the signal(s).
_WORKER = """
    import os, signal, sys
    from dist_train import preemption
    preemption.install_stop_handler(%s)
    %s
    print("ready", signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL, flush=True)
    %s
    line = sys.stdin.readline()
    print("read", line.strip(), "stop_requested", preemption.stop_requested(), flush=True)
"""


class StopHandlerTest(unittest.TestCase):
    def _signal_worker(self, handler_arg, signum, env=None, pre="", body="", signals=1):
        code = textwrap.dedent(_WORKER % (handler_arg, pre, body))
        proc = subprocess.Popen([sys.executable, "-c", code],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env or _ranks.clean_env())
        try:
            ready = proc.stdout.readline()
            for _ in range(signals):
                proc.send_signal(signum)
                time.sleep(0.05)
            out, err = proc.communicate("go\n", timeout=_ranks.TORCH_TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        return ready + out, err, proc.returncode

    def _assert_stopped_cleanly(self, result):
        out, err, rc = result
        self.assertEqual(rc, 0, err)
        self.assertNotIn("Traceback", err)
        self.assertIn("read go stop_requested True", out)

    def test_default_signal_is_usr1_and_a_read_is_not_interrupted(self):
        result = self._signal_worker("", signal.SIGUSR1)
        self._assert_stopped_cleanly(result)

    def test_python_does_not_see_the_handler_it_is_the_library_s(self):
        out, err, rc = self._signal_worker("", signal.SIGUSR1)
        self.assertTrue(out.startswith("ready True"), out + err)

    def test_a_signal_name(self):
        self._assert_stopped_cleanly(self._signal_worker("'USR2'", signal.SIGUSR2))

    def test_a_sig_prefixed_name_and_a_number(self):
        self._assert_stopped_cleanly(self._signal_worker("'SIGUSR2'", signal.SIGUSR2))
        self._assert_stopped_cleanly(self._signal_worker("signal.SIGUSR2", signal.SIGUSR2))

    def test_dt_preempt_signal_when_none_given(self):
        env = _ranks.clean_env(DT_PREEMPT_SIGNAL="USR2")
        self._assert_stopped_cleanly(self._signal_worker("None", signal.SIGUSR2, env=env))

    def test_without_the_handler_the_signal_kills(self):
        # The worker above, its handler not installed: what the tests guard.
        out, err, rc = self._signal_worker("", signal.SIGUSR1,
                                           pre="signal.signal(signal.SIGUSR1, signal.SIG_DFL)")
        self.assertEqual(rc, -signal.SIGUSR1, out + err)

    def test_signals_while_importing_torch(self):
        if not _ranks.torch_available():
            self.skipTest("torch is not importable by %s" % sys.executable)
        result = self._signal_worker("", signal.SIGUSR1, signals=10,
                                     body="import torch, torch.distributed")
        self._assert_stopped_cleanly(result)

    def test_an_unknown_name_is_a_value_error(self):
        with self.assertRaisesRegex(ValueError, r"^signal='NOPE' is not a signal name"):
            preemption.install_stop_handler("NOPE")
        with self.assertRaisesRegex(TypeError, r"^signal is a float"):
            preemption.install_stop_handler(1.5)

    def test_only_the_preemption_signals(self):
        for sig, name in (("KILL", "SIGKILL"), (signal.SIGSEGV, "SIGSEGV"),
                          ("SIGCHLD", "SIGCHLD")):
            with self.assertRaisesRegex(ValueError, r"^signal=%s is not one of USR1, USR2, "
                                        r"TERM, INT, HUP or URG$" % name):
                preemption.install_stop_handler(sig)

    def test_a_bad_dt_preempt_signal_is_a_dist_train_error_naming_it(self):
        with _ranks.patched_environ(DT_PREEMPT_SIGNAL="KILL"):
            with self.assertRaises(dist_train.DistTrainError) as cm:
                preemption.install_stop_handler()
        self.assertEqual(cm.exception.code, dist_train.INVALID_ARGUMENT)
        self.assertIn("DT_PREEMPT_SIGNAL='KILL'", str(cm.exception))

    def test_request_and_clear(self):
        preemption.request_stop()
        self.assertTrue(preemption.stop_requested())
        preemption.clear_stop_request()
        self.assertFalse(preemption.stop_requested())


class SecondsLeftTest(unittest.TestCase):
    def test_from_dt_job_deadline_outside_slurm(self):
        with _ranks.patched_environ(DT_JOB_DEADLINE=int(time.time()) + 100):
            left = preemption.seconds_left()
        self.assertTrue(95 <= left <= 100, left)

    def test_none_without_a_deadline(self):
        with _ranks.patched_environ():
            self.assertIsNone(preemption.seconds_left())

    def test_a_bad_deadline_is_an_error(self):
        with _ranks.patched_environ(DT_JOB_DEADLINE="12x"):
            with self.assertRaises(dist_train.DistTrainError) as cm:
                preemption.seconds_left()
        self.assertIn("DT_JOB_DEADLINE='12x'", str(cm.exception))


class RequeueTest(unittest.TestCase):
    def test_outside_a_job_is_not_found_naming_slurm_job_id(self):
        with _ranks.patched_environ():
            with self.assertRaises(dist_train.DistTrainError) as cm:
                preemption.requeue()
        self.assertEqual(cm.exception.code, dist_train.NOT_FOUND, str(cm.exception))
        self.assertIn("SLURM_JOB_ID", str(cm.exception))

    def test_the_limit_reached_is_false(self):
        with _ranks.patched_environ(SLURM_JOB_ID=1, SLURM_RESTART_COUNT=2):
            self.assertIs(preemption.requeue(max_requeues=2), False)

    def test_a_bad_maximum_is_a_value_error(self):
        with self.assertRaisesRegex(ValueError, r"^max_requeues=-1 is not a count"):
            preemption.requeue(max_requeues=-1)


_AGREE_NATIVE = """
    import dist_train
    from dist_train import preemption
    rank = dist_train.env().rank
    if rank == 1:
        preemption.request_stop()
    first = preemption.agree_to_stop()
    preemption.clear_stop_request()
    second = preemption.agree_to_stop()
    with dist_train.Communicator() as comm:
        if rank == 2:
            preemption.request_stop()
        third = preemption.agree_to_stop(comm)
    print(first, second, third, preemption._default_comm.size)
"""

class AgreeToStopTest(unittest.TestCase):
    def test_native_every_rank_stops_when_one_asks(self):
        results = _ranks.run_ranks(_AGREE_NATIVE, 3)
        for r in results:
            self.assertEqual((r.returncode, r.stdout), (0, "True False True 3\n"),
                             _ranks.describe(results))


if __name__ == "__main__":
    unittest.main()
