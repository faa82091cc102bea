#!/usr/bin/python3
"""Debian 12's torchrun (torch 1.13.1) crashes at start on Python 3.11:
iterating the IntFlag `Std` no longer yields its zero member, so
Std.from_str("0") returns None. This runs the real torchrun main() with
that one function fixed (upstream fixed it in torch 2.x); everything else,
including reading its flags from PET_* variables, is torchrun's own.
Debian 13+ (torch 2.x without libuv) needs the store fix below."""
import os
import sys

import torch

# Debian 13+'s torch (2.x) is built without libuv, which TCPStore asks for by
# default. USE_LIBUV=0 reaches the workers' env:// stores, but torchrun's
# static rendezvous creates its store without looking at it: give it the
# legacy store too.
os.environ.setdefault("USE_LIBUV", "0")
if os.environ["USE_LIBUV"] == "0" and int(torch.__version__.split(".")[0]) >= 2:
    from torch.distributed.elastic.rendezvous import static_tcp_rendezvous

    _TCPStore = static_tcp_rendezvous.TCPStore

    def _legacy_store(*args, **kwargs):
        kwargs.setdefault("use_libuv", False)
        return _TCPStore(*args, **kwargs)

    static_tcp_rendezvous.TCPStore = _legacy_store

from torch.distributed.elastic.multiprocessing.api import Std

_from_str = Std.from_str


def _fixed_from_str(vm):
    return Std.NONE if vm == "0" else _from_str(vm)


Std.from_str = staticmethod(_fixed_from_str)

from torch.distributed.run import main  # noqa: E402

sys.exit(main())
