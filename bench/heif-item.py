#!/usr/bin/env python3
"""One image item of a HEIF file (and, for a grid, its tiles) as a HEIF file of
its own, that item its primary: with its properties (copied byte for byte)
and data, nothing else. For measuring what libheif 1.15 cannot open as it is
(an iPhone 16 HEIC: "Too many auxiliary image references") or cannot reach (a
hidden gain map item, a `tmap`'s inputs): `heif-convert` then decodes it.

    python3 bench/heif-item.py FILE.heic ITEM_ID OUT.heic
    python3 bench/heif-item.py FILE.heic --list     # items: id, type, hidden, references, properties
    python3 bench/heif-item.py FILE.heic --data ITEM_ID OUT   # an item's data (a tmap's metadata, an XMP)

Standard library only.
"""
import struct
import sys


def boxes(d, start, end):
    p = start
    while p + 8 <= end:
        size, typ = struct.unpack(">I4s", d[p:p + 8])
        head = 8
        if size == 1:
            size = struct.unpack(">Q", d[p + 8:p + 16])[0]
            head = 16
        elif size == 0:
            size = end - p
        if size < head or p + size > end:
            break
        yield typ.decode("latin1"), p, p + head, p + size
        p += size


class File:
    def __init__(self, path):
        d = self.d = open(path, "rb").read()
        top = {t: (s, a, b) for t, s, a, b in boxes(d, 0, len(d))}
        self.ftyp = d[top["ftyp"][0]:top["ftyp"][2]]
        _, ma, mb = top["meta"]
        meta = {t: (s, a, b) for t, s, a, b in boxes(d, ma + 4, mb)}
        self.meta = meta
        a = meta["pitm"][1]
        self.primary = struct.unpack(">H", d[a + 4:a + 6])[0] if d[a] == 0 else struct.unpack(">I", d[a + 4:a + 8])[0]
        self.infe = {}
        _, a, b = meta["iinf"]
        ver = d[a]
        first = a + 4 + (2 if ver == 0 else 4)
        for t, s, x, y in boxes(d, first, b):
            if t != "infe" or d[x] < 2:
                continue
            iid = struct.unpack(">H", d[x + 4:x + 6])[0] if d[x] == 2 else struct.unpack(">I", d[x + 4:x + 8])[0]
            at = x + 8 if d[x] == 2 else x + 10
            self.infe[iid] = (d[at:at + 4].decode("latin1"), d[x + 3] & 1, d[s:y])
        self.refs = []
        if "iref" in meta:
            _, a, b = meta["iref"]
            ver = d[a]
            for t, s, x, y in boxes(d, a + 4, b):
                w = 2 if ver == 0 else 4
                f = int.from_bytes(d[x:x + w], "big")
                n = struct.unpack(">H", d[x + w:x + w + 2])[0]
                to = [int.from_bytes(d[x + w + 2 + i * w:x + w + 2 + (i + 1) * w], "big") for i in range(n)]
                self.refs.append((t, f, to))
        _, a, b = meta["iprp"]
        inside = {t: (s, x, y) for t, s, x, y in boxes(d, a, b)}
        self.props = [d[s:y] for t, s, x, y in boxes(d, inside["ipco"][1], inside["ipco"][2])]
        self.assoc = {}
        _, a, b = inside["ipma"]
        ver, flags = d[a], d[a + 3]
        a += 4
        n = struct.unpack(">I", d[a:a + 4])[0]
        a += 4
        for _ in range(n):
            if ver < 1:
                iid = struct.unpack(">H", d[a:a + 2])[0]
                a += 2
            else:
                iid = struct.unpack(">I", d[a:a + 4])[0]
                a += 4
            c = d[a]
            a += 1
            lst = []
            for _ in range(c):
                if flags & 1:
                    v = struct.unpack(">H", d[a:a + 2])[0]
                    a += 2
                    lst.append((v & 0x7FFF, v >> 15))
                else:
                    v = d[a]
                    a += 1
                    lst.append((v & 0x7F, v >> 7))
            self.assoc[iid] = lst
        self.locs = self._iloc()

    def _iloc(self):
        d = self.d
        _, a, b = self.meta["iloc"]
        ver = d[a]
        a += 4
        x, y = d[a], d[a + 1]
        os_, ls, bs, ix = x >> 4, x & 15, y >> 4, (y & 15 if ver in (1, 2) else 0)
        a += 2
        if ver < 2:
            n = struct.unpack(">H", d[a:a + 2])[0]
            a += 2
        else:
            n = struct.unpack(">I", d[a:a + 4])[0]
            a += 4
        out = {}

        def rd(size):
            nonlocal a
            v = int.from_bytes(d[a:a + size], "big") if size else 0
            a += size
            return v
        for _ in range(n):
            iid = rd(2) if ver < 2 else rd(4)
            method = rd(2) & 15 if ver in (1, 2) else 0
            rd(2)
            base = rd(bs)
            extents = []
            for _ in range(rd(2)):
                rd(ix)
                extents.append((base + rd(os_), rd(ls)))
            out[iid] = (method, extents)
        return out

    def data(self, iid):
        method, extents = self.locs[iid]
        if method == 1:
            _, a, b = self.meta["idat"]
            return b"".join(self.d[a + o:a + o + n] for o, n in extents)
        return b"".join(self.d[o:o + n] for o, n in extents)

    def refs_from(self, iid, typ):
        return next((to for t, f, to in self.refs if t == typ and f == iid), [])


