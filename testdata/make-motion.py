#!/usr/bin/env python3
"""Regenerates testdata/motion/: small motion photos of every layout share-ingest
reads, and Live Photo pairs, made here from synthetic pictures (no file of
anyone else's). Run by hand, never by CI:

    python3 testdata/make-motion.py

Needs ffmpeg 5.1 (libx264, libx265), heif-enc (libheif-examples 1.15) and
exiftool 12.x. Every byte layout is built below and described in
testdata/README.md ("Motion photos and Live Photos"); exiftool writes the Apple
maker note's content identifier (Apple:MediaGroupUUID, tag 0x0011) and the
QuickTime keys (Keys:ContentIdentifier, Keys:CreationDate), and reads them back.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "motion")
FF = ["ffmpeg", "-nostdin", "-v", "error", "-y"]
IDENTIFIER = "5A8B1D0E-3C2F-4E61-9B7A-0C4D2E8F1A36"


def run(*args):
    subprocess.run(list(args), check=True)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(name, data):
    path = os.path.join(OUT, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def still_jpeg(work, name, colour):
    """A 320x240 JPEG: a test pattern with a coloured square."""
    path = os.path.join(work, name)
    run(*FF, "-f", "lavfi", "-i", "testsrc2=size=320x240:duration=1", "-frames:v", "1",
        "-vf", f"drawbox=x=8:y=8:w=64:h=64:color={colour}:t=fill", "-q:v", "6", path)
    return path


def clip(work, name, seconds, codec="libx264", faststart=False, colours=None):
    """A small silent clip: 160x120, 30 fps, one keyframe (at 0). `colours`:
    (first, second, switch): the picture is the first colour before `switch`
    seconds and the second after (a poster test tells them apart)."""
    path = os.path.join(work, name)
    if colours:
        first, second, switch = colours
        source = ["-f", "lavfi", "-i", f"color=c={first}:size=160x120:rate=30:duration={seconds}",
                  "-vf", f"drawbox=x=0:y=0:w=160:h=120:color={second}:t=fill:enable='gte(t,{switch})'"]
    else:
        source = ["-f", "lavfi", "-i", f"testsrc2=size=160x120:rate=30:duration={seconds}"]
    flags = ["-movflags", "+faststart"] if faststart else []
    # One keyframe, at 0: no scene-cut keyframe where the colour changes.
    keyframes = ["-tag:v", "hvc1", "-x265-params", "log-level=none:scenecut=0"] if codec == "libx265" else ["-sc_threshold", "0"]
    run(*FF, *source, "-c:v", codec, "-pix_fmt", "yuv420p", "-g", "1000", "-b:v", "120k", *keyframes, *flags, path)
    return read(path)


def app1_xmp(xmp):
    payload = b"http://ns.adobe.com/xap/1.0/\0" + xmp.encode()
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload


def with_segment(jpeg, segment):
    """The JPEG with `segment` right after SOI."""
    assert jpeg[:2] == b"\xff\xd8"
    return jpeg[:2] + segment + jpeg[2:]


def google_xmp(video_length, padding=0):
    return f"""<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="share-ingest testdata">
  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
    <rdf:Description rdf:about=""
        xmlns:GCamera="http://ns.google.com/photos/1.0/camera/"
        xmlns:Container="http://ns.google.com/photos/1.0/container/"
        xmlns:Item="http://ns.google.com/photos/1.0/container/item/"
      GCamera:MotionPhoto="1" GCamera:MotionPhotoVersion="1" GCamera:MotionPhotoPresentationTimestampUs="500000">
      <Container:Directory>
        <rdf:Seq>
          <rdf:li rdf:parseType="Resource">
            <Container:Item Item:Mime="image/jpeg" Item:Semantic="Primary" Item:Length="0" Item:Padding="0"/>
          </rdf:li>
          <rdf:li rdf:parseType="Resource">
            <Container:Item Item:Mime="video/mp4" Item:Semantic="MotionPhoto" Item:Length="{video_length}" Item:Padding="{padding}"/>
          </rdf:li>
        </rdf:Seq>
      </Container:Directory>
    </rdf:Description>
  </rdf:RDF>
