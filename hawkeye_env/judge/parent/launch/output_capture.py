"""The parent's side of a worker's output channels: the file its stdout and stderr go to
(``WorkerOutput``, read back in a bounded head and tail) and the socket its messages come on
(``MessageReader``, framed reads that never block past a deadline). Used by ``sandbox.py``."""

from __future__ import annotations

import ctypes
import fcntl
import os
import re
import select
import struct
import tempfile
import threading

# A worker's captured output: at most this much of its beginning and end reaches the Outcome (and
# the feedback; about 4000 characters), and the parent folds the file and frees what it read while
# the worker runs once it grows past OUTPUT_FILE_MAX_BYTES (a candidate printing in a loop).
OUTPUT_HEAD_BYTES = 1024
OUTPUT_TAIL_BYTES = 3072
OUTPUT_FILE_MAX_BYTES = 16 << 20
READ_CHUNK_BYTES = 1 << 20  # os.read allocates what it is asked for: the judge holds no more
_FALLOC_FL_KEEP_SIZE, _FALLOC_FL_PUNCH_HOLE = 0x01, 0x02  # linux/falloc.h


def punch_hole(fd: int, length: int) -> bool:
    """Free the first ``length`` bytes of ``fd``'s file (``fallocate(PUNCH_HOLE | KEEP_SIZE)``):
    they read back as zeros, take no space, and the size stays, so a writer appending at the end
    loses nothing. False where the file system or libc cannot (then the caller truncates)."""
    try:
        fallocate = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):
        return False
    fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong)
    return fallocate(fd, _FALLOC_FL_KEEP_SIZE | _FALLOC_FL_PUNCH_HOLE, 0, length) == 0


