#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ci/hip_code_objects.py MODULE TARGET...

Lists the GPU code objects of a HIP module (libattnmeta_hip.so): reads its
.hip_fatbin section, the offload bundle clang writes there, and for each
amdgcn entry both the target the bundle names and the processor the code
object's own ELF header says (EF_AMDGPU_MACH). Fails unless every listed
TARGET has exactly one code object, there is none for another target, and
each code object's header agrees with its bundle entry."""

import struct
import sys

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
EM_AMDGPU = 224
# EF_AMDGPU_MACH values of the processors (LLVM's ELF.h).
MACH = {0x2F: "gfx908", 0x3F: "gfx90a", 0x40: "gfx940", 0x4B: "gfx941", 0x4C: "gfx942",
        0x4F: "gfx950", 0x36: "gfx1030", 0x41: "gfx1100"}


def section(data, wanted):
    """Bytes of the named section of a 64-bit little-endian ELF file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    for name, _type, _flags, _addr, offset, size in headers:
        end = data.index(b"\0", names + name)
        if data[names + name:end].decode() == wanted:
            return data[offset:offset + size]
    return None


def bundles(fatbin):
    """(triple, code object) of every entry of every bundle in the section."""
    at = fatbin.find(MAGIC)
    if at < 0:
        sys.exit("no offload bundle in .hip_fatbin (compressed bundles are not read)")
    while at >= 0:
        count, = struct.unpack_from("<Q", fatbin, at + len(MAGIC))
        cursor = at + len(MAGIC) + 8
        for _ in range(count):
            offset, size, triple_size = struct.unpack_from("<QQQ", fatbin, cursor)
            cursor += 24
            triple = fatbin[cursor:cursor + triple_size].decode()
            cursor += triple_size
            yield triple, fatbin[at + offset:at + offset + size]
        at = fatbin.find(MAGIC, cursor)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    fatbin = section(data, ".hip_fatbin")
    if fatbin is None:
        sys.exit("FAIL %s has no .hip_fatbin section" % sys.argv[1])
    want = sys.argv[2:]
    found = []
    errors = []
    for triple, code in bundles(fatbin):
        if "amdgcn" not in triple:
            continue
        named = triple.rsplit("-", 1)[-1].split(":")[0]
        machine, = struct.unpack_from("<H", code, 18)
        flags, = struct.unpack_from("<I", code, 48)
        actual = MACH.get(flags & 0xFF, "unknown mach 0x%x" % (flags & 0xFF))
        print("code object %-40s ELF processor %s, %d bytes" % (triple, actual, len(code)))
        if code[:4] != b"\x7fELF" or machine != EM_AMDGPU:
            errors.append("%s: not an AMDGPU ELF code object" % triple)
        elif actual != named:
            errors.append("%s: the code object's header says %s" % (triple, actual))
        found.append(named)
    for target in want:
        if found.count(target) != 1:
            errors.append("%d code objects for %s, expected 1" % (found.count(target), target))
    for target in sorted(set(found) - set(want)):
        errors.append("a code object for %s, which is not a target" % target)
    if errors:
        print("FAIL " + "; ".join(errors))
        return 1
    print("ok   one code object for each of %s" % " ".join(want))
    return 0


if __name__ == "__main__":
    sys.exit(main())