def box(typ, payload):
    return struct.pack(">I", 8 + len(payload)) + typ + payload


def fullbox(typ, version, flags, payload):
    return box(typ, bytes([version]) + flags.to_bytes(3, "big") + payload)


def extract(f, iid, out):
    items = [iid] + (f.refs_from(iid, "dimg") if f.infe[iid][0] == "grid" else [])
    used = sorted({p for i in items for p, _ in f.assoc.get(i, [])})
    index = {p: n + 1 for n, p in enumerate(used)}
    ipco = box(b"ipco", b"".join(f.props[p - 1] for p in used))
    ipma = fullbox(b"ipma", 0, 1, struct.pack(">I", len(items)) + b"".join(
        struct.pack(">IB", i, len(f.assoc.get(i, []))) + b"".join(struct.pack(">H", (0x8000 if e else 0) | index[p]) for p, e in f.assoc.get(i, []))
        for i in items))
    ipma = bytearray(ipma)
    ipma[8] = 1  # version 1: 32-bit item ids
    iinf = fullbox(b"iinf", 0, 0, struct.pack(">H", len(items)) + b"".join(
        fullbox(b"infe", 3, 1 if (i != iid) else 0, struct.pack(">IH", i, 0) + f.infe[i][0].encode() + b"\0") for i in items))
    iref = fullbox(b"iref", 1, 0, box(b"dimg", struct.pack(">IH", iid, len(items) - 1) + b"".join(struct.pack(">I", i) for i in items[1:]))) if len(items) > 1 else b""
    datas = [f.data(i) for i in items]

    def iloc(base):
        body = bytes([0x44, 0x00]) + struct.pack(">I", len(items))
        pos = base
        for i, blob in zip(items, datas):
            body += struct.pack(">IHHHII", i, 0, 0, 1, pos, len(blob))
            pos += len(blob)
        return fullbox(b"iloc", 2, 0, body)
    hdlr = fullbox(b"hdlr", 0, 0, b"\0\0\0\0pict" + bytes(12) + b"\0")
    pitm = fullbox(b"pitm", 1, 0, struct.pack(">I", iid))
    iprp = box(b"iprp", ipco + bytes(ipma))

    def meta(base):
        return fullbox(b"meta", 0, 0, hdlr + pitm + iloc(base) + iinf + iref + iprp)
    head = len(f.ftyp) + len(meta(0)) + 8
    open(out, "wb").write(f.ftyp + meta(head) + box(b"mdat", b"".join(datas)))


def main():
    f = File(sys.argv[1])
    if sys.argv[2] == "--list":
        for iid in sorted(f.infe):
            typ, hidden, _ = f.infe[iid]
            refs = ["%s>%s" % (t, to if len(to) < 5 else "%d items" % len(to)) for t, fr, to in f.refs if fr == iid]
            def name(p):
                prop = f.props[p - 1]
                kind = prop[4:8].decode("latin1")
                return "auxC:" + prop[12:].split(b"\0")[0].decode("latin1") if kind == "auxC" else kind
            print(iid, typ, "hidden" if hidden else "-", " ".join(refs) or "-", " ".join(name(p) for p, _ in f.assoc.get(iid, [])))
        print("primary", f.primary)
    elif sys.argv[2] == "--data":
        open(sys.argv[4], "wb").write(f.data(int(sys.argv[3])))
    else:
        extract(f, int(sys.argv[2]), sys.argv[3])


if __name__ == "__main__":
    main()
