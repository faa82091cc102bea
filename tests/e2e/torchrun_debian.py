#!/usr/bin/python3
"""Debian 12's torchrun (torch 1.13.1) crashes at start on Python 3.11:
iterating the IntFlag `Std` no longer yields its zero member, so
Std.from_str("0") returns None. This runs the real torchrun main() with
that one function fixed (upstream fixed it in torch 2.x); everything else,
including reading its flags from PET_* variables, is torchrun's own."""
import sys

from torch.distributed.elastic.multiprocessing.api import Std

_from_str = Std.from_str


def _fixed_from_str(vm):
    return Std.NONE if vm == "0" else _from_str(vm)


Std.from_str = staticmethod(_fixed_from_str)

from torch.distributed.run import main  # noqa: E402

sys.exit(main())
