#!/usr/bin/env python3
"""Random positions on land, away from zone borders, with the zone timezonefinder
finds there and its offsets (Python's zoneinfo, which reads the system's tzdata
like share-ingest) at two instants: 2024-01-15 12:00 UTC and 2024-07-15 12:00 UTC.
"Land": timezonefinder's timezone_at_land is not None. "Away from borders": the
zone is the same at the point and at the 8 points 0.05 degree (about 5 km) from
it. Points are uniform on the sphere, from a fixed seed.

    python3 scripts/time-zone-points.py COUNT SEED > points.tsv

Prints "latitude longitude zone winter-offset summer-offset" lines (offsets in
seconds east of UTC). Needs the timezonefinder and timezonefinder-data pip packages
(the same data the grid is built from: scripts/build-time-zone-grid.py).
"""
import math
import random
import sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from timezonefinder import TimezoneFinder

WINTER = datetime(2024, 1, 15, 12, tzinfo=timezone.utc)
SUMMER = datetime(2024, 7, 15, 12, tzinfo=timezone.utc)
STEP = 0.05


def main():
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    tf = TimezoneFinder()
    found = 0
    while found < count:
        lng = rng.uniform(-180, 180)
        lat = math.degrees(math.asin(rng.uniform(-1, 1)))
        zone = tf.timezone_at_land(lng=lng, lat=lat)
        if zone is None or abs(lat) > 89.9 or abs(lng) > 179.9:
            continue
        if any(tf.timezone_at(lng=lng + dx * STEP, lat=lat + dy * STEP) != zone for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy):
            continue
        info = ZoneInfo(zone)
        winter = int(WINTER.astimezone(info).utcoffset().total_seconds())
        summer = int(SUMMER.astimezone(info).utcoffset().total_seconds())
        print("%.6f\t%.6f\t%s\t%d\t%d" % (lat, lng, zone, winter, summer))
        found += 1


if __name__ == "__main__":
    main()
