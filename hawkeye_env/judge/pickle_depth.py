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
    """The deepest nesting in a ``torch.save`` archive (its ``data.pkl``), or in a bare pickle;
    ``payload`` is bytes or a seekable binary file (read from where it stands, left anywhere).
    Raises ``ValueError`` for bytes that are neither."""
    source = io.BytesIO(payload) if isinstance(payload, (bytes, bytearray)) else payload
    start = source.tell()
    try:
        with zipfile.ZipFile(source) as archive:
            name = next((n for n in archive.namelist() if n.endswith("/data.pkl") or n == "data.pkl"), None)
            if name is None:
                raise ValueError("the archive holds no data.pkl")
            data = archive.read(name)
    except zipfile.BadZipFile:
        source.seek(start)
        data = source.read()
    try:
        return _pickle_depth(data)
    except (ValueError, IndexError) as exc:
        raise ValueError(f"unreadable pickle: {exc}") from exc


__all__ = ["MAX_MESSAGE_DEPTH", "nesting_depth"]
