"""Files replaced whole: written beside their destination under a staging name of this process,
then renamed over it (`os.replace`, atomic within one file system), so that a reader, a crash or
another process writing the same file never sees half a file and an old file stays intact until
the new one is committed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO
from contextlib import contextmanager
from pathlib import Path


def staging_path(path: Path) -> Path:
    """Where this process stages a new `path`: a hidden file beside it, named by the process, so
    that two processes replacing the same file never write into one staging file."""
    return path.with_name(f".{path.name}.{os.getpid()}.new")


def is_staged(path: Path) -> bool:
    """Whether some process is staging a new `path` now (or left a staging file of it behind)."""
    return any(path.parent.glob(f".{path.name}.*.new"))


class StagedFile:
    """A file written at `staging_path(path)` and renamed over `path` on `commit` (after which
    the open handle goes on writing to the renamed file); `close` without a commit discards it."""

    def __init__(self, path: Path, mode: str = "wb"):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.staging = staging_path(self.path)
        self.handle = self.staging.open(mode)
        self.committed = False

    def write(self, data) -> None:
        self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()

    def commit(self) -> None:
        if not self.committed:
            self.handle.flush()
            os.replace(self.staging, self.path)
            self.committed = True

    def close(self) -> None:
        self.handle.close()
        if not self.committed:
            self.staging.unlink(missing_ok=True)


@contextmanager
def replaced_whole(path: Path, mode: str = "wb") -> Iterator[IO]:
    """The open file of a `StagedFile` for `path`, committed when the block ends without an error
    and discarded when it raises (then `path` is left as it was)."""
    staged = StagedFile(path, mode)
    try:
        yield staged.handle
        staged.commit()
    finally:
        staged.close()
