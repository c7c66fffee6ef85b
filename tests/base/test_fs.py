"""Safe outputs (mlirkit.base.fs, mlirkit.base.outputs): overwrite only what mlirkit made, one writer per
output (an exclusive lock, two processes), OSError as one line with nothing left behind, stale temporaries."""
from __future__ import annotations

import errno
import json
import logging
import os
import subprocess
import sys
import textwrap
import time

import pytest

from mlirkit.base.errors import MlirkitError
from mlirkit.base.fs import atomic_directory, atomic_file, clean_stale_temporaries, refuse_existing
from mlirkit.base.outputs import is_ours

RUN_LINE = "q1 Q0 d1 1 0.5 mlirkit\n"


def listing(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text and "Traceback" not in text
    return text


# ---------------------------------------------------------------- "is this ours?"
def test_is_ours_per_kind(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text(RUN_LINE)
    src = tmp_path / "main.py"
    src.write_text("print('hello')\n")
    assert is_ours(run, "run") and not is_ours(src, "run")
    index = tmp_path / "index"
    index.mkdir()
    (index / "meta.json").write_text(json.dumps({"format": "mlirkit-dense-index"}))
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"\xff\xd8")
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "meta.json").write_text("[1, 2]")
    assert is_ours(index, "index") and not is_ours(photos, "index") and not is_ours(fake, "index")
    assert not is_ours(run, "index") and not is_ours(index, "run")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert is_ours(empty, "index") and is_ours(empty, "directory") and not is_ours(photos, "directory")
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"bm25": {"ndcg@10": 0.5}, "_meta": {"settings": {}}}))
    other_json = tmp_path / "package.json"
    other_json.write_text('{"name": "x"}')
    assert is_ours(report, "report") and not is_ours(other_json, "report")
    md = tmp_path / "r.md"
    md.write_text("| run | ndcg@10 |\n|---|---|\n")
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n")
    assert is_ours(md, "report") and not is_ours(notes, "report")
    link = tmp_path / "link.trec"
    link.symlink_to(run)
    assert not is_ours(link, "run")


def test_transform_file_is_ours(tmp_path):
    import numpy as np

    from mlirkit.transforms.io import save_transform
    from mlirkit.transforms.shift_transform import ShiftTransform

    t = ShiftTransform.from_tensors({"de": np.ones(4, np.float32)}, encoder={"class": "x"}, source_lang="en")
    path = save_transform(t, tmp_path / "t.safetensors")
    bogus = tmp_path / "weights.safetensors"
    from safetensors.numpy import save_file

    save_file({"w": np.ones(2, np.float32)}, str(bogus))
    assert is_ours(path, "transform") and not is_ours(bogus, "transform")
    with pytest.raises(MlirkitError, match="not a transform file written by mlirkit"):
        save_transform(t, bogus, overwrite=True)
    assert save_transform(t, path, overwrite=True) == path


