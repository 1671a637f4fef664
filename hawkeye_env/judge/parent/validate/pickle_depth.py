"""How deeply the containers of a pickle nest, and how many keys hash predictably, found from its
opcodes without building anything.

A worker's messages are ``torch.save`` archives decoded by the parent with
``torch.load(weights_only=True)``, which builds only primitive containers but builds them however
the bytes say. Two shapes cost the trusted parent more than the message's size:

* depth: CPython hashes and frees nested tuples recursively in C, so a 3 MB message of ``TUPLE1``
  opcodes (a dict key nested three million deep) overflows the parent's C stack, a segfault;
* colliding keys: ints, floats and tuples of them hash the same in every process (strings and
  bytes are salted per process), so a dict or set of keys chosen to share one hash is built in
  time quadratic in its size, in C, where no timeout reaches it (CPU machine: 20,000 int keys
  ``k * (2**61 - 1)``, all hashing to 0, took 7 s; 40,000 took 31 s).

* shared references: a value the pickle reuses (its memo) is built once but walked whole by
  hashing, comparing, copying or printing, so a kilobyte of tuples that each hold the level below
  twice is 2**40 nodes to hash.

``nesting_depth`` walks the opcodes with a stack of values (how deep each nests, whether it is a
string, how many nodes it expands to), memo entries included, in time linear in the pickle's
length, and raises ``MessageShapeError`` at the first bound a message passes: nesting past
``MAX_MESSAGE_DEPTH``, more than ``MAX_LOOSE_KEYS`` keys that are not strings or bytes in one dict
or set (``MAX_LOOSE_KEYS_TOTAL`` in the message), a key past ``MAX_KEY_NODES`` nodes or a value
past ``MAX_EXPANDED_NODES``. ``reply_decode`` refuses such a message as forged before decoding it.
"""

from __future__ import annotations

import io
import pickletools
import struct
import zipfile

# The judge's own messages nest at most about 12 deep (a reply dict, a launch plan's steps, a
# step's arguments, a tensor reference's size list, torch's tensor rebuild arguments).
MAX_MESSAGE_DEPTH = 64
# Keys that are not strings or bytes (ints, floats, tuples), per dict or set and in the whole
# message: the judge's own messages key their dicts by strings, and hold no set. 1,024 colliding int
# keys build in about 20 ms, so the bounds cost the parent at most about 1.3 s (64 such dicts).
MAX_LOOSE_KEYS = 1024
MAX_LOOSE_KEYS_TOTAL = 64 * 1024
# Values counted as a tree, every shared reference expanded: what hashing a key, comparing, copying
# or printing a value walks (a 1 KB pickle of tuples that reuse each level twice expands to 2**40
# nodes, and hashing it as a dict key froze the parent). A key may expand to MAX_KEY_NODES, the
# message to MAX_EXPANDED_NODES: the judge's largest, a recording reply, holds a few hundred
# thousand (``launch_plan.MAX_VALUES`` values per shape).
MAX_KEY_NODES = 64
MAX_EXPANDED_NODES = 1 << 24
# A message's pickle (tensors are separate entries): the judge's largest, a reply with launch plans
# of at most ``launch_plan.MAX_VALUES`` values per shape, is a few MB. The walk runs at about 5.5
# MB/s in the parent (CPU machine: 2.0 s for 11.4 MB of small ints), so the cap bounds one message
# to about 6 s.
MAX_PICKLE_BYTES = 32 << 20

# An archive's central directory, read whole by ``zipfile`` into one object per entry before any
# entry is looked at: 500,000 empty entries (a 50 MB reply) took 5 s and 290 MB of the parent. The
# judge's replies hold one entry per tensor storage and four more, tens to hundreds; 65,536 entries
# (about 4 MiB of directory) parse in 0.46 s (CPU machine).
MAX_ARCHIVE_ENTRIES = 1 << 16
MAX_DIRECTORY_BYTES = 4 << 20

_SCALAR_OPS = frozenset(
    "INT BININT BININT1 BININT2 LONG LONG1 LONG4 STRING BINSTRING SHORT_BINSTRING BINBYTES "
    "SHORT_BINBYTES BINBYTES8 BYTEARRAY8 NONE NEWTRUE NEWFALSE UNICODE SHORT_BINUNICODE BINUNICODE "
    "BINUNICODE8 FLOAT BINFLOAT GLOBAL EXT1 EXT2 EXT4 PERSID NEXT_BUFFER".split())