</x:xmpmeta>"""


def micro_video_xmp(offset):
    # The older form: values as elements, another prefix for the same namespace.
    return f"""<x:xmpmeta xmlns:x="adobe:ns:meta/">
  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
    <rdf:Description rdf:about="" xmlns:Camera="http://ns.google.com/photos/1.0/camera/">
      <Camera:MicroVideo>1</Camera:MicroVideo>
      <Camera:MicroVideoVersion>1</Camera:MicroVideoVersion>
      <Camera:MicroVideoOffset>{offset}</Camera:MicroVideoOffset>
      <Camera:MicroVideoPresentationTimestampUs>-1</Camera:MicroVideoPresentationTimestampUs>
    </rdf:Description>
  </rdf:RDF>
</x:xmpmeta>"""


def samsung_trailer(video):
    """Samsung's SEF trailer: data blocks, then `SEFH` version count entries, the
    directory's length and `SEFT`. An entry: 2 zero bytes, the type (LE), the
    block's distance back from `SEFH`, its length. A block: 2 zero bytes, the
    type, the name's length, the name, the data."""
    blocks = [(0x0A01, b"Image_UTC_Data", b"1714557600000"), (0x0A30, b"MotionPhoto_Data", video), (0x0A31, b"MotionPhoto_Version", b"mpv2")]
    data = b""
    starts = []
    for kind, name, value in blocks:
        starts.append(len(data))
        data += struct.pack("<HHI", 0, kind, len(name)) + name + value
    directory = b"SEFH" + struct.pack("<II", 107, len(blocks))
    for (kind, name, value), start in zip(blocks, starts):
        length = 8 + len(name) + len(value)
        directory += struct.pack("<HHII", 0, kind, len(data) - start, length)
    return data + directory + struct.pack("<I", len(directory)) + b"SEFT"


def box(kind, payload):
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def full_box(kind, version, flags, payload):
    return box(kind, struct.pack(">I", version << 24 | flags) + payload)


def boxes(data, start=0, end=None):
    end = len(data) if end is None else end
    position = start
    while position + 8 <= end:
        size, kind = struct.unpack(">I4s", data[position:position + 8])
        yield kind, position, size
        position += size


