"""One discipline for every file streamlearn writes: check the destination first, write aside, then rename.

:class:`Output` is created *before* any work (so a missing folder, a directory, an input file given as the
output... are reported at once) and then used as a context manager around the writing:

* a regular destination (existing or new) is written to a temporary file in the same folder, flushed and
  ``fsync``-ed, then renamed over the destination only when the ``with`` block ends without an error: an
  error, Ctrl-C or a full disk leaves the previous file byte-identical (a ``kill -9`` can leave a hidden
  ``.tmp-*`` file next to it, never a damaged destination);
* a symbolic link is followed: its target is replaced, the link stays;
* a character device or a FIFO (``/dev/null``, ``/dev/stdout``, a named pipe) is written through, never
  replaced; other special files (block devices, sockets) are refused;
* an existing file keeps its permission bits; a new file gets ``0666`` minus the umask (as ``open`` would).

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> out = Output(os.path.join(folder, "preds.txt"))
>>> with out.open("w") as f:
...     _ = f.write("1\\n")
>>> open(out.path).read()
'1\\n'
>>> Output(folder)
Traceback (most recent call last):
...
streamlearn._atomic.OutputError: output ... is a directory; give a file name.
"""

import contextlib
import errno
import os
import shutil
import stat
import tempfile

from ._signals import interrupts_held, raise_if_interrupted

__all__ = ["Output", "OutputError", "pending_outputs", "remove_temporaries"]

_PENDING: list["Output"] = []  # Output objects whose file is not written yet (what Ctrl-C leaves unchanged)
_TEMPORARIES: set[str] = set()  # temporary files made and not yet renamed or removed


class OutputError(ValueError):
    """An output path that cannot be written (checked before any work is done)."""


def remove_temporaries():
    """Remove the temporary files still on disk, the commands' last step after a Ctrl-C: the handlers that remove
    them cover a Ctrl-C wherever it comes, except in the few bytecodes between a context manager's ``__enter__``
    returning and the ``with`` block starting, which leave the writer suspended with its file on disk."""
    for tmp in sorted(_TEMPORARIES):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _TEMPORARIES.clear()


def _remove(tmp):
    """Remove the temporary file ``tmp`` (an OSError is the caller's)."""
    _TEMPORARIES.discard(tmp)
    os.unlink(tmp)


def pending_outputs():
    """Paths (as the user gave them) of outputs announced but not yet committed, oldest first."""
    return [o.name for o in _PENDING]


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