# Scalars that unpickle as str or bytes (their hashes are salted per process).
_TEXT_OPS = frozenset(
    "STRING BINSTRING SHORT_BINSTRING BINBYTES SHORT_BINBYTES BINBYTES8 UNICODE SHORT_BINUNICODE BINUNICODE "
    "BINUNICODE8".split())
_EMPTY_OPS = frozenset("EMPTY_LIST EMPTY_DICT EMPTY_SET EMPTY_TUPLE".split())
_TO_MARK_OPS = frozenset("LIST TUPLE DICT FROZENSET INST OBJ".split())
_NOTHING_OPS = frozenset("PROTO FRAME STOP READONLY_BUFFER".split())


# Callables whose argument's items become keys: ``set(list)``, ``OrderedDict(pairs)``... (protocol 2
# pickles a set as a reduce of ``set`` on a list).
_KEYED_CALLABLES = frozenset(
    f"{module} {name}" for module in ("__builtin__", "builtins") for name in ("set", "frozenset", "dict")
) | {"collections OrderedDict", "collections defaultdict", "collections Counter"}


class MessageShapeError(ValueError):
    """A pickle shaped as no message of the judge's own code is: too deep, too many keys that can
    collide, or values that expand past their bounds."""


class _Value:
    """One value on the walk's stack: how deep it nests, whether it is a string, (a dict or set)
    how many keys it holds that are not strings, (a list or tuple) how many such items and the
    most of its own items' such items, and (a global) its name."""

    __slots__ = ("depth", "text", "loose", "items", "inner", "name", "nodes")

    def __init__(self, depth: int, text: bool = False, name: str = "", nodes: int = 1) -> None:
        self.depth, self.text, self.loose, self.items, self.inner, self.name = depth, text, 0, 0, 0, name
        self.nodes = nodes  # the value's size as a tree, shared references expanded


_MARK = _Value(-1)
_SCALAR = _Value(0)  # every plain scalar (shared; ``into_top`` never changes it in place)


class _Shape:
    """The walk's state and what it found."""

    def __init__(self) -> None:
        self.stack: list[_Value] = []
        self.memo: dict[int, _Value] = {}
        self.deepest = 0
        self.loose_total = 0

    def pop(self, n: int) -> list[_Value]:
        """The top ``n`` values (fewer if the stack is shorter), topmost first."""
        return [self.stack.pop() for _ in range(min(n, len(self.stack)))]

    def pop_to_mark(self) -> list[_Value]:
        """The values above the topmost MARK, topmost first; the MARK is dropped."""
        items = []
        while self.stack and self.stack[-1] is not _MARK:
            items.append(self.stack.pop())
        if self.stack:
            self.stack.pop()
        return items

    def nest(self, items: list[_Value]) -> _Value:
        """A list or tuple of ``items``."""
        built = _Value(1 + max((v.depth for v in items), default=0), nodes=self.grown(1, items))
        built.items = sum(1 for v in items if not v.text)
        built.inner = max((v.items for v in items), default=0)
        return built

    def into_top(self, items: list[_Value], keys: list[_Value]) -> None:
        """``items`` put into the container on top of the stack, ``keys`` among them as keys."""
        if self.stack and self.stack[-1] is not _MARK:
            top = self.stack[-1]
            if top is _SCALAR:  # a malformed pickle adds to a scalar: keep the shared one intact
                top = self.stack[-1] = _Value(0)
            top.depth = max(top.depth, 1 + max((v.depth for v in items), default=0))
            top.items += sum(1 for v in items if not v.text)
            top.nodes = self.grown(top.nodes, items)
            self.count_keys(top, sum(1 for k in keys if not k.text))
            self.check_keys(keys)

    def grown(self, nodes: int, items: list[_Value]) -> int:
        """``nodes`` plus the expanded size of ``items``; ``ValueError`` past ``MAX_EXPANDED_NODES``."""
        nodes += sum(v.nodes for v in items)
        if nodes > MAX_EXPANDED_NODES:
            raise MessageShapeError(f"a value that expands to over {MAX_EXPANDED_NODES} nodes (shared references "
                             "counted each time): more than the judge's messages hold")
        return nodes

    def check_keys(self, keys: list[_Value]) -> None:
        big = max((k.nodes for k in keys), default=0)
        if big > MAX_KEY_NODES:
            raise MessageShapeError(f"a dict key or set item that expands to {big} nodes, over {MAX_KEY_NODES}: "
                                    "hashing it walks every one")

    def count_keys(self, container: _Value, loose: int) -> None:
        """``loose`` more keys that are not strings put into ``container``."""
        container.loose += loose
        self.loose_total += loose
        if container.loose > MAX_LOOSE_KEYS or self.loose_total > MAX_LOOSE_KEYS_TOTAL:
            raise MessageShapeError(f"a dict or set with {container.loose} keys that are not strings "
                                    f"({self.loose_total} in the message), over {MAX_LOOSE_KEYS} "
                                    f"({MAX_LOOSE_KEYS_TOTAL}): keys that can be chosen to collide")

    def reduce(self, n: int) -> _Value:
        """A callable applied to its arguments (``REDUCE``, ``NEWOBJ``: callable, argument tuple;
        ``NEWOBJ_EX``: callable, tuple, keywords): a keyed constructor's arguments' items count
        as its keys."""
        popped = self.pop(n)
        call, args = popped[-1] if popped else _Value(0), popped[-2] if len(popped) > 1 else _Value(0)
        built = self.nest(popped)
        built.items = built.inner = 0
        if call.name in _KEYED_CALLABLES:
            self.count_keys(built, args.inner)
            if args.inner and args.nodes > MAX_KEY_NODES * max(args.inner, 1) + 2:
                self.check_keys([_Value(0, nodes=args.nodes)])
        return built


