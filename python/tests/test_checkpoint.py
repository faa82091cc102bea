"""dist_train.checkpoint: atomic multi-rank save, LATEST only after every
rank, load of the newest complete step, with pickle and with torch."""
import os
import shutil
import tempfile
import unittest

import _ranks

import dist_train
from dist_train import checkpoint

# Ranks without torch (it is made unimportable), over the native
# communicator, the directory from DT_CHECKPOINT_DIR. Rank FAIL_RANK fails
# step 2 the way FAIL says: "pickle" (its state cannot be pickled) or "dir"
# (its directory is refused: writable by others).
_SAVE_PICKLE = """
    import os, sys
    sys.modules["torch"] = None  # `import torch` raises ImportError
    import dist_train
    from dist_train import checkpoint
    rank = dist_train.env().rank
    checkpoint.save(1, {"rank": rank, "step": 1})
    state, dir = {"rank": rank, "step": 2, "data": list(range(rank * 1000))}, None
    if rank == int(os.environ.get("FAIL_RANK", "-1")):
        if os.environ["FAIL"] == "pickle":
            state["bad"] = lambda: None
        else:
            dir = os.environ["BAD_DIR"]
    try:
        checkpoint.save(2, state, dir=dir)
        print("saved")
    except Exception as e:
        print("raised", type(e).__name__, getattr(e, "code_name", ""), e)
    print("latest", checkpoint.latest_step())
    step, loaded = checkpoint.load()
    print("loaded", step, loaded["rank"] == rank, loaded["step"], len(loaded.get("data", [])))
    print("torch", "torch" in sys.modules and sys.modules["torch"] is not None)
"""

class CheckpointTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dt-ckpt-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.dir = os.path.join(self.tmp, "ckpt")

    def _save(self, size=3, **env):
        results = _ranks.run_ranks(_SAVE_PICKLE, size, extra_env=dict(DT_CHECKPOINT_DIR=self.dir,
                                                                      **env))
        for r in results:
            self.assertEqual(r.returncode, 0, _ranks.describe(results))
        return [r.stdout.splitlines() for r in results], results

    def test_every_rank_saves_and_loads_its_own_state_without_torch(self):
        lines, results = self._save()
        for rank, out in enumerate(lines):
            self.assertEqual(out, ["saved", "latest 2", "loaded 2 True 2 %d" % (rank * 1000),
                                   "torch False"], _ranks.describe(results))
        with _ranks.patched_environ(DT_CHECKPOINT_DIR=self.dir):
            self.assertEqual(checkpoint.latest_step(), 2)
            self.assertEqual(checkpoint.load(), (2, {"rank": 0, "step": 2, "data": []}))

    def test_a_state_that_cannot_be_pickled_fails_every_rank_and_keeps_latest(self):
        lines, results = self._save(FAIL_RANK=1, FAIL="pickle")
        self.assertTrue(lines[1][0].startswith("raised PicklingError"), lines[1])
        for rank in (0, 2):
            self.assertEqual(lines[rank][0], "raised DistTrainError Unavailable checkpoint step 2"
                             " in %s: rank 1 failed to write its file; LATEST is unchanged"
                             % self.dir, _ranks.describe(results))
        for rank, out in enumerate(lines):
            self.assertEqual(out[1:3], ["latest 1", "loaded 1 True 1 0"], out)
        self.assertEqual(checkpoint.latest_step(self.dir), 1)

    def test_a_refused_directory_fails_every_rank_and_keeps_latest(self):
        bad = os.path.join(self.tmp, "open-to-all")
        os.mkdir(bad)
        os.chmod(bad, 0o777)
        lines, results = self._save(FAIL_RANK=2, FAIL="dir", BAD_DIR=bad)
        self.assertTrue(lines[2][0].startswith("raised DistTrainError"), lines[2])
        self.assertIn(bad, lines[2][0])
        for rank in (0, 1):
            self.assertIn("rank 2 failed to write its file; LATEST is unchanged", lines[rank][0])
        for out in lines:
            self.assertEqual(out[1], "latest 1", out)

    def test_no_dir_and_no_dt_checkpoint_dir_is_an_error_naming_it(self):
        with _ranks.patched_environ():
            for call in (lambda: checkpoint.save(1, {}), checkpoint.load,
                         checkpoint.latest_step):
                with self.assertRaises(dist_train.DistTrainError) as cm:
                    call()
                self.assertEqual(cm.exception.code, dist_train.NOT_FOUND)
                self.assertEqual(str(cm.exception),
                                 "checkpoint: no dir given and DT_CHECKPOINT_DIR is not set")

    def test_nothing_complete_is_none(self):
        os.mkdir(self.dir, 0o700)
        with _ranks.patched_environ():
            self.assertIsNone(checkpoint.load(self.dir))
            self.assertIsNone(checkpoint.latest_step(self.dir))

    def test_a_bad_step_is_a_value_error(self):
        with self.assertRaisesRegex(ValueError, r"^step=-1 is not an int >= 0"):
            checkpoint.save(-1, {}, dir=self.dir)


if __name__ == "__main__":
    unittest.main()
