"""The write-ahead log of a model server: one record per learning batch, each with its length and a CRC32.

Record layout (little-endian)::

    seq     uint64   index of the batch's first example in the server's stream (0-based)
    length  uint32   payload bytes
    crc     uint32   CRC32 of seq, length and payload
    payload bytes    the batch's example lines, exactly as learned (text, one example per line)

``append`` writes a record with one ``write`` and returns after ``fsync``: an acknowledged batch is on disk.
``write`` then ``sync`` split the two, so that one ``fsync`` (group commit) covers every record written before it.
Threads that fsync the log concurrently each use a descriptor of their own, ``sync(slot)`` (see
:class:`WriteAheadLog`), so that each of them sees a write-back error.
A ``write`` that fails (a full disk) cuts the file back to its length before the record, so that the next record
follows the last whole one; when that cut fails too, it raises :class:`TornRecordError`.
A crash in the middle of ``append`` leaves a torn last record; :func:`read_records` detects it (short read or
CRC mismatch) and reports the offset of the last whole record, where the log is then cut.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "wal-0.log")
>>> log = WriteAheadLog(path)
>>> log.append(0, b"1 1:0.5\\n"); log.append(1, b"-1 2:1\\n-1 3:1\\n"); log.close()
>>> with open(path, "ab") as f: _ = f.write(b"\\x02\\x00torn")
>>> records, good, torn = read_records(path)
>>> [(seq, payload.count(b"\\n")) for seq, payload in records], torn
([(0, 1), (1, 2)], True)
"""

import os
import re
import struct
import zlib

__all__ = ["WriteAheadLog", "TornRecordError", "read_records", "fsync_path", "HEADER"]

HEADER = struct.Struct("<QII")
_writev = getattr(os, "writev", None)  # POSIX
MAX_RECORD = 1 << 31


def _crc(seq, payload):
    return zlib.crc32(payload, zlib.crc32(struct.pack("<QI", seq, len(payload)))) & 0xFFFFFFFF


