"""With torch.distributed initialized (gloo, env://, 2 ranks): agree_to_stop
and checkpoint go through it, never through a native communicator, and
checkpoints are torch.save files. One run of the ranks for all tests here
(importing torch takes seconds)."""
import os
import shutil
import sys
import tempfile
import unittest

import _ranks

_RANK = """
    import datetime, os
    import torch, torch.distributed as dist
    from dist_train import checkpoint, preemption
    # One rank may import torch a minute after the other on a loaded machine.
    dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=240))
    rank = dist.get_rank()
    if rank == 0:
        preemption.request_stop()
    first = preemption.agree_to_stop()
    preemption.clear_stop_request()
    print("agree", first, preemption.agree_to_stop())
    w = torch.arange(4, dtype=torch.float64) + rank
    checkpoint.save(7, {"w": w, "rank": rank})
    step, state = checkpoint.load(map_location="cpu")
    print("checkpoint", step, torch.equal(state["w"], w), state["rank"] == rank)
    with open(os.path.join(os.environ["DT_CHECKPOINT_DIR"], "step-7", "rank-%d.bin" % rank),
              "rb") as f:
        print("zip", f.read(4) == b"PK\\x03\\x04")
    print("native_communicator", preemption._default_comm is not None)
    # torch 1.13 and 2.6 can hang in destroy_process_group while a peer is
    # already gone (examples/train_ddp_preempt.py): leave together.
    dist.barrier()
    dist.destroy_process_group()
"""


class TorchDistributedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not _ranks.torch_available():
            raise unittest.SkipTest("torch is not importable by %s" % sys.executable)
        cls.tmp = tempfile.mkdtemp(prefix="dt-torch-")
        cls.results = _ranks.run_ranks(_RANK, 2, extra_env=dict(
            DT_CHECKPOINT_DIR=os.path.join(cls.tmp, "ckpt")), timeout=_ranks.TORCH_TIMEOUT)
        cls.lines = [dict(line.split(" ", 1) for line in r.stdout.splitlines())
                     for r in cls.results]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def _each_rank(self, key, want):
        for rank, r in enumerate(self.results):
            self.assertEqual(r.returncode, 0, _ranks.describe(self.results))
            self.assertEqual(self.lines[rank].get(key), want, _ranks.describe(self.results))

    def test_agree_to_stop_all_reduces_through_torch(self):
        self._each_rank("agree", "True False")

    def test_checkpoint_saves_with_torch_save_and_loads_with_torch_load(self):
        self._each_rank("checkpoint", "7 True True")
        self._each_rank("zip", "True")

    def test_no_native_communicator_is_made(self):
        self._each_rank("native_communicator", "False")


if __name__ == "__main__":
    unittest.main()