# Control characters other than tab and newline (C0, DEL, C1): shown escaped, so a candidate's
# output cannot drive a terminal that displays the feedback.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain_text(data: bytes) -> str:
    """Bytes a worker printed as display-safe text: UTF-8 with replacement characters, line
    endings as newlines, other control characters escaped (``\\x1b``)."""
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class WorkerOutput:
    """The file a worker's stdout and stderr go to, read back by the parent in bounded pieces.

    Created by the parent (``mkstemp``: mode 0600, in the system temporary folder), opened for
    appending (shared with the worker's duplicate: the parent's truncations and the worker's
    writes never interleave into holes a truncation would leave) and unlinked at once: it exists only as the descriptors
    of the parent and the worker, and is gone when both are closed. The parent reads with
    ``pread`` only, never more than ``OUTPUT_HEAD_BYTES`` of the beginning and
    ``OUTPUT_TAIL_BYTES`` of the end. Thread-safe; ``close`` is idempotent.
    """

    def __init__(self, fd: int | None):
        self._fd = fd
        self._lock = threading.Lock()
        self._head = b""  # the first OUTPUT_HEAD_BYTES written
        self._tail = b""  # the last OUTPUT_TAIL_BYTES of what was folded (read and freed)
        self._folded = 0  # bytes folded so far
        self._start = 0  # the file offset where the bytes not yet folded begin
        self._closed: tuple[str, int] | None = None

    @classmethod
    def create(cls) -> WorkerOutput:
        """A new unlinked file; where none can be made the worker writes to ``/dev/null``."""
        try:
            fd, path = tempfile.mkstemp(prefix="hawkeye-output-", suffix=".log")
        except OSError:
            return cls(None)
        try:
            os.unlink(path)
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
        except OSError:
            os.close(fd)
            return cls(None)
        return cls(fd)

    @property
    def fd(self) -> int | None:
        """The descriptor a new worker inherits (``start_process``); None when there is no file."""
        return self._fd

    def _fold(self, free: bool) -> None:
        """Read the file's new head bytes and its tail into memory; if ``free``, free what was read:
        a hole punched over it, so bytes the worker appends meanwhile stay; where the file system
        cannot punch, a truncation, which loses what lands between the read and it (in the
        omitted middle)."""
        size = os.fstat(self._fd).st_size
        new = size - self._start
        if new <= 0:
            return
        if self._folded < OUTPUT_HEAD_BYTES:
            self._head += os.pread(self._fd, min(OUTPUT_HEAD_BYTES - self._folded, new), self._start)
        start = max(self._start, size - OUTPUT_TAIL_BYTES)
        chunk = os.pread(self._fd, size - start, start)
        self._tail = (self._tail + chunk)[-OUTPUT_TAIL_BYTES:] if start == self._start else chunk
        if free:
            self._folded += new
            if punch_hole(self._fd, size):
                self._start = size
            else:
                os.ftruncate(self._fd, 0)
                self._start = 0

    def _pending(self) -> int:
        return os.fstat(self._fd).st_size - self._start

    def bound(self) -> None:
        """Called while the worker runs: fold the file and free what was read once its unread
        part is past ``OUTPUT_FILE_MAX_BYTES``."""
        with self._lock:
            if self._fd is None or self._closed is not None:
                return
            try:
                if self._pending() > OUTPUT_FILE_MAX_BYTES:
                    self._fold(free=True)
            except OSError:
                pass

    def drop(self) -> None:
        """Forget everything written so far (a standby's trusted warm-up, once it is ready)."""
        with self._lock:
            if self._fd is None or self._closed is not None:
                return
            try:
                os.ftruncate(self._fd, 0)
            except OSError:
                pass
            self._head, self._tail, self._folded, self._start = b"", b"", 0, 0

    def close(self) -> tuple[str, int]:
        """Read what is left, close the parent's descriptor (the file is freed once the worker's
        are closed too) and return ``(text, total bytes written)``: the whole output when it fits
        in head plus tail, else the head, a marker and the tail."""
        with self._lock:
            if self._closed is not None:
                return self._closed
            total = self._folded
            if self._fd is not None:
                try:
                    self._fold(free=False)
                    total += self._pending()
                except OSError:
                    pass
                os.close(self._fd)
                self._fd = None
            head, tail = self._head, self._tail
            if total <= len(head) + len(tail):
                data = head + tail[len(tail) - max(0, total - len(head)):] if total > len(head) else head
                text = plain_text(data)
            else:
                omitted = total - len(head) - len(tail)
                text = f"{plain_text(head)}\n[... {omitted} bytes omitted ...]\n{plain_text(tail)}"
            self._closed = (text, total)
            self._head = self._tail = b""
            return self._closed


class MessageReader:
    """Reads ``multiprocessing.Connection`` frames (a 4-byte big-endian length, or -1 and an 8-byte
    one, then the payload) from a worker's socket without ever blocking past ``poll``'s timeout:
    a worker that announces a long message and stops sending cannot hang the parent, and no
    message may exceed ``limit`` bytes."""

    def __init__(self, fd: int, limit: int):
        self.fd, self.limit, self.buf = fd, limit, bytearray()

    def poll(self, timeout: float) -> bytes | None:
        """One complete message, or None when none arrived within ``timeout``; ``EOFError`` once
        the worker closed its end, ``ValueError`` for an oversized frame."""
        message = self._take()
        if message is not None:
            return message
        wait = timeout
        while select.select([self.fd], [], [], wait)[0]:
            chunk = os.read(self.fd, READ_CHUNK_BYTES)
            if not chunk:
                raise EOFError("the worker closed its connection")
            self.buf += chunk
            message = self._take()
            if message is not None:
                return message
            wait = 0.0
        return None

    def _take(self) -> bytes | None:
        if len(self.buf) < 4:
            return None
        (size,), head = struct.unpack("!i", self.buf[:4]), 4
        if size == -1:
            if len(self.buf) < 12:
                return None
            (size,), head = struct.unpack("!Q", self.buf[4:12]), 12
        if size < 0 or size > self.limit:
            raise ValueError(f"a worker message of {size} bytes exceeds the {self.limit} byte limit")
        if len(self.buf) < head + size:
            return None
        with memoryview(self.buf) as view:  # one copy of the message, not two
            message = bytes(view[head:head + size])
        del self.buf[:head + size]
        return message