def add_still_image_time(mov, seconds):
    """Adds the timed-metadata track Apple writes for a Live Photo's still: a
    `mebx` sample description whose key is com.apple.quicktime.still-image-time
    (int8, well-known type 65), one sample (-1) shown at `seconds` through an
    empty edit. Its sample goes into a new `mdat` after the `moov`."""
    top = list(boxes(mov))
    assert [k for k, _, _ in top][-1] == b"moov", "the moov must be last"
    _, moov_at, moov_size = top[-1]
    moov = mov[moov_at + 8:moov_at + moov_size]
    children = list(boxes(moov))
    mvhd = next((p, s) for k, p, s in children if k == b"mvhd")
    mvhd_payload = bytearray(moov[mvhd[0] + 8:mvhd[0] + mvhd[1]])
    assert mvhd_payload[0] == 0
    timescale = struct.unpack(">I", mvhd_payload[12:16])[0]
    next_track = struct.unpack(">I", mvhd_payload[-4:])[0]
    mvhd_payload[-4:] = struct.pack(">I", next_track + 1)
    media_scale = 600
    duration = 20  # one frame at 30 fps, in the media time scale
    key = b"com.apple.quicktime.still-image-time"
    keys = box(b"keys", box(struct.pack(">I", 1), box(b"keyd", b"mdta" + key) + box(b"dtyp", struct.pack(">II", 0, 65))))
    mebx = box(b"mebx", b"\0" * 6 + struct.pack(">H", 1) + keys)
    sample = struct.pack(">I", 9) + struct.pack(">I", 1) + b"\xff"
    sample_offset = len(mov) + (0)  # patched below: after the grown moov
    empty = int(round(seconds * timescale))
    edit_duration = int(round(duration / media_scale * timescale))

    def trak(chunk_offset):
        tkhd = full_box(b"tkhd", 0, 3, struct.pack(">IIII", 0, 0, next_track, 0) + struct.pack(">I", empty + edit_duration)
                        + b"\0" * 8 + struct.pack(">hhhh", 0, 0, 0, 0)
                        + struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000) + struct.pack(">II", 0, 0))
        elst = full_box(b"elst", 0, 0, struct.pack(">I", 2) + struct.pack(">IiI", empty, -1, 0x10000) + struct.pack(">IiI", edit_duration, 0, 0x10000))
        mdhd = full_box(b"mdhd", 0, 0, struct.pack(">IIII", 0, 0, media_scale, duration) + struct.pack(">HH", 0x55C4, 0))
        hdlr = full_box(b"hdlr", 0, 0, struct.pack(">I", 0) + b"meta" + b"\0" * 12 + b"Core Media Metadata\0")
        stbl = box(b"stbl", full_box(b"stsd", 0, 0, struct.pack(">I", 1) + mebx)
                   + full_box(b"stts", 0, 0, struct.pack(">III", 1, 1, duration))
                   + full_box(b"stsc", 0, 0, struct.pack(">IIII", 1, 1, 1, 1))
                   + full_box(b"stsz", 0, 0, struct.pack(">III", 0, 1, len(sample)))
                   + full_box(b"stco", 0, 0, struct.pack(">II", 1, chunk_offset)))
        minf = box(b"minf", full_box(b"nmhd", 0, 0, b"") + box(b"dinf", full_box(b"dref", 0, 0, struct.pack(">I", 1) + full_box(b"url ", 0, 1, b""))) + stbl)
        return box(b"trak", tkhd + box(b"edts", elst) + box(b"mdia", mdhd + hdlr + minf))

    rebuilt = b""
    for kind, position, size in children:
        rebuilt += box(b"mvhd", bytes(mvhd_payload)) if kind == b"mvhd" else moov[position:position + size]
    new_moov_size = 8 + len(rebuilt) + len(trak(0))
    sample_offset = moov_at + new_moov_size + 8
    new_moov = box(b"moov", rebuilt + trak(sample_offset))
    assert len(new_moov) == new_moov_size
    return mov[:moov_at] + new_moov + box(b"mdat", sample)


def apple_still(work, name, colour, when, offset, identifier):
    """A JPEG whose EXIF says Apple made it: Make, DateTimeOriginal with its
    sub-seconds and offset, and an Apple maker note (`Apple iOS\\0`, version 1,
    `MM`, an IFD whose offsets count from the maker note's start) with tag
    0x0011 set by exiftool (Apple:MediaGroupUUID)."""
    jpeg = read(still_jpeg(work, name, colour))
    placeholder = b"00000000-0000-0000-0000-000000000000\0"
    note_ifd_at = 14
    note = b"Apple iOS\0" + b"\0\x01" + b"MM"
    note += struct.pack(">H", 2)
    value_at = note_ifd_at + 2 + 2 * 12 + 4
    note += struct.pack(">HHII", 0x0001, 9, 1, 14)  # MakerNoteVersion (int32s)
    note += struct.pack(">HHII", 0x0011, 2, len(placeholder), value_at)
    note += struct.pack(">I", 0) + placeholder

    entries0 = [(0x010F, 2, b"Apple\0"), (0x0110, 2, b"iPhone 12\0")]
    exif_entries = [(0x9003, 2, when.encode() + b"\0"), (0x9011, 2, offset.encode() + b"\0"), (0x9291, 2, b"250\0"), (0x927C, 7, note)]

    def ifd(entries, start, extra_pointer=None):
        count = len(entries) + (1 if extra_pointer is not None else 0)
        table = struct.pack(">H", count)
        data_at = start + 2 + count * 12 + 4
        data = b""
        rows = list(entries)
        if extra_pointer is not None:
            rows.append(extra_pointer)
        rows.sort(key=lambda e: e[0])
        for tag, kind, value in rows:
            if kind == 4:
                table += struct.pack(">HHII", tag, 4, 1, value)
                continue
            if len(value) <= 4:
                table += struct.pack(">HHI", tag, kind, len(value)) + value.ljust(4, b"\0")
            else:
                table += struct.pack(">HHII", tag, kind, len(value), data_at + len(data))
                data += value + (b"\0" if len(value) % 2 else b"")
        return table + struct.pack(">I", 0) + data

    ifd0_at = 8
    probe = ifd(entries0, ifd0_at, (0x8769, 4, 0))
    exif_at = ifd0_at + len(probe)
    tiff = b"MM\0\x2a" + struct.pack(">I", ifd0_at) + ifd(entries0, ifd0_at, (0x8769, 4, exif_at)) + ifd(exif_entries, exif_at)
    payload = b"Exif\0\0" + tiff
    path = os.path.join(work, "apple-" + name)
    with open(path, "wb") as f:
        f.write(with_segment(jpeg, b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload))
    run("exiftool", "-q", "-overwrite_original", f"-Apple:MediaGroupUUID={identifier}", path)
    got = subprocess.run(["exiftool", "-s3", "-Apple:MediaGroupUUID", path], check=True, capture_output=True, text=True).stdout.strip()
    assert got == identifier, f"exiftool reads back {got!r}"
    return path


