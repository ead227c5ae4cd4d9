#!/usr/bin/env python3
"""Writes testdata/exports/takeout (a Google Takeout drop), exports/apple (an
Apple Photos export with edits and .AAE files) and exports/camera-card (RAW+JPEG
pairs and a burst), made faithfully (see testdata/README.md, "exports/").
Run by hand: python3 testdata/make-exports.py

Photos are small JPEGs made by vips (a colour each, 64x48), so every file has its
own content; the JSONs are written as Takeout writes them (2-space indentation,
the key order of a 2024 export, timestamps as strings, "formatted" in English,
geoData all zeros when Google knows no place)."""
import json, os, shutil, subprocess, datetime

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exports", "takeout")
shutil.rmtree(root, ignore_errors=True)
photos = os.path.join(root, "Takeout", "Google Photos")

def jpeg(path, colour):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    r, g, b = colour
    subprocess.run(["vips", "black", "/tmp/make-exports-black.v", "64", "48", "--bands", "3"], check=True)
    subprocess.run(["vips", "linear", "/tmp/make-exports-black.v", path + "[Q=80,strip]", "1 1 1", f"{r} {g} {b}", "--uchar"], check=True)

def formatted(stamp):
    t = datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc)
    return t.strftime("%b %-d, %Y, %-I:%M:%S %p UTC")

def sidecar(path, title, taken, place=None, description=""):
    lat, lon, alt = place or (0.0, 0.0, 0.0)
    geo = {"latitude": lat, "longitude": lon, "altitude": alt, "latitudeSpan": 0.0, "longitudeSpan": 0.0}
    body = {
        "title": title,
        "description": description,
        "imageViews": "12",
        "creationTime": {"timestamp": str(taken + 86400), "formatted": formatted(taken + 86400)},
        "photoTakenTime": {"timestamp": str(taken), "formatted": formatted(taken)},
        "geoData": geo,
        "geoDataExif": geo,
        "url": "https://photos.google.com/photo/AF1QipN" + title.encode().hex()[:24],
        "googlePhotosOrigin": {"mobileUpload": {"deviceType": "ANDROID_PHONE"}},
    }
    with open(path, "w") as f:
        f.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")

year = os.path.join(photos, "Photos from 2019")
long_name = "Screenshot_20190701-165320_Photos_and_more_long.jpg"  # 51 characters
cases = [
    # (photo, its JSON, colour, taken, place, description)
    ("IMG_20190701_165320.jpg", "IMG_20190701_165320.jpg.json", (200, 40, 40), 1562000000, (48.8584, 2.2945, 35.0), ""),
    ("IMG_20190702_101500.jpg", "IMG_20190702_101500.jpg.supplemental-metadata.json", (40, 200, 40), 1562062500, None, "Breakfast on the terrace"),
    # Takeout cuts a JSON's name to its length limit: the suffix goes first.
    (long_name, long_name + ".supplemental-metad.json", (40, 40, 200), 1562100000, None, ""),
    ("IMG_20190703_120000(1).jpg", "IMG_20190703_120000.jpg(1).json", (200, 200, 40), 1562155200, None, ""),
    ("IMG_20190704_090000.jpg", "IMG_20190704_090000.jpg.suppl.json", (40, 200, 200), 1562230800, (45.764, 4.8357, 170.0), ""),
]
for photo, name, colour, taken, place, description in cases:
    jpeg(os.path.join(year, photo), colour)
    sidecar(os.path.join(year, name), photo.replace("(1)", ""), taken, place, description)
# An edited copy shares its original's JSON.
jpeg(os.path.join(year, "IMG_20190705_183000.jpg"), (120, 60, 200))
jpeg(os.path.join(year, "IMG_20190705_183000-edited.jpg"), (140, 80, 220))
sidecar(os.path.join(year, "IMG_20190705_183000.jpg.json"), "IMG_20190705_183000.jpg", 1562351400)
# A photo without a JSON, and a JSON without its photo.
jpeg(os.path.join(year, "IMG_20190706_070000.jpg"), (90, 90, 90))
sidecar(os.path.join(year, "IMG_20190707_080000.jpg.json"), "IMG_20190707_080000.jpg", 1562486400)
# An album: Takeout copies the album's photos into its folder, each with its JSON, and
# writes the album's own metadata.json (no photo's keys).
album = os.path.join(photos, "Holiday in Paris")
jpeg(os.path.join(album, "IMG_20190701_165320.jpg"), (200, 40, 40))
sidecar(os.path.join(album, "IMG_20190701_165320.jpg.json"), "IMG_20190701_165320.jpg", 1562000000, (48.8584, 2.2945, 35.0))
os.makedirs(album, exist_ok=True)
with open(os.path.join(album, "metadata.json"), "w") as f:
    f.write(json.dumps({"title": "Holiday in Paris", "description": "", "access": "protected",
                        "date": {"timestamp": "1562000000", "formatted": formatted(1562000000)}}, indent=2) + "\n")
