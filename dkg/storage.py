"""Atomic writes: a result is either complete where it belongs or absent, never half-written.

Every file or folder a stage produces (edge and constraint CSVs, ``graph.json``, QA datasets,
trained models) is written under a temporary name beside its target and renamed into place
only when complete. A write that fails (disk full, quota, read-only folder) removes its
temporary and raises :class:`~dkg.errors.StorageError` naming the target and the reason.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from dkg.errors import StorageError

_REASONS = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded",
            errno.EROFS: "the folder is on a read-only file system", errno.EACCES: "permission denied",
            errno.EFBIG: "file too large for the file system or the size limit"}


def reason(e: OSError) -> str:
    """Plain words for an ``OSError`` of a write."""
    return _REASONS.get(e.errno or 0, e.strerror or type(e).__name__)


def _tmp(path: Path) -> Path:
    return path.with_name(f".{path.name}.partial-{os.getpid()}")


@contextmanager
def atomic_files(paths: Sequence[Path]) -> Iterator[list[Path]]:
    """Yield temporary paths for ``paths``; on success rename each into place, else remove them all.

    Raises:
        StorageError: a write failed (the message names the target and the reason).
    """
    tmps = [_tmp(p) for p in paths]
    target = paths[0]
    try:
        for p in paths:
            p.parent.mkdir(parents=True, exist_ok=True)
        yield tmps
        for t in tmps:
            with open(t, "rb") as fh:
                os.fsync(fh.fileno())
        for t, p in zip(tmps, paths, strict=True):
            target = p
            t.replace(p)
    except OSError as e:
        raise StorageError(f"{target}: cannot write ({reason(e)}); nothing was left half-written") from e
    finally:
        for t in tmps:
            with contextlib.suppress(OSError):  # a read-only folder never held one
                t.unlink(missing_ok=True)


@contextmanager
def atomic_dir(path: Path) -> Iterator[Path]:
    """Yield a temporary folder for ``path``; on success it replaces ``path``, else it is removed.

    Raises:
        StorageError: a write failed (the message names the target and the reason).
    """
    tmp = _tmp(path)
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir(parents=True)
        yield tmp
        if path.exists():
            shutil.rmtree(path)
        tmp.replace(path)
    except OSError as e:
        raise StorageError(f"{path}: cannot write ({reason(e)}); nothing was left half-written") from e
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