def test_overwrite_refuses_what_mlirkit_did_not_make(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(MlirkitError) as e:
        with atomic_directory(photos, overwrite=True, kind="index") as tmp:
            (tmp / "meta.json").write_text("{}")
    assert "not an index directory written by mlirkit" in one_line(e)
    assert listing(tmp_path) == ["photos", "photos/cat.jpg"]
    src = tmp_path / "notes.txt"
    src.write_text("precious\n")
    with pytest.raises(MlirkitError, match="not a TREC run file written by mlirkit"):
        with atomic_file(src, overwrite=True, kind="run") as f:
            f.write(RUN_LINE)
    assert src.read_text() == "precious\n"
    with pytest.raises(MlirkitError, match=r"already exists \(use overwrite=True to replace it\)"):
        refuse_existing(src, overwrite=False, kind="run")
    # ours: replaced
    run = tmp_path / "run.trec"
    run.write_text(RUN_LINE)
    with atomic_file(run, overwrite=True, kind="run") as f:
        f.write("q2 Q0 d2 1 1.0 mlirkit\n")
    assert run.read_text().startswith("q2") and listing(tmp_path) == ["notes.txt", "photos", "photos/cat.jpg",
                                                                        "run.trec"]


def test_wrong_type_of_existing_output(tmp_path):
    afile = tmp_path / "index"
    afile.write_text("x")
    with pytest.raises(MlirkitError) as e:
        with atomic_directory(afile, overwrite=True, kind="index"):
            pass
    assert "is a file, not an index directory" in one_line(e) and afile.read_text() == "x"
    adir = tmp_path / "run.trec"
    adir.mkdir()
    with pytest.raises(MlirkitError, match="is a directory, not a TREC run file"):
        with atomic_file(adir, overwrite=True, kind="run"):
            pass
    assert adir.is_dir() and listing(tmp_path) == ["index", "run.trec"]


# ---------------------------------------------------------------- OSError while writing
def test_disk_full_leaves_nothing(tmp_path):
    out = tmp_path / "new" / "deeper" / "run.trec"
    with pytest.raises(MlirkitError) as e:
        with atomic_file(out, kind="run") as f:
            f.write(RUN_LINE)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert one_line(e) == f"cannot write {out}: No space left on device"
    assert listing(tmp_path) == []  # no temporary, no lock file, no new parent directories
    with pytest.raises(MlirkitError, match="No space left on device"):
        with atomic_directory(tmp_path / "a" / "index", kind="index") as tmp:
            (tmp / "docid").write_text("d1\n")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert listing(tmp_path) == []


def test_error_on_an_input_inside_the_block_is_not_relabelled(tmp_path):
    (tmp_path / "inputs").mkdir()
    with pytest.raises(FileNotFoundError):
        with atomic_file(tmp_path / "out" / "run.trec", kind="run"):
            open("/nonexistent-mlirkit-input/x")
    assert listing(tmp_path) == ["inputs"]


def test_parent_is_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(MlirkitError) as e:
        with atomic_file(tmp_path / "afile" / "run.trec", kind="run") as f:
            f.write(RUN_LINE)
    assert "is not a directory" in one_line(e)
    with pytest.raises(MlirkitError, match="is not a directory"):
        with atomic_directory(tmp_path / "afile" / "sub" / "index", kind="index"):
            pass
    assert listing(tmp_path) == ["afile"]


def test_read_only_directory(tmp_path, monkeypatch):
    import tempfile

    def denied(*a, **k):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(tmp_path / ".x.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    with pytest.raises(MlirkitError) as e:
        with atomic_file(tmp_path / "ro" / "run.trec", kind="run"):
            pass
    assert "cannot write" in one_line(e) and "Permission denied" in str(e.value)
    assert listing(tmp_path) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores directory permissions")
def test_really_read_only_directory(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(MlirkitError, match="cannot write"):
            with atomic_file(ro / "run.trec", kind="run") as f:
                f.write(RUN_LINE)
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)


def test_interrupt_leaves_nothing(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with atomic_directory(tmp_path / "x" / "index", kind="index") as tmp:
            (tmp / "docid").write_text("d1\n")
            raise KeyboardInterrupt
    assert listing(tmp_path) == []


# ---------------------------------------------------------------- stale temporaries
def test_stale_temporaries_are_removed_by_the_next_write(tmp_path, caplog):
    run = tmp_path / "run.trec"
    dead = tmp_path / ".run.trec.tmp-999999999-abc"
    dead.write_text("half")
    dead_dir = tmp_path / ".index.tmp-999999999-xyz"
    dead_dir.mkdir()
    (dead_dir / "docid").write_text("d1\n")
    old = tmp_path / ".index.old-999999999-q"
    old.mkdir()
    alive = tmp_path / f".run.trec.tmp-{os.getppid()}-live"
    alive.write_text("someone else's")
    other = tmp_path / ".other.trec.tmp-999999999-abc"
    other.write_text("not this output's")
    with caplog.at_level(logging.WARNING, logger="mlirkit.base.fs"):
        with atomic_file(run, kind="run") as f:
            f.write(RUN_LINE)
        with atomic_directory(tmp_path / "index", kind="index") as tmp:
            (tmp / "meta.json").write_text(json.dumps({"format": "mlirkit-dense-index"}))
    assert not dead.exists() and not dead_dir.exists() and not old.exists()
    assert alive.exists() and other.exists()
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "interrupted write" in messages and "still running" in messages
    assert clean_stale_temporaries(run) == []


# ---------------------------------------------------------------- one writer per output
_HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from mlirkit.base.fs import atomic_file
    out, ready, release = map(Path, sys.argv[1:4])
    with atomic_file(out, kind="run") as f:
        f.write("q1 Q0 first 1 1.0 holder\\n")
        ready.write_text("1")
        deadline = time.time() + 60
        while not release.exists() and time.time() < deadline:
            time.sleep(0.02)
    print("published")
""")


def test_two_processes_one_wins_the_other_fails_at_once(tmp_path):
    out = tmp_path / "run.trec"
    ready, release = tmp_path / "ready", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(out), str(ready), str(release)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while not ready.exists():
            assert holder.poll() is None and time.time() < deadline, holder.communicate()
            time.sleep(0.02)
        assert (tmp_path / ".run.trec.lock").exists()
        start = time.monotonic()
        with pytest.raises(MlirkitError) as e:
            with atomic_file(out, overwrite=True, kind="run") as f:
                f.write("q1 Q0 second 1 1.0 loser\n")
        assert time.monotonic() - start < 5
        assert "is being written by another process" in one_line(e)
        release.write_text("1")
        assert holder.wait(60) == 0 and holder.stdout.read().strip() == "published"
    finally:
        release.write_text("1")
        holder.kill()
        holder.wait()
    assert out.read_text() == "q1 Q0 first 1 1.0 holder\n"
    assert listing(tmp_path) == ["ready", "release", "run.trec"]  # lock file and temporaries gone


#: directory kinds whose every top-level entry is listed: kind -> what mlirkit writes there
_LISTED = {"dcl-model": ("backbone/config.json", "heads.safetensors", "mlirkit_dcl.json", "train_config.json"),
           "checkpoint": ("model/mlirkit_dcl.json", "trainer_state.pt", "rng-rank0.pt", "alignments-rank0.json"),
           "export": ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"),
           "index": ("index", "docid", "langs", "meta.json", "embeddings.npy", "transform.safetensors"),
           "lucene-index": ("docid", "langs", "meta.json", "segments_1", "write.lock", "_f.fdt", "_f_Lucene99_0.tim"),
           "benchmark": ("report.json", "report.md", "runs/e5/test/shift.trec", "plots/e5/mix.png",
                         "transforms/e5/corpus-shift.safetensors"),
           "qdrant-shard": ("shard/edge_config.json", "mlirkit_qdrant.json", "lang_means.npy", "transform.safetensors")}
_META = {"index": {"format": "mlirkit-dense-index"}, "lucene-index": {"format": "mlirkit-lucene-index"}}


def test_every_directory_kind_lists_its_entries():
    from mlirkit.base.outputs import _ENTRIES, _KINDS

    assert {k for k, (directory, _, _) in _KINDS.items() if directory} - set(_ENTRIES) == {"directory"}


@pytest.mark.parametrize("kind", sorted(_LISTED))
@pytest.mark.parametrize("planted", ["notes.txt", ".hidden", "my-head/weights.bin"])
def test_a_user_file_inside_an_output_makes_it_foreign(tmp_path, kind, planted):
    out = tmp_path / "out"
    for name in _LISTED[kind]:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(json.dumps(_META.get(kind, {})), encoding="utf-8")
    kind = "index" if kind == "lucene-index" else kind
    assert is_ours(out, kind)
    refuse_existing(out, True, kind)
    (out / planted).parent.mkdir(parents=True, exist_ok=True)
    (out / planted).write_text("mine", encoding="utf-8")
    assert not is_ours(out, kind)
    with pytest.raises(MlirkitError, match=f"{(out / planted.split('/')[0]).name} is not mlirkit's") as e:
        with atomic_directory(out, overwrite=True, kind=kind):
            pass
    one_line(e)
    assert (out / planted).read_text(encoding="utf-8") == "mine"


def test_an_output_name_that_is_not_utf8_is_one_line(tmp_path):
    name = os.fsdecode(b"run-\xff.trec")
    with pytest.raises(MlirkitError, match=r"run-\\xff\.trec: the file name is not valid UTF-8") as e:
        with atomic_file(tmp_path / name):
            pass
    one_line(e)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_that_takes_no_new_files_is_one_line_not_a_held_lock(tmp_path, monkeypatch):
    """/proc/self exists but creating a file there is ENOENT: 'cannot write', never 'another process holds
    the lock' (the probe's FileNotFoundError used to be taken for a directory that went away)."""
    real_open = os.open

    def no_new_files(path, flags, *args):
        if flags & os.O_CREAT and os.path.dirname(path) == str(tmp_path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", no_new_files)
    with pytest.raises(MlirkitError, match=f"cannot write {tmp_path / 'run.trec'}: {tmp_path} takes no new files") as e:
        refuse_existing(tmp_path / "run.trec", False, "run")
    one_line(e)
    if os.path.isdir("/proc/self"):
        monkeypatch.setattr(os, "open", real_open)
        with pytest.raises(MlirkitError, match="cannot write /proc/self/run.trec: /proc/self takes no new files"):
            with atomic_file("/proc/self/run.trec", kind="run"):
                pass