# Takeout's archive-wide files.
with open(os.path.join(root, "Takeout", "archive_browser.html"), "w") as f:
    f.write("<!DOCTYPE html><html><head><title>Google Takeout</title></head><body>Archive for Google Photos</body></html>\n")

# An Apple Photos export ("Export Unmodified Original" with "Include edits"): each
# edited photo comes as its original, its render IMG_E<n> (the original's capture
# time kept) and the original's .AAE adjustments (a property list as Photos writes it).
here = os.path.dirname(os.path.abspath(__file__))
apple = os.path.join(here, "exports", "apple")
shutil.rmtree(apple, ignore_errors=True)
AAE = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>adjustmentBaseVersion</key>
	<integer>0</integer>
	<key>adjustmentData</key>
	<data>
	bZBdT8IwFIb/yvLcLrYrBjXZCEHFRCFGvDDeOTmwxraH9HTM/Xu7ERMTvGz6nPd9z9P5
	</data>
	<key>adjustmentEditorBundleID</key>
	<string>com.apple.mobileslideshow</string>
	<key>adjustmentFormatIdentifier</key>
	<string>com.apple.photo</string>
	<key>adjustmentFormatVersion</key>
	<string>1.5</string>
</dict>
</plist>
"""

def dated(path, when):
    subprocess.run(["exiftool", "-q", "-overwrite_original", f"-DateTimeOriginal={when}", f"-CreateDate={when}", "-Make=Apple", path], check=True)

for n, colour, when, edited in [(1, (180, 90, 40), "2024:05:01 12:10:02", True), (2, (40, 90, 180), "2024:05:01 12:11:30", True),
                                (3, (90, 180, 40), "2024:05:01 12:15:00", False)]:
    original = os.path.join(apple, f"IMG_000{n}.JPG")
    jpeg(original, colour)
    dated(original, when)
    if edited:
        render = os.path.join(apple, f"IMG_E000{n}.JPG")
        jpeg(render, tuple(min(255, c + 50) for c in colour))
        dated(render, when)
        with open(os.path.join(apple, f"IMG_000{n}.AAE"), "w") as f:
            f.write(AAE)

# A camera card: each shot as a RAW and its JPEG (the RAW is testdata's Canon 350D CR2,
# see "modern/raw"; its JPEG carries the RAW's capture time), and a Samsung burst.
card = os.path.join(here, "exports", "camera-card")
shutil.rmtree(card, ignore_errors=True)
canon = os.path.join(card, "DCIM", "100CANON")
os.makedirs(canon)
raw = os.path.join(here, "modern", "raw", "canon-350d-exif3.cr2")
for n, colour in [(1, (150, 150, 60)), (2, (60, 150, 150))]:
    shutil.copyfile(raw, os.path.join(canon, f"IMG_000{n}.CR2"))
    jpeg(os.path.join(canon, f"IMG_000{n}.JPG"), colour)
    subprocess.run(["exiftool", "-q", "-overwrite_original", "-TagsFromFile", raw, "-DateTimeOriginal", "-CreateDate", "-Make", "-Model",
                    os.path.join(canon, f"IMG_000{n}.JPG")], check=True)
# A JPEG without its RAW.
jpeg(os.path.join(canon, "IMG_0003.JPG"), (200, 120, 120))
burst = os.path.join(card, "DCIM", "Camera")
for n, suffix in enumerate(["001_COVER", "002", "003", "004"]):
    path = os.path.join(burst, f"20190701_165320_BURST{suffix}.jpg")
    jpeg(path, (30 + 50 * n, 60, 90))
    dated(path, "2019:07:01 16:53:2" + str(n))
os.remove("/tmp/make-exports-black.v")