def _step(shape: _Shape, name: str, arg) -> None:
    """One opcode's effect on the walk's stack and memo."""
    stack = shape.stack
    if name in _SCALAR_OPS:
        if name in _TEXT_OPS:
            stack.append(_Value(0, True, arg if isinstance(arg, str) else ""))
        elif name == "GLOBAL":
            stack.append(_Value(0, name=arg))
        else:
            stack.append(_SCALAR)
    elif name in _EMPTY_OPS:
        stack.append(_Value(1))
    elif name == "MARK":
        stack.append(_MARK)
    elif name in _TO_MARK_OPS:
        items = shape.pop_to_mark()
        built = shape.nest(items)
        if name in ("DICT", "FROZENSET"):  # topmost first: value, key, value, key... for a dict
            keys = items[1::2] if name == "DICT" else items
            shape.count_keys(built, sum(1 for k in keys if not k.text))
            shape.check_keys(keys)
        stack.append(built)
    elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
        stack.append(shape.nest(shape.pop(int(name[-1]))))
    elif name == "APPEND":
        shape.into_top(shape.pop(1), [])
    elif name == "SETITEM":
        items = shape.pop(2)
        shape.into_top(items, items[1:])
    elif name in ("APPENDS", "SETITEMS", "ADDITEMS"):
        items = shape.pop_to_mark()
        shape.into_top(items, items if name == "ADDITEMS" else items[1::2] if name == "SETITEMS" else [])
    elif name in ("REDUCE", "NEWOBJ"):
        stack.append(shape.reduce(2))
    elif name == "NEWOBJ_EX":
        stack.append(shape.reduce(3))
    elif name == "BUILD":
        shape.into_top(shape.pop(1), [])
    elif name == "STACK_GLOBAL":
        names = shape.pop(2)
        stack.append(_Value(0, name=" ".join(v.name for v in reversed(names))))
    elif name == "BINPERSID":
        shape.pop(1)
        stack.append(_Value(0))
    elif name in ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"):
        shape.memo[len(shape.memo) if name == "MEMOIZE" else int(arg)] = stack[-1] if stack else _Value(0)
    elif name in ("GET", "BINGET", "LONG_BINGET"):
        stack.append(shape.memo.get(int(arg)) or _Value(0))
    elif name == "POP":
        shape.pop(1)
    elif name == "POP_MARK":
        shape.pop_to_mark()
    elif name == "DUP":
        stack.append(stack[-1] if stack else _Value(0))
    elif name not in _NOTHING_OPS:
        raise ValueError(f"pickle opcode {name} is not one a worker message uses")