def plain_still(work, name, colour, when):
    """A JPEG with only a DateTimeOriginal (no maker note, no offset)."""
    path = still_jpeg(work, name, colour)
    run("exiftool", "-q", "-overwrite_original", f"-EXIF:DateTimeOriginal={when}", "-EXIF:Make=Apple", path)
    return path


# exiftool 12.57 has no name for com.apple.quicktime.content.identifier yet:
# this defines it in its Keys table (written as an `mdta` key with that prefix).
KEYS_CONFIG = """%Image::ExifTool::UserDefined = (
    'Image::ExifTool::QuickTime::Keys' => {
        'content.identifier' => { Name => 'ContentIdentifier', Writable => 'string' },
    },
);
1;
"""


def movie(work, name, seconds, created, identifier=None, still_time=None, codec="libx264", colours=None):
    """A QuickTime movie (ffmpeg), the still-image-time track added here, then
    the `mdta` keys written by exiftool (which moves the `moov` first and
    updates every track's chunk offsets)."""
    path = os.path.join(work, name)
    data = clip(work, "raw-" + name, seconds, codec=codec, colours=colours)
    if still_time is not None:
        data = add_still_image_time(data, still_time)
    with open(path, "wb") as f:
        f.write(data)
    config = os.path.join(work, "keys.config")
    with open(config, "w") as f:
        f.write(KEYS_CONFIG)
    tags = [f"-Keys:CreationDate={created}"]
    if identifier:
        tags.append(f"-Keys:ContentIdentifier={identifier}")
    run("exiftool", "-config", config, "-q", "-overwrite_original", *tags, path)
    if identifier:
        got = subprocess.run(["exiftool", "-config", config, "-s3", "-Keys:ContentIdentifier", path], check=True, capture_output=True, text=True).stdout.strip()
        assert got == identifier, f"exiftool reads back {got!r}"
    return path


def samsung_xmp():
    # Samsung's newer JPEGs: GCamera:MotionPhoto without a Container:Directory.
    return """<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Adobe XMP Core 5.1.0-jc003">
  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
    <rdf:Description rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/"
      GCamera:MotionPhoto="1" GCamera:MotionPhotoVersion="1" GCamera:MotionPhotoPresentationTimestampUs="-1"/>
  </rdf:RDF>
</x:xmpmeta>"""


def samsung_no_directory(still, video):
    """A Samsung JPEG motion photo whose XMP has MotionPhoto=1 and no directory,
    and whose SEF trailer names no MotionPhoto_Data block: after the JPEG's EOI,
    an `Image_UTC_Data` block, the MP4 itself, then `SEFH` whose one entry is that
    block (so the trailer's first block is before the video: the video runs from
    the `ftyp` after the JPEG to `SEFH`)."""
    name, value = b"Image_UTC_Data", b"1714557600000"
    block = struct.pack("<HHI", 0, 0x0A01, len(name)) + name + value
    data = block + video
    directory = b"SEFH" + struct.pack("<II", 107, 1) + struct.pack("<HHII", 0, 0x0A01, len(data), len(block))
    return with_segment(still, app1_xmp(samsung_xmp())) + data + directory + struct.pack("<I", len(directory)) + b"SEFT"


