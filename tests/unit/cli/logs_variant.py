#!/usr/bin/env python3
"""Copies a folder of gpuscope event logs as one of the degenerate recordings the output
matrix needs:
  empty   each log keeps only its descriptive records (strings, process, device, context,
          NVTX domains, thread names, process end): a program that used CUDA but launched,
          copied and timed nothing.
  header  each log cut to its FileHeader: a target killed before the collector's first flush.
Log format (src/core/event_log_format.hpp): a FileHeader (header_size at offset 12), then
records of RecordHeader {u16 kind, u16 flags, u32 size} + payload.
Usage: logs_variant.py empty|header SRC.logs DST.logs
"""
import pathlib
import shutil
import struct
import sys

DESCRIPTIVE = {1, 2, 3, 4, 11, 12, 16}  # RecordKind: String, Process, Device, Context, NvtxDomain, ThreadName, ProcessEnd


def variant(mode: str, data: bytes) -> bytes:
    header_size = struct.unpack_from("<I", data, 12)[0]
    out = bytearray(data[:header_size])
    off = header_size
    while mode == "empty" and off + 8 <= len(data):
        kind, _flags, size = struct.unpack_from("<HHI", data, off)
        if kind in DESCRIPTIVE:
            out += data[off:off + 8 + size]
        off += 8 + size
    return bytes(out)


def main():
    mode, src, dst = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    if mode not in ("empty", "header"):
        sys.exit("logs_variant.py: mode must be empty or header")
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.suffix == ".gslog":
            (dst / f.name).write_bytes(variant(mode, f.read_bytes()))
        else:
            shutil.copy(f, dst / f.name)


if __name__ == "__main__":
    main()
