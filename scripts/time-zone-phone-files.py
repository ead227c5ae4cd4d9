#!/usr/bin/env python3
"""The positions of testdata's photos and videos (EXIF GPS, QuickTime's
GPSCoordinates, as exiftool reads them), with the zone timezonefinder finds
there and its offsets in January and July 2024 (zoneinfo): the same lines as
scripts/time-zone-points.py, plus the file's name as a sixth column, for
PlaceTimeZoneTests' agreement check (SHARE_TZ_POINTS=FILE).

    python3 scripts/time-zone-phone-files.py testdata > phone-files.tsv
"""
import json
import subprocess
import sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from timezonefinder import TimezoneFinder

WINTER = datetime(2024, 1, 15, 12, tzinfo=timezone.utc)
SUMMER = datetime(2024, 7, 15, 12, tzinfo=timezone.utc)


def main():
    root = sys.argv[1]
    out = subprocess.run(["exiftool", "-r", "-n", "-j", "-q", "-GPSLatitude", "-GPSLongitude", "-GPSCoordinates", root], capture_output=True, text=True).stdout
    tf = TimezoneFinder()
    for item in json.loads(out or "[]"):
        lat, lng = item.get("GPSLatitude"), item.get("GPSLongitude")
        if (lat is None or lng is None) and isinstance(item.get("GPSCoordinates"), str):
            parts = item["GPSCoordinates"].split()
            if len(parts) >= 2:
                lat, lng = float(parts[0]), float(parts[1])
        if not isinstance(lat, (int, float)) or not isinstance(lng, (int, float)) or (lat == 0 and lng == 0):
            continue
        zone = tf.timezone_at(lng=lng, lat=lat)
        if zone is None:
            continue
        info = ZoneInfo(zone)
        print("%.6f\t%.6f\t%s\t%d\t%d\t%s" % (lat, lng, zone, WINTER.astimezone(info).utcoffset().total_seconds(),
                                              SUMMER.astimezone(info).utcoffset().total_seconds(), item["SourceFile"]))


if __name__ == "__main__":
    main()