def main():
    for tool in ("ffmpeg", "heif-enc", "exiftool"):
        if not shutil.which(tool):
            sys.exit(f"missing tool: {tool} (bash scripts/setup.sh)")
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    work = tempfile.mkdtemp()
    try:
        still = read(still_jpeg(work, "still.jpg", "red"))
        video = clip(work, "clip.mp4", 1.5)
        playable = clip(work, "faststart.mp4", 2.0, faststart=True)

        # Google: XMP Container:Directory, the video last (its Length counted from the end).
        write("google-container.jpg", with_segment(still, app1_xmp(google_xmp(len(video)))) + video)
        # Google's older MicroVideo: the video's offset from the end of the file.
        write("microvideo.jpg", with_segment(still, app1_xmp(micro_video_xmp(len(video)))) + video)
        # Samsung: the SEF trailer's MotionPhoto_Data block, no XMP.
        write("samsung-trailer.jpg", still + samsung_trailer(video))
        # Samsung: MotionPhoto=1 XMP without a directory, no MotionPhoto_Data entry.
        write("samsung-no-directory.jpg", samsung_no_directory(still, video))
        # No metadata at all: an MP4 appended after the JPEG's EOI (the fallback scan).
        write("appended.jpg", still + video)
        # XMP says motion photo, but the video was removed (as editors leave it).
        write("video-removed.jpg", with_segment(still, app1_xmp(google_xmp(len(video)))))
        # Cut short inside the video: playable (moov first), and not (moov last, cut off).
        full = with_segment(still, app1_xmp(google_xmp(len(playable)))) + playable
        write("truncated-playable.jpg", full[: len(full) - len(playable) // 3])
        full = with_segment(still, app1_xmp(google_xmp(len(video)))) + video
        write("truncated-unplayable.jpg", full[: len(full) - 400])

        # HEIC with the video in a top-level mpvd box (Samsung and Android HEIC).
        png = os.path.join(work, "still.png")
        run(*FF, "-f", "lavfi", "-i", "testsrc2=size=320x240:duration=1", "-frames:v", "1", png)
        heic = os.path.join(work, "still.heic")
        run("heif-enc", "-q", "50", "-o", heic, png)
        write("motion.heic", read(heic) + box(b"mpvd", video))

        # A Live Photo pair with both identifiers and Apple's still-image-time
        # (1.6 s: the movie is red before 1.2 s and blue after).
        write("live/IMG_0001.JPG", read(apple_still(work, "IMG_0001.JPG", "blue", "2024:05:01 12:00:00", "+02:00", IDENTIFIER)))
        write("live/IMG_0001.MOV", read(movie(work, "IMG_0001.MOV", 2.4, "2024:05:01 12:00:00+02:00", IDENTIFIER, still_time=1.6,
                                              colours=("red", "blue", 1.2))))
        # Without identifiers: the same name (the _HEVC spelling), 2 s, captured 1 s apart.
        write("live/IMG_0002.JPG", read(plain_still(work, "IMG_0002.JPG", "green", "2024:05:01 12:10:00")))
        write("live/IMG_0002_HEVC.MOV", read(movie(work, "IMG_0002_HEVC.MOV", 2.0, "2024:05:01 12:10:01+02:00", codec="libx265")))
        # The same name only: a 6 s movie, and one taken an hour later. Neither pairs.
        write("live/IMG_0003.JPG", read(plain_still(work, "IMG_0003.JPG", "yellow", "2024:05:01 12:20:00")))
        write("live/IMG_0003.MOV", read(movie(work, "IMG_0003.MOV", 6.0, "2024:05:01 12:20:00+02:00")))
        write("live/IMG_0004.JPG", read(plain_still(work, "IMG_0004.JPG", "white", "2024:05:01 12:30:00")))
        write("live/IMG_0004.MOV", read(movie(work, "IMG_0004.MOV", 2.0, "2024:05:01 13:30:00+02:00")))
    finally:
        shutil.rmtree(work)
    for root, _, files in sorted(os.walk(OUT)):
        for name in sorted(files):
            path = os.path.join(root, name)
            print(f"{os.path.relpath(path, OUT):28} {os.path.getsize(path):8} bytes")


if __name__ == "__main__":
    main()
