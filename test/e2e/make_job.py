#!/usr/bin/env python3
"""make_job.py OUT NRANKS BASE HEAVY HEAVY_RANK: a generated job directory
(ctest e2e.job_ranks).  Rank r is a copy of run directory BASE (HEAVY for
HEAVY_RANK) named r<r>-node-<1000+r>, with a PPW_RUN_MPI record (rank r of
NRANKS) appended to its run.ppw; the samples, events and profile files are
hard links.  Also: unfinish OUT/RANKDIR (turns its FINISH record into an
unknown kind) and rebuild OUT/RANKDIR (changes its build-id in every file)."""
import os, shutil, struct, sys

MPI, FINISH = 14, 12


def records(data):
    hsize, = struct.unpack_from('<I', data, 12)
    committed, = struct.unpack_from('<Q', data, 16)
    off = hsize
    while off < hsize + committed:
        kind, size = struct.unpack_from('<II', data, off)
        yield off, kind, size
        off += size


def add_mpi(path, rank, size):
    data = bytearray(open(path, 'rb').read())
    hsize, = struct.unpack_from('<I', data, 12)
    committed, = struct.unpack_from('<Q', data, 16)
    rec = struct.pack('<IIIIQQQQQ', MPI, 64, rank, size, 1000, 1000, 0, 0, 4242) + b'node\0\0\0\0'
    at = hsize + committed
    if len(data) < at + len(rec):
        data.extend(b'\0' * (at + len(rec) - len(data)))
    data[at:at + len(rec)] = rec
    struct.pack_into('<Q', data, 16, committed + len(rec))
    open(path, 'wb').write(data)


def main():
    if sys.argv[1] == 'unfinish':
        path = os.path.join(sys.argv[2], 'run.ppw')
        data = bytearray(open(path, 'rb').read())
        # As a crash leaves it: the records end before FINISH (and the
        # checksum after it), and the file is not closed.
        for off, kind, _ in list(records(data)):
            if kind == FINISH:
                header_size = struct.unpack_from('<I', data, 12)[0]
                struct.pack_into('<Q', data, 16, off - header_size)
                flags = struct.unpack_from('<I', data, 32)[0]
                struct.pack_into('<I', data, 32, flags & ~1)
                break
        open(path, 'wb').write(data)
        return
    if sys.argv[1] == 'rebuild':
        for name in os.listdir(sys.argv[2]):
            path = os.path.join(sys.argv[2], name)
            data = bytearray(open(path, 'rb').read())
            os.unlink(path)  # break the hard link
            data[40] ^= 0xff
            open(path, 'wb').write(data)
        return
    out, n, base, heavy, heavy_rank = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
    os.makedirs(out)
    for r in range(n):
        src = heavy if r == heavy_rank else base
        d = os.path.join(out, 'r%d-node-%d' % (r, 1000 + r))
        os.mkdir(d)
        for name in os.listdir(src):
            if name == 'run.ppw':
                shutil.copyfile(os.path.join(src, name), os.path.join(d, name))
            else:
                os.link(os.path.join(src, name), os.path.join(d, name))
        add_mpi(os.path.join(d, 'run.ppw'), r, n)


main()
