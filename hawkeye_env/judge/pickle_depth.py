"""How deeply the containers of a pickle nest, found from its opcodes without building anything.

A worker's messages are ``torch.save`` archives decoded by the parent with
``torch.load(weights_only=True)``, which builds only primitive containers but builds them however
deep the bytes say. CPython hashes and frees nested tuples recursively in C: a 3 MB message of
``TUPLE1`` opcodes (a dict key nested three million deep) overflows the parent's C stack, a
segfault of the trusted process. ``nesting_depth`` walks the opcodes with a stack of depths, each
value pushed as how deep it nests, memo entries included, in time linear in the pickle's length;
``reply_decode.decode_message`` refuses a message deeper than ``MAX_MESSAGE_DEPTH`` before decoding it.
"""

from __future__ import annotations

import io
import pickletools
import zipfile

# The judge's own messages nest at most about 12 deep (a reply dict, a launch plan's steps, a
# step's arguments, a tensor reference's size list, torch's tensor rebuild arguments).
MAX_MESSAGE_DEPTH = 64
# A message's pickle (tensors are separate entries): the judge's largest, a reply with launch plans
# of at most ``launch_plan.MAX_VALUES`` values per shape, is a few MB. The walk runs at about 4.5
# MB/s in the parent (CPU machine: 1.06 s for 4.6 MB of small ints), so the cap bounds one message.
MAX_PICKLE_BYTES = 32 << 20

_MARK = -1  # a MARK on the depth stack (depths are >= 0)
_SCALAR_OPS = frozenset(
    "INT BININT BININT1 BININT2 LONG LONG1 LONG4 STRING BINSTRING SHORT_BINSTRING BINBYTES "
    "SHORT_BINBYTES BINBYTES8 BYTEARRAY8 NONE NEWTRUE NEWFALSE UNICODE SHORT_BINUNICODE BINUNICODE "
    "BINUNICODE8 FLOAT BINFLOAT GLOBAL EXT1 EXT2 EXT4 PERSID NEXT_BUFFER".split())
_EMPTY_OPS = frozenset("EMPTY_LIST EMPTY_DICT EMPTY_SET EMPTY_TUPLE".split())
_TO_MARK_OPS = frozenset("LIST TUPLE DICT FROZENSET INST OBJ".split())
_NOTHING_OPS = frozenset("PROTO FRAME STOP READONLY_BUFFER".split())


def _pop_to_mark(stack: list[int]) -> list[int]:
    items = []
    while stack and stack[-1] != _MARK:
        items.append(stack.pop())
    if stack:
        stack.pop()
    return items


def _pickle_depth(data: bytes) -> int:
    """The deepest nesting of containers and reconstructed objects in pickle ``data``."""
    stack: list[int] = []
    memo: dict[int, int] = {}
    deepest = 0
    for op, arg, _ in pickletools.genops(data):
        name = op.name
        if name in _SCALAR_OPS:
            stack.append(0)
        elif name in _EMPTY_OPS:
            stack.append(1)
        elif name == "MARK":
            stack.append(_MARK)
        elif name in _TO_MARK_OPS:
            items = _pop_to_mark(stack)
            stack.append(1 + max(items, default=0))
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(name[-1])
            items = [stack.pop() for _ in range(min(n, len(stack)))]
            stack.append(1 + max(items, default=0))
        elif name in ("APPEND", "SETITEM"):
            items = [stack.pop() for _ in range(min(1 if name == "APPEND" else 2, len(stack)))]
            if stack:
                stack[-1] = max(stack[-1], 1 + max(items, default=0))
        elif name in ("APPENDS", "SETITEMS", "ADDITEMS"):
            items = _pop_to_mark(stack)
            if stack:
                stack[-1] = max(stack[-1], 1 + max(items, default=0))
        elif name in ("REDUCE", "NEWOBJ"):
            items = [stack.pop() for _ in range(min(2, len(stack)))]
            stack.append(1 + max(items, default=0))
        elif name == "NEWOBJ_EX":
            items = [stack.pop() for _ in range(min(3, len(stack)))]
            stack.append(1 + max(items, default=0))
        elif name == "BUILD":
            state = stack.pop() if stack else 0
            if stack:
                stack[-1] = max(stack[-1], 1 + state)
        elif name == "STACK_GLOBAL":
            del stack[-2:]
            stack.append(0)
        elif name == "BINPERSID":
            if stack:
                stack.pop()
            stack.append(0)
        elif name in ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"):
            key = len(memo) if name == "MEMOIZE" else int(arg)
            memo[key] = stack[-1] if stack else 0
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            stack.append(memo.get(int(arg), 0))
        elif name == "POP":
            if stack:
                stack.pop()
        elif name == "POP_MARK":
            _pop_to_mark(stack)
        elif name == "DUP":
            stack.append(stack[-1] if stack else 0)
        elif name not in _NOTHING_OPS:
            raise ValueError(f"pickle opcode {name} is not one a worker message uses")
        if stack:
            deepest = max(deepest, stack[-1])
    return deepest


def nesting_depth(payload) -> int:
    """The deepest nesting in a ``torch.save`` archive's ``data.pkl``; ``payload`` is bytes or a
    seekable binary file (read from where it stands, left anywhere). Raises ``ValueError`` for
    anything but an archive laid out as ``torch.save`` writes one (``archive_pickle``)."""
    try:
        return _pickle_depth(archive_pickle(payload))
    except (IndexError, RecursionError) as exc:
        raise ValueError(f"unreadable pickle: {exc}") from exc


def archive_pickle(payload) -> bytes:
    """The ``data.pkl`` that ``torch.load`` will read from ``payload``, refusing whatever would let
    the depth check read other bytes than torch does, or cost the parent more than reading it:
    a non-zip payload (torch's legacy format holds several pickles, and the check would read only
    the first), duplicate entry names or entries outside the first entry's folder (torch reads
    ``<that folder>/data.pkl``), compressed entries (``torch.save`` stores them; a deflated one
    inflates in the parent, 1000:1), and a ``data.pkl`` over ``MAX_PICKLE_BYTES``. Raises
    ``ValueError``."""
    source = io.BytesIO(payload) if isinstance(payload, (bytes, bytearray)) else payload
    try:
        archive = zipfile.ZipFile(source)
    except zipfile.BadZipFile as exc:
        raise ValueError("not a torch.save archive (zip)") from exc
    with archive:
        infos = archive.infolist()
        names = [i.filename for i in infos]
        if not names or len(set(names)) != len(names):
            raise ValueError("the archive is empty or repeats an entry name")
        folder = names[0].split("/", 1)[0]
        if any(not n.startswith(folder + "/") for n in names):
            raise ValueError("the archive's entries are not all in one folder")
        if any(i.compress_type != zipfile.ZIP_STORED for i in infos):
            raise ValueError("the archive has compressed entries")
        try:
            info = archive.getinfo(f"{folder}/data.pkl")
        except KeyError as exc:
            raise ValueError("the archive holds no data.pkl") from exc
        if info.file_size > MAX_PICKLE_BYTES:
            raise ValueError(f"data.pkl holds {info.file_size} bytes, over {MAX_PICKLE_BYTES}")
        return archive.read(info)


__all__ = ["MAX_MESSAGE_DEPTH", "MAX_PICKLE_BYTES", "archive_pickle", "nesting_depth"]
