#!/usr/bin/env python3
"""Random positions on land near a border where the UTC offset changes (issue 62), with the zone
timezonefinder finds there and its offsets (Python's zoneinfo, reading the system's tzdata like
share-ingest) at two instants: 2024-01-15 12:00 UTC and 2024-07-15 12:00 UTC.

"Land": timezonefinder's timezone_at_land is not None. "Near a border where the offset changes":
one of the 8 points 0.03 degree (about 3 km) from it is in a zone whose offset at one of the two
instants differs from the point's. Points are uniform on the sphere, from a fixed seed.

    python3 scripts/time-zone-border-points.py COUNT SEED > points.tsv

Prints "latitude longitude zone winter-offset summer-offset" lines (offsets in seconds east of
UTC), the format PlaceTimeZoneTests reads (testdata/timezones/border-points.tsv is
`scripts/time-zone-border-points.py 1000 62`; SHARE_TZ_POINTS=FILE checks any such file).
Needs the pip packages scripts/build-time-zone-grid.py names (the same data the grid is built from).
"""
import math
import random
import sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from timezonefinder import TimezoneFinder

WINTER = datetime(2024, 1, 15, 12, tzinfo=timezone.utc)
SUMMER = datetime(2024, 7, 15, 12, tzinfo=timezone.utc)
STEP = 0.03
OFFSETS = {}


def offsets(zone):
    if zone not in OFFSETS:
        info = ZoneInfo(zone)
        OFFSETS[zone] = (int(WINTER.astimezone(info).utcoffset().total_seconds()),
                         int(SUMMER.astimezone(info).utcoffset().total_seconds()))
    return OFFSETS[zone]


def main():
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    tf = TimezoneFinder()
    found = 0
    while found < count:
        lng = rng.uniform(-180, 180)
        lat = math.degrees(math.asin(rng.uniform(-1, 1)))
        if abs(lat) > 89.9 or abs(lng) > 179.9:
            continue
        zone = tf.timezone_at_land(lng=lng, lat=lat)
        if zone is None:
            continue
        here = offsets(zone)
        near = (tf.timezone_at(lng=lng + dx * STEP, lat=lat + dy * STEP) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy)
        if all(other is None or offsets(other) == here for other in near):
            continue
        print("%.6f\t%.6f\t%s\t%d\t%d" % (lat, lng, zone, here[0], here[1]), flush=True)
        found += 1


if __name__ == "__main__":
    main()
