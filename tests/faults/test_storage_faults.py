"""A state folder that is full or read-only: a clear error naming the file, nothing half-written.

The fault is a real file system: a small tmpfs mounted for the test (the suite runs as root, as
the README's commands do), filled to the brim or remounted read-only.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dkg.errors import StorageError
from dkg.pdf import ingest_pdf
from dkg.pdf.export import write_outputs
from dkg.qa import store
from dkg.qa.dataset import QAItem
from dkg.storage import atomic_dir
from tests.faults.synthetic import synthetic_csv
from tests.pdf_support import reference_pdfs


def _mount(path: Path, size: str) -> None:
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"cannot mount a tmpfs for the fault (run the suite as root): {done.stderr}"


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB file system of its own."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    _mount(mnt, "512k")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(fs: Path, leave: int) -> None:
    """Fill the file system until only about ``leave`` bytes are free."""
    import os

    st = os.statvfs(fs)
    free = st.f_bavail * st.f_frsize
    (fs / "ballast").write_bytes(b"\0" * max(0, free - leave))


def _listing(fs: Path) -> list[str]:
    return sorted(str(p.relative_to(fs)) for p in fs.rglob("*") if p.name != "ballast")


def _items(n: int) -> list[QAItem]:
    return [QAItem(id=f"q{i}", QUESTION=f"What is next for patient {i}? " + "x" * 200, ANSWER=f"Treatment {i}",
                   QUERY="MATCH (n) RETURN n", Expected_Node=[f"n{i}"], type="next_step", guideline="SYN",
                   version="1.0", split="train", template="t") for i in range(n)]


@pytest.fixture(scope="module")
def graph():  # type: ignore[no-untyped-def]
    return ingest_pdf(next(p for p in reference_pdfs() if p.stem == "ALL-1.2022"))


def test_disk_full_while_writing_edges_leaves_nothing(graph, small_fs: Path,  # type: ignore[no-untyped-def]
                                                       record: Callable[..., None]) -> None:
    out = small_fs / "run"
    out.mkdir()
    _fill(small_fs, 8192)  # graph.json of ALL is ~100 KB
    with pytest.raises(StorageError, match=r"(edges\.csv|graph\.json): cannot write \(no space left on the device\)"):
        write_outputs(graph, out)
    assert _listing(small_fs) == ["run"]  # no CSV, no JSON, no temporary
    record("state folder full (edges)", "tmpfs of 512 KiB filled to 8 KiB free", "StorageError naming the file; "
           "no edges.csv, graph.json or temporary left", 0, None)


def test_disk_full_while_writing_constraints_leaves_nothing(small_fs: Path, tmp_path: Path) -> None:
    src = synthetic_csv(tmp_path / "syn", "SYN", "1.0", 2000)
    import csv

    from dkg.constraints.table import write_rows

    rows = list(csv.DictReader(src.read_text(encoding="utf-8").splitlines()))
    _fill(small_fs, 16384)
    with pytest.raises(StorageError, match=r"constraints\.csv: cannot write \(no space left"):
        write_rows(rows, small_fs / "constraints.csv")
    assert _listing(small_fs) == []


def test_disk_full_keeps_the_previous_dataset_whole(small_fs: Path, record: Callable[..., None]) -> None:
    folder = small_fs / "qa"
    first = store.save(_items(20), folder)
    _fill(small_fs, 20000)
    with pytest.raises(StorageError, match=r"items\.jsonl: cannot write \(no space left"):
        store.save(_items(2000), folder)
    assert [i.id for i in store.load(folder) or []] == [f"q{i}" for i in range(20)]
    manifest = store.load_manifest(folder)
    assert manifest is not None and manifest.dataset_version == first.dataset_version
    assert _listing(small_fs) == ["qa", "qa/items.jsonl", "qa/manifest.json"]
    with pytest.raises(StorageError, match=r"cannot write \(no space left"):
        store.export_hf(_items(2000), small_fs / "hf", "v1")
    assert not (small_fs / "hf" / "v1").exists() and not any((small_fs / "hf").glob(".*partial*"))
    record("state folder full (QA dataset)", "tmpfs filled to 20 KB free, then a 2,000-item save",
           "StorageError; the previous dataset (items + manifest) intact; no partial export folder", 0, None)


def test_a_model_folder_is_complete_or_absent(small_fs: Path) -> None:
    _fill(small_fs, 65536)
    with pytest.raises(StorageError, match=r"cypher: cannot write \(no space left"), atomic_dir(small_fs / "cypher") \
            as tmp:
        (tmp / "dkg_model.json").write_text("{}", encoding="utf-8")
        (tmp / "model.safetensors").write_bytes(b"\1" * 200_000)
    assert _listing(small_fs) == []


def test_read_only_state_folder_gives_a_clear_error(graph, small_fs: Path,  # type: ignore[no-untyped-def]
                                                    record: Callable[..., None]) -> None:
    (small_fs / "run").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    with pytest.raises(StorageError, match=r"cannot write \(the folder is on a read-only file system\)"):
        write_outputs(graph, small_fs / "run")
    assert _listing(small_fs) == ["run"]
    record("state folder read-only", "tmpfs remounted read-only", "StorageError naming the file; nothing written",
           0, None)