def _pickle_depth(data: bytes) -> int:
    """The deepest nesting of containers and reconstructed objects in pickle ``data``;
    ``MessageShapeError`` at the first bound it passes (module docstring)."""
    shape = _Shape()
    for op, arg, _ in pickletools.genops(data):
        _step(shape, op.name, arg)
        if shape.stack and shape.stack[-1] is not _MARK:
            shape.deepest = max(shape.deepest, shape.stack[-1].depth)
            if shape.deepest > MAX_MESSAGE_DEPTH:
                raise MessageShapeError(f"a worker message nests more than {MAX_MESSAGE_DEPTH} deep: written by "
                                        "the candidate, not by the judge's worker")
    return shape.deepest


def nesting_depth(payload) -> int:
    """The deepest nesting in a ``torch.save`` archive's ``data.pkl``; ``payload`` is bytes or a
    seekable binary file (read from where it stands, left anywhere). Raises ``MessageShapeError``
    past a bound (module docstring), ``ValueError`` for anything but an archive laid out as
    ``torch.save`` writes one (``archive_pickle``)."""
    try:
        return _pickle_depth(archive_pickle(payload))
    except (IndexError, RecursionError) as exc:
        raise ValueError(f"unreadable pickle: {exc}") from exc


def _directory_size(source) -> tuple[int, int]:
    """(entries, bytes) of the central directory that ``zipfile`` would read from ``source``, the
    larger where the end record and a zip64 record disagree (``zipfile`` takes the zip64 record just
    before its locator; the locator names one too: both are read). ``ValueError`` if no end record."""
    source.seek(0, io.SEEK_END)
    size = source.tell()
    span = min(size, 22 + 0xFFFF)  # the end record (22 bytes) and a comment of at most 64 KiB
    source.seek(size - span)
    tail = source.read(span)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise ValueError("not a torch.save archive (zip)")
    entries, directory = struct.unpack_from("<HL", tail, at + 10)
    if at >= 20 and tail[at - 20:at - 16] == b"PK\x06\x07":
        named = struct.unpack_from("<Q", tail, at - 20 + 8)[0]
        for offset in (named, size - span + at - 20 - 56):
            if 0 <= offset <= size - 56:
                source.seek(offset)
                record = source.read(56)
                if record[:4] == b"PK\x06\x06":
                    total, length = struct.unpack_from("<QQ", record, 32)
                    entries, directory = max(entries, total), max(directory, length)
    return entries, directory


def archive_pickle(payload) -> bytes:
    """The ``data.pkl`` that ``torch.load`` will read from ``payload``, refusing whatever would let
    the depth check read other bytes than torch does, or cost the parent more than reading it:
    a non-zip payload (torch's legacy format holds several pickles, and the check would read only
    the first), duplicate entry names or entries outside the first entry's folder (torch reads
    ``<that folder>/data.pkl``), compressed entries (``torch.save`` stores them; a deflated one
    inflates in the parent, 1000:1), and a ``data.pkl`` over ``MAX_PICKLE_BYTES``. Raises
    ``ValueError``; ``MessageShapeError`` for a central directory past ``MAX_ARCHIVE_ENTRIES`` or
    ``MAX_DIRECTORY_BYTES``, refused before ``zipfile`` reads it."""
    source = io.BytesIO(payload) if isinstance(payload, (bytes, bytearray)) else payload
    entries, directory = _directory_size(source)
    if entries > MAX_ARCHIVE_ENTRIES or directory > MAX_DIRECTORY_BYTES:
        raise MessageShapeError(f"the archive lists {entries} entries in {directory} bytes, over "
                                f"{MAX_ARCHIVE_ENTRIES} or {MAX_DIRECTORY_BYTES}: written by the candidate")
    source.seek(0)
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


__all__ = ["MAX_ARCHIVE_ENTRIES", "MAX_DIRECTORY_BYTES", "MAX_EXPANDED_NODES", "MAX_KEY_NODES", "MAX_LOOSE_KEYS",
           "MAX_LOOSE_KEYS_TOTAL", "MAX_MESSAGE_DEPTH", "MAX_PICKLE_BYTES", "MessageShapeError", "archive_pickle",
           "nesting_depth"]
