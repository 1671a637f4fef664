"""Worker messages are refused before decoding when they nest too deep to build safely
(``pickle_depth.py``): honest replies pass, a deep one is a ``ValueError`` the watcher turns into
the candidate's ``bad_reply``."""

from __future__ import annotations

import io
import zipfile

import pytest
import torch

from hawkeye_env.judge.parent.validate import pickle_depth
from hawkeye_env.judge.parent.validate.pickle_depth import MAX_MESSAGE_DEPTH, nesting_depth
from hawkeye_env.judge.parent.validate.reply_decode import ForgedMessage, decode_message


def _saved(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def test_an_honest_reply_nests_shallowly_and_decodes():
    reply = {"kind": "final", "stage": "ok", "trials": [{"outputs": [torch.randn(3, 4)], "fresh": {"outputs": []}}],
             "plans": [{"plan": {"steps": [{"args": [{"T": 0, "size": [3, 4]}]}]}, "kernels": []}]}
    payload = _saved(reply)
    assert 3 < nesting_depth(payload) <= 16
    assert decode_message(payload)["stage"] == "ok"


def test_a_deeply_nested_message_is_refused_before_it_is_built():
    deep: list = []
    for _ in range(MAX_MESSAGE_DEPTH + 10):
        deep = [deep]
    payload = _saved({"kind": "progress", "violations": deep})
    with pytest.raises(pickle_depth.MessageShapeError, match=f"nests more than {MAX_MESSAGE_DEPTH}"):
        nesting_depth(payload)
    with pytest.raises(ForgedMessage, match="nests"):
        decode_message(payload)


def test_shared_references_count_once_not_per_use():
    shared = [[1, 2]]
    payload = _saved({"kind": "final", "a": [shared] * 1000})
    assert nesting_depth(payload) <= 5


def _deep_pickle(depth: int) -> bytes:
    """A progress message whose dict holds a key nested ``depth`` tuples deep."""
    return (b"\x80\x02}" + b"X\x04\x00\x00\x00kind" + b"X\x08\x00\x00\x00progress" + b"s"
            + b"N" + b"\x85" * depth + b"N" + b"s" + b".")


def _archive(entries: list[tuple[str, bytes]], compression=zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as z:
        for name, data in entries:
            z.writestr(name, data)
    return out.getvalue()


def test_the_legacy_format_is_refused():
    """torch's pre-zip format holds several pickles; a depth check of the first would miss a deep
    fourth one, which torch.load builds."""
    buf = io.BytesIO()
    torch.save({"kind": "progress", "violations": []}, buf, _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match="not a torch.save archive"):
        decode_message(buf.getvalue())


def test_the_depth_check_reads_the_pickle_torch_reads():
    honest = zipfile.ZipFile(io.BytesIO(_saved({"kind": "progress"})))
    rest = [(n, honest.read(n)) for n in honest.namelist() if n != "archive/data.pkl"]
    deep = _deep_pickle(MAX_MESSAGE_DEPTH + 10)
    decoy = _archive([("archive/x/data.pkl", honest.read("archive/data.pkl")), ("archive/data.pkl", deep), *rest])
    with pytest.raises(ForgedMessage, match="nests"):
        decode_message(decoy)
    with pytest.raises(ValueError, match="one folder"):
        decode_message(_archive([("other/data.pkl", honest.read("archive/data.pkl")), ("archive/data.pkl", deep),
                                 *rest]))
    with pytest.raises(ValueError, match="repeats"):
        with pytest.warns(UserWarning):  # zipfile warns on a duplicate name
            twice = _archive([("archive/data.pkl", honest.read("archive/data.pkl")), ("archive/data.pkl", deep),
                              *rest])
        decode_message(twice)


def test_a_compressed_or_oversized_pickle_is_refused_before_it_is_read(monkeypatch):
    honest = zipfile.ZipFile(io.BytesIO(_saved({"kind": "progress"})))
    entries = [(n, honest.read(n)) for n in honest.namelist()]
    with pytest.raises(ValueError, match="compressed"):
        decode_message(_archive(entries, zipfile.ZIP_DEFLATED))
    monkeypatch.setattr(pickle_depth, "MAX_PICKLE_BYTES", 8)
    with pytest.raises(ValueError, match="over 8"):
        decode_message(_saved({"kind": "progress", "violations": []}))


def _flooded(pickle: bytes, entries: int) -> bytes:
    return _archive([("archive/data.pkl", pickle)] + [(f"archive/x/{i}", b"") for i in range(entries)])


def test_an_archive_listing_too_many_entries_is_refused_before_zipfile_reads_them(tmp_path):
    """A reply of 500,000 empty entries cost the parent 5 s and 290 MB inside ``zipfile``; its end
    record is read first. torch writes zip64 records, which are read too."""
    from hawkeye_env.judge.parent.validate.pickle_depth import MAX_ARCHIVE_ENTRIES
    from hawkeye_env.judge.parent.validate.reply_decode import read_reply_file

    honest = _saved({"kind": "final", "trials": [{"outputs": [torch.full((1,), float(i))]} for i in range(300)]})
    assert decode_message(honest)["trials"][299]["outputs"][0].item() == 299.0
    payload = _flooded(zipfile.ZipFile(io.BytesIO(honest)).read("archive/data.pkl"), MAX_ARCHIVE_ENTRIES + 1)
    with pytest.raises(ForgedMessage, match="entries"):
        decode_message(payload)
    path = tmp_path / "reply.pt"
    path.write_bytes(payload)
    with pytest.raises(ForgedMessage, match="entries"):
        read_reply_file(str(path), 1 << 30)
    # the same entries behind a comment: the end record is still found
    commented = io.BytesIO(payload)
    with zipfile.ZipFile(commented, "a") as z:
        z.comment = b"x" * 60_000
    assert commented.getvalue().endswith(b"x" * 60_000)
    with pytest.raises(ForgedMessage, match="entries"):
        decode_message(commented.getvalue())


def test_keys_that_can_collide_are_bounded_per_container_and_per_message():
    from hawkeye_env.judge.parent.validate.pickle_depth import MAX_LOOSE_KEYS

    # str keys (salted hashes) are unbounded; ints, floats and tuples hash alike in every process
    assert nesting_depth(_saved({"kind": "final", "profile": {f"k{i}": 0.0 for i in range(50_000)}})) <= 3
    assert nesting_depth(_saved({"kind": "final", "profile": {i: 0.0 for i in range(MAX_LOOSE_KEYS)}})) <= 3
    for loose in ({k * (2**61 - 1): 0 for k in range(MAX_LOOSE_KEYS + 1)},
                  {(k, 1): 0 for k in range(MAX_LOOSE_KEYS + 1)},
                  set(range(MAX_LOOSE_KEYS + 1)), frozenset(range(MAX_LOOSE_KEYS + 1))):
        with pytest.raises(ValueError, match="chosen to collide"):
            decode_message(_saved({"kind": "final", "profile": loose}))
    many = {f"d{j}": {i: 0 for i in range(MAX_LOOSE_KEYS)} for j in range(65)}
    with pytest.raises(ValueError, match="chosen to collide"):
        nesting_depth(_saved({"kind": "final", "profile": many}))


def _dag(levels: int) -> bytes:
    """Pickle opcodes of a tuple whose every level holds the level below twice (memo reuse): a few
    bytes a level, 2**levels nodes once expanded."""
    body = b"K\x01\x85q\x00"
    for i in range(1, levels + 1):  # POP the level below once its two references are taken
        body += b"0" + b"h" + bytes([i - 1]) + b"h" + bytes([i - 1]) + b"\x86" + b"q" + bytes([i])
    return body


def _progress_with(key_or_value: bytes, as_key: bool) -> bytes:
    head = b"\x80\x02}" + b"X\x04\x00\x00\x00kind" + b"X\x08\x00\x00\x00progress" + b"s"
    pair = key_or_value + b"K\x01" if as_key else b"X\x01\x00\x00\x00v" + key_or_value
    return _archive([("archive/data.pkl", head + pair + b"s" + b".")])


def test_values_that_expand_past_their_size_are_refused_before_they_are_built():
    from hawkeye_env.judge.parent.validate.pickle_depth import MAX_EXPANDED_NODES, MAX_KEY_NODES

    # a key is hashed whole: 2**40 nodes from a 1 KB pickle froze the parent
    with pytest.raises(pickle_depth.MessageShapeError, match="expands to"):
        nesting_depth(_progress_with(_dag(40), as_key=True))
    with pytest.raises(ForgedMessage, match="expands to"):
        decode_message(_progress_with(_dag(40), as_key=True))
    with pytest.raises(ValueError, match=f"over {MAX_KEY_NODES}"):
        nesting_depth(_progress_with(_dag(7), as_key=True))
    assert nesting_depth(_progress_with(_dag(4), as_key=True)) <= 8
    # a value is compared, copied and printed whole
    with pytest.raises(ValueError, match=f"over {MAX_EXPANDED_NODES}"):
        nesting_depth(_progress_with(_dag(30), as_key=False))
    assert nesting_depth(_progress_with(_dag(12), as_key=False)) <= 16
