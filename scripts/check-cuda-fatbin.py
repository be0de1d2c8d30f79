#!/usr/bin/env python3
"""Checks that CUDA objects carry the expected GPU code: for every object file (or every member of
a static archive) with a .nv_fatbin section, lists the fatbinary's entries (ELF = machine code for
an sm_XX, PTX = virtual compute_XX code for the JIT) and requires the requested ones.

  check-cuda-fatbin.py libcb_gpu.a --elf 90 --ptx 90

Works without cuobjdump (not shipped with every toolkit install): reads the ELF section table and
the fatbinary headers directly. Exit 0 when every object with device code has them, 1 otherwise.
"""
import argparse
import struct
import sys

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2


def elf_section(data, name):
    """Returns the bytes of section `name` of a 64-bit little-endian ELF image, or None."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    strtab = header(shstrndx)
    str_off = strtab[4]
    for i in range(shnum):
        h = header(i)
        start = str_off + h[0]
        sec_name = data[start:data.index(b"\0", start)].decode()
        if sec_name == name:
            return data[h[4]:h[4] + h[5]]
    return None


def fatbin_entries(fatbin):
    """Yields (kind, sm) for every entry of every fatbinary in the section."""
    pos = 0
    while pos + 16 <= len(fatbin):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", fatbin, pos)
        if magic != FATBIN_MAGIC:
            break
        entry = pos + header_size
        end = entry + fat_size
        while entry < end:
            kind, _unk, entry_header, size = struct.unpack_from("<HHIQ", fatbin, entry)
            sm, = struct.unpack_from("<I", fatbin, entry + 28)
            yield kind, sm
            entry += entry_header + size
        pos = end


def archive_members(data):
    """Yields (name, bytes) of the members of an ar archive (GNU format)."""
    pos = 8
    names = b""
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode().strip()
        size = int(header[48:58].decode().strip())
        body = data[pos + 60:pos + 60 + size]
        if name == "//":
            names = body
        elif name.startswith("/") and name[1:].isdigit():
            off = int(name[1:])
            name = names[off:names.index(b"/\n", off)].decode()
        if name not in ("/", "//"):
            yield name.rstrip("/"), body
        pos += 60 + size + (size & 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="object file or static archive")
    parser.add_argument("--elf", type=int, action="append", default=[], help="required sm_XX code")
    parser.add_argument("--ptx", type=int, action="append", default=[], help="required PTX arch")
    args = parser.parse_args()

    with open(args.file, "rb") as f:
        data = f.read()
    objects = list(archive_members(data)) if data.startswith(b"!<arch>\n") else [(args.file, data)]

    checked, ok = 0, True
    for name, obj in objects:
        section = elf_section(obj, ".nv_fatbin")
        if section is None:
            continue
        checked += 1
        entries = set(fatbin_entries(section))
        have = ", ".join(f"{'sm' if k == KIND_ELF else 'compute'}_{sm}" for k, sm in sorted(entries))
        missing = [f"sm_{sm}" for sm in args.elf if (KIND_ELF, sm) not in entries]
        missing += [f"compute_{sm} (PTX)" for sm in args.ptx if (KIND_PTX, sm) not in entries]
        print(f"{name}: {have or 'no entries'}")
        if missing:
            print(f"{name}: missing {', '.join(missing)}")
            ok = False
    if checked == 0:
        print(f"{args.file}: no object with a .nv_fatbin section (no device code)")
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