class Output:
    """A destination file, validated now, written atomically later.

    Parameters
    ----------
    path : str or os.PathLike
        Where to write. ``-`` is not a file name here (standard output is written by the commands).
    inputs : iterable of paths
        Files read by the same command: the output may not be any of them (compared with
        :func:`os.path.samefile`, so hard links, symlinks and ``./x`` vs ``x`` are caught).
    what : str
        How to name the output in messages (``"output"``, ``"model file"``...).
    """

    def __init__(self, path, *, inputs=(), what="output"):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path of the {what} must be a str or os.PathLike; got {type(path).__name__}.")
        self.name = os.fspath(path)
        self.what = what
        if not self.name:
            raise OutputError(f"{what} path is empty.")
        real = os.path.realpath(self.name)  # follow symlinks: the target is what gets replaced
        self.path = real
        self.through = False  # write straight into a character device / FIFO
        self.mode = None  # permission bits to keep
        try:
            st = os.stat(real)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise OutputError(f"{what} {self.name!r}: {exc.strerror}.") from None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                raise OutputError(f"{what} {self.name!r} is a directory; give a file name.")
            if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
                self.through = True
            elif not stat.S_ISREG(st.st_mode):
                raise OutputError(
                    f"{what} {self.name!r} is not a regular file (a block device or socket); refusing to write there."
                )
            else:
                self.mode = stat.S_IMODE(st.st_mode)
            for inp in inputs:
                if inp is None or inp == "-":
                    continue
                try:
                    same = os.path.samefile(inp, real)
                except OSError:
                    same = False
                if same and not self.through:
                    raise OutputError(
                        f"{what} {self.name!r} is the input file {os.fspath(inp)!r}; writing it "
                        "would destroy the input. Choose another output path."
                    )
            if not self.through and not os.access(real, os.W_OK):
                raise OutputError(f"{what} {self.name!r} is not writable ({_refused(real)}).")
        folder = os.path.dirname(real)
        if not self.through:
            if not os.path.isdir(folder):
                raise OutputError(
                    f"cannot write {what} {self.name!r}: the folder {os.path.dirname(self.name) or folder!r} "
                    "does not exist."
                )
            if not os.access(folder, os.W_OK | os.X_OK):
                raise OutputError(
                    f"cannot write {what} {self.name!r}: the folder {folder!r} is not writable ({_refused(folder)})."
                )
            try:  # the permission bits pass for root and say nothing of a read-only or special file system
                with interrupts_held():
                    _remove(_temporary(prefix=".tmp-", dir=folder))
            except OSError as exc:
                raise OutputError(f"{self.name}: {exc.strerror}.") from None
        self.folder = folder
        self.committed = False
        # what the destination holds once the command has rewritten it before finishing (a checkpoint of
        # `train --save-every`), for the message of a Ctrl-C; None: the file as it was before the command
        self.holds = None
        _PENDING.append(self)

    def _done(self):
        self.committed = True
        if self in _PENDING:
            _PENDING.remove(self)

    def _finish_mode(self, tmp):
        mode = self.mode if self.mode is not None else 0o666 & ~_umask()
        os.chmod(tmp, mode)

    @contextlib.contextmanager
    def path_for_writing(self, suffix=""):
        """Yield a temporary path for writers that take a file name (``savefig``, zip files); commit on success."""
        tmp = None
        if self.through:
            try:
                with interrupts_held():  # a Ctrl-C comes before the file exists or once `tmp` names it
                    tmp = _temporary(prefix="streamlearn-", suffix=suffix)
                yield tmp
                raise_if_interrupted()  # one a library discarded: the command is stopping, the output stays
                with open(tmp, "rb") as src, open(self.path, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            except OSError as exc:
                raise self._named(exc) from exc
            finally:
                if tmp is not None:
                    _remove(tmp)
            self._done()
            return
        try:
            with interrupts_held():  # a Ctrl-C comes before the file exists or once `tmp` names it
                tmp = _temporary(prefix=".tmp-", suffix=suffix, dir=self.folder)
            yield tmp
            raise_if_interrupted()  # one a library discarded: the command is stopping, the output stays as it was
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            self._finish_mode(tmp)
            os.replace(tmp, self.path)
            _TEMPORARIES.discard(tmp)
        except OSError as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    _remove(tmp)
            raise self._named(exc) from exc
        except BaseException:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    _remove(tmp)
            raise
        self._done()

    def _named(self, exc):
        """An OSError of a write with this output's name attached: one without a file name (full disk, I/O
        error), or one naming the hidden temporary file beside the output (a folder that refuses new files)."""
        if exc.errno is None:
            return exc
        name = exc.filename
        if name is None or (
            isinstance(name, str)
            and os.path.dirname(name) == self.folder
            and os.path.basename(name).startswith(".tmp-")
        ):
            return OSError(exc.errno, exc.strerror, self.name)
        return exc

    @contextlib.contextmanager
    def open(self, mode="w"):
        """Yield an open file (``mode`` "w" or "wb"); the destination changes only if the block succeeds."""
        if mode not in ("w", "wb"):
            raise ValueError(f"mode must be 'w' or 'wb'; got {mode!r}.")
        if self.through:
            try:
                with open(self.path, mode) as f:
                    yield f
            except OSError as exc:
                raise self._named(exc) from exc
            self._done()
            return
        with self.path_for_writing() as tmp, open(tmp, mode) as f:
            yield f
            f.flush()

    def discard(self):
        """Forget this output (nothing was written)."""
        if self in _PENDING:
            _PENDING.remove(self)


def _refused(path):
    """Why :func:`os.access` refuses to let ``path`` be written: ``"read-only file system"`` when it is on one
    (whose permission bits say the file is writable), ``"permission denied"`` otherwise."""
    try:
        read_only = os.statvfs(path).f_flag & os.ST_RDONLY
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        read_only = 0
    return "read-only file system" if read_only else "permission denied"


def _temporary(**kwargs):
    """A new empty temporary file (``tempfile.mkstemp``'s arguments), recorded for :func:`remove_temporaries`; its
    path. (Called with interrupts held: a Ctrl-C comes before the file exists or once it is recorded.)"""
    fd, tmp = tempfile.mkstemp(**kwargs)
    _TEMPORARIES.add(tmp)
    os.close(fd)
    return tmp


def is_disk_full(exc):
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
