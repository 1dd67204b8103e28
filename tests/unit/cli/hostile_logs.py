#!/usr/bin/env python3
"""Copies a folder of gpuscope event logs, replacing the text the traced program controls
(kernel names, NVTX messages, host, command line, device name) with hostile names: quotes,
backslashes, commas, newlines, <script>, </svg>, ]]>, entities, control characters and
bytes that are not UTF-8. Each name keeps a unique index so names stay distinct.

Log format (src/core/event_log_format.hpp): a FileHeader (header_size at offset 12), then
records of RecordHeader {u16 kind, u16 flags, u32 size} + payload; kind 1 = String:
{u64 id} + bytes. Usage: hostile_logs.py SRC.logs DST.logs
"""
import pathlib
import shutil
import struct
import sys

HOSTILE = (b'"q" \'a\' \\b, c\nd\r\te<script>alert(1)</script></svg>]]>&amp;\x01\x07\x1b[31m\x7f'
           b'\xff\xfe\xc3 end')
PREFIXES = (b"_Z", b"sm80_", b"sm90_", b"nvjet", b"step ", b"NVIDIA ")


def hostile(value: bytes, index: int, host: bool) -> bytes:
    if host or value.startswith(PREFIXES) or b"\0" in value:
        return b"k%d " % index + HOSTILE
    return value


def rewrite(data: bytes) -> bytes:
    header_size = struct.unpack_from("<I", data, 12)[0]
    out = bytearray(data[:header_size])
    off, index, first = header_size, 0, True
    while off + 8 <= len(data):
        kind, flags, size = struct.unpack_from("<HHI", data, off)
        payload = data[off + 8:off + 8 + size]
        if kind == 1 and len(payload) >= 8:
            sid, value = payload[:8], payload[8:]
            new = hostile(value, index, host=first)  # the first string is the host name
            first = False
            index += 1
            payload = sid + new
        out += struct.pack("<HHI", kind, flags, len(payload)) + payload
        off += 8 + size
    return bytes(out)


def main():
    src, dst = map(pathlib.Path, sys.argv[1:3])
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.suffix == ".gslog":
            (dst / f.name).write_bytes(rewrite(f.read_bytes()))
        else:
            shutil.copy(f, dst / f.name)


if __name__ == "__main__":
    main()