def fsync_path(path):
    """fsync a file, or a directory (so that a file created, renamed or removed in it survives a crash), by path."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_records(path):
    """``(records, good_bytes, torn)``: the whole records ``[(seq, payload), ...]`` of the log at ``path``, the
    byte offset after the last whole record, and whether bytes after it (a torn last record) remain.

    The bytes after the last whole record are a torn last record (a write cut short by a crash, never
    acknowledged): a record that ends past the end of the file, or one that fails its checksum with nothing but
    zeros after it (a file that the crash extended). A record that fails its checksum with other bytes after it,
    or any tail in which a whole record (its checksum right) starts, is damage inside the log (a wrong byte, or a
    length that runs past the records after it): ``ValueError``."""
    with open(path, "rb") as f:
        data = f.read()
    records = []
    pos = 0
    while pos + HEADER.size <= len(data):
        seq, length, crc = HEADER.unpack_from(data, pos)
        end = pos + HEADER.size + length
        if end > len(data):
            break
        payload = data[pos + HEADER.size : end]
        if _crc(seq, payload) != crc:
            if data[end:].strip(b"\0"):  # bytes follow, not only the zeros of a file extended by a crash
                raise ValueError(
                    f"{path}: the record at byte {pos} fails its checksum and {len(data) - end} "
                    "bytes follow it: the log is corrupted (not a torn last record)."
                )
            break
        records.append((seq, payload))
        pos = end
    if pos < len(data):
        named = re.match(r"wal-(\d+)\.log$", os.path.basename(path))
        base = records[-1][0] if records else int(named.group(1)) if named else 0
        later = _next_whole_record(data, pos + 1, base, base + len(data) if records or named else None)
        if later is not None:  # not a write cut short but damage inside the log
            raise ValueError(
                f"{path}: the record at byte {pos} is damaged (its length or checksum is wrong) and a whole "
                f"record follows at byte {later}: the log is corrupted (not a torn last record)."
            )
    return records, pos, pos < len(data)


def _next_whole_record(data, start, low, high, chunk=1 << 20):
    """The offset of the first whole record (a header whose length fits and whose checksum is right) at or
    after byte ``start`` of ``data``, with a sequence number in ``low..high`` (None: no upper bound); None if
    there is none. The candidate headers are screened with numpy (a length within the data, a sequence number
    in range), ``chunk`` offsets at a time; only those pass to the checksum."""
    import numpy as np

    size = len(data)
    for first in range(start, size - HEADER.size + 1, chunk):
        n = min(chunk, size - HEADER.size + 1 - first)
        seqs = np.ndarray((n,), "<u8", buffer=data, offset=first, strides=(1,))
        lengths = np.ndarray((n,), "<u4", buffer=data, offset=first + 8, strides=(1,))
        room = size - HEADER.size - np.arange(first, first + n, dtype=np.int64)  # payload bytes after each offset
        ok = (lengths > 0) & (lengths.astype(np.int64) <= room) & (seqs >= np.uint64(low))
        if high is not None:
            ok &= seqs <= np.uint64(high)
        for q in (np.flatnonzero(ok) + first).tolist():
            seq, length, crc = HEADER.unpack_from(data, q)
            if _crc(seq, data[q + HEADER.size : q + HEADER.size + length]) == crc:
                return q
    return None


class TornRecordError(OSError):
    """A record's write failed and the bytes of it that reached the file could not be cut off: the log ends
    with a torn record, and a record appended after it would make the log look damaged at the next start."""


def _reason(exc):
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc) or type(exc).__name__


class WriteAheadLog:
    """Append-only log file; ``append`` returns once the record is durable (``fsync``). ``size`` is the file's
    length: the end of the last whole record written.

    ``sync_slots``: the number of threads that may fsync the log at the same time (``sync(slot)``, slot
    ``0 .. sync_slots - 1``); each slot fsyncs through an open file description of its own. The kernel reports a
    write-back error (EIO: pages that did not reach the disk) once per open file description: of two fsyncs
    through one description that run together, only the first to check reports it and the other returns
    success, and its caller would acknowledge records that are lost. The descriptions are opened with the log, before any
    record is written, so that each of them reports every write-back error of the file's records."""

    def __init__(self, path, *, truncate_at=None, fsync=True, sync_slots=0):
        self.path = path
        self.fsync = fsync
        self._sync_fds = []
        created = not os.path.exists(path)
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for _ in range(sync_slots if fsync else 0):  # a new open, not a dup: a description of its own
                self._sync_fds.append(os.open(path, os.O_WRONLY | os.O_APPEND))
            if truncate_at is not None:  # drop a torn tail before appending after it
                os.ftruncate(self.fd, truncate_at)
                os.fsync(self.fd)
            if created:
                os.fsync(self.fd)
                fsync_path(os.path.dirname(os.path.abspath(path)))
            self.size = os.fstat(self.fd).st_size
        except BaseException:
            self.close()
            raise

    def append(self, seq, payload):
        """Write one record and fsync it."""
        self.write(seq, payload)
        self.sync()

    def write(self, seq, payload):
        """Write one record (in the page cache: it survives the process, not yet the machine; see ``sync``).

        A write that fails (``OSError``: a full disk, a quota) leaves the file as it was before it: the part of
        the record that was written is cut off (not fsynced: the next ``sync`` covers the cut), and the error is
        raised. When the cut fails as well, :class:`TornRecordError`."""
        if len(payload) >= MAX_RECORD:
            raise ValueError(f"a log record holds at most {MAX_RECORD} bytes; got {len(payload)}.")
        head = HEADER.pack(seq, len(payload), _crc(seq, payload))
        try:
            if _writev is not None:  # header and payload without joining them (no copy)
                written = _writev(self.fd, [head, payload])
            else:  # pragma: no cover - platforms without writev
                written = 0
            if written < len(head) + len(payload):  # a short write (rare): the rest, in order
                rest = memoryview(head + payload)[written:]
                while rest:
                    rest = rest[os.write(self.fd, rest) :]
        except BaseException as exc:
            try:  # the record may be torn (written in part): cut it off, the log ends with a whole record
                os.ftruncate(self.fd, self.size)
            except BaseException as again:
                raise TornRecordError(
                    f"{self.path}: writing a record failed ({_reason(exc)}) and cutting the log back to byte "
                    f"{self.size} failed too ({_reason(again)})"
                ) from exc
            raise
        self.size += len(head) + len(payload)

    def sync(self, slot=None):
        """fsync: every record written so far is on disk when this returns. ``slot`` (see ``sync_slots``): the
        description of one of the threads that fsync concurrently; None: the one records are written with."""
        if self.fsync:
            os.fsync(self.fd if slot is None else self._sync_fds[slot])

    def close(self):
        fds, self._sync_fds = self._sync_fds, []
        if self.fd is not None:
            fds.append(self.fd)
            self.fd = None
        for fd in fds:
            os.close(fd)
