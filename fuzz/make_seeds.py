#!/usr/bin/env python3
# Copyright dist-train authors. SPDX-License-Identifier: MIT
"""Writes the binary seeds of the wire fuzzer (fuzz/corpus/wire/): one
first byte choosing the reader (wire_fuzzer.cc), then what a peer sends.
Frames as lib/runtime/wire.h and handshake.h define them. Re-run after a
protocol change: python3 fuzz/make_seeds.py"""

import os
import struct

HELLO, JOIN, ACCEPT, REJECT, TABLE, ABORT, BYE, AGREE = range(1, 9)
FRAMES, TINY, SERVER, SERVER_RANK1, CLIENT, ADDRESS_TABLE = range(6)
VERSION = 2
NO_SECRET = 0x10


def frame(kind, payload):
    return struct.pack(">IB", len(payload) + 1, kind) + payload


def string(s):
    return struct.pack(">I", len(s)) + s


def hello(has_secret):
    return frame(HELLO, b"DTRV" + struct.pack(">I", VERSION) + bytes(range(32)) +
                 struct.pack(">I", has_secret))


def join(rank, world, mac):
    return frame(JOIN, b"DTRV" + struct.pack(">I", VERSION) +
                 string(b"job-1000.0") + struct.pack(">III", rank, world, 41234) +
                 bytes(32) + string(mac))


SEEDS = {
    "frames-table-bye": bytes([FRAMES]) + frame(TABLE, b"\0\0\0\x02" + b"x" * 24)
    + frame(BYE, b""),
    "frames-oversized": bytes([FRAMES]) + struct.pack(">IB", 0x7fffffff, TABLE),
    "frames-empty-length": bytes([FRAMES]) + struct.pack(">IB", 0, TABLE),
    "tiny-limit": bytes([TINY | 0x60]) + frame(ABORT, b"abc") + frame(ABORT, b"abcdefgh"),
    "server-join-no-secret": bytes([SERVER | NO_SECRET]) + join(2, 4, b""),
    "server-join-secret": bytes([SERVER]) + join(2, 4, b"m" * 32),
    "server-join-rank0": bytes([SERVER | NO_SECRET]) + join(0, 4, b""),
    "server-join-world": bytes([SERVER_RANK1 | NO_SECRET]) + join(1, 5, b""),
    "server-join-wrong-job": bytes([SERVER | NO_SECRET]) + frame(
        JOIN, b"DTRV" + struct.pack(">I", VERSION) + string(b"other") +
        struct.pack(">III", 1, 4, 1) + bytes(32) + string(b"")),
    "client-accept-no-secret": bytes([CLIENT | NO_SECRET]) + hello(0)
    + frame(ACCEPT, string(b"")),
    "client-accept-secret": bytes([CLIENT]) + hello(1) + frame(ACCEPT, string(b"p" * 32)),
    "client-reject": bytes([CLIENT]) + hello(1)
    + frame(REJECT, b"it belongs to job 'x', this is 'y'"),
    "client-version": bytes([CLIENT]) + frame(
        HELLO, b"DTRV" + struct.pack(">I", VERSION + 1) + bytes(32) + struct.pack(">I", 1)),
    "client-http": bytes([CLIENT]) + b"GET / HTTP/1.0\r\n\r\n",
    # Issue #12 item 7: a stranger's text must reach no log line raw.
    "regress-forged-reject": bytes([CLIENT | NO_SECRET]) + hello(0)
    + frame(REJECT, b"no\ndist-train: rendezvous complete\x1b[2J"),
    "regress-forged-identity": bytes([SERVER | NO_SECRET]) + frame(
        JOIN, b"DTRV" + struct.pack(">I", VERSION) + string(b"x\n\x1b[31mforged") +
        struct.pack(">III", 1, 4, 1) + bytes(32) + string(b"")),
    # The address table of 4 ranks (runtime/address_table.h), whole and
    # with a host that is no host name.
    "table-two-hosts": bytes([ADDRESS_TABLE]) + struct.pack(">I", 2)
    + string(b"10.0.0.1") + string(b"node-2") + struct.pack(">8H", 0, 4000, 0, 4001, 1, 1, 1, 65535),
    "table-forged-host": bytes([ADDRESS_TABLE]) + struct.pack(">I", 1)
    + string(b"a\nb\x1b[2J") + struct.pack(">8H", 0, 1, 0, 2, 0, 3, 0, 4),
    "frames-agree": bytes([FRAMES]) + frame(AGREE, b"\0\0\0\x01") + frame(AGREE, b"/dt-0123"),
}


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "wire")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
