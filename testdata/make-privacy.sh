#!/usr/bin/env bash
# Makes the generated fixtures of testdata/privacy/ (issue 24: location
# privacy and compatible copies): location metadata written by exiftool,
# ffmpeg and privacy-edit.py into copies of testdata/media's photo and clip,
# as phones and photo tools write it. The real files there (see
# testdata/README.md) are committed as published and never touched here.
#
#   bash testdata/make-privacy.sh
#
# Needs vips 8.14, exiftool 12.57, ffmpeg 5.1 and python3 (standard library).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/privacy
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
photo=$here/media/photo.jpg          # 640x480, markers, EXIF date 2024:05:17 10:30:00 and GPS 48.8584 N 2.2945 E
portrait=$here/media/portrait-exif6.jpg   # EXIF orientation 6, no GPS
clip=$here/media/clip-h264.mp4       # 2 s, moov after mdat
et() { exiftool -q -m -overwrite_original "$@"; }
xmp=(-XMP-exif:GPSLatitude="48.8584 N" -XMP-exif:GPSLongitude="2.2945 E" -XMP-exif:GPSAltitude=35)

# A JPEG with GPS in EXIF and in XMP.
cp "$photo" "$out/exif-xmp-gps.jpg"
et "${xmp[@]}" "$out/exif-xmp-gps.jpg"
# A portrait JPEG (EXIF orientation 6) with GPS and a capture date.
cp "$portrait" "$out/exif6-gps.jpg"
et -DateTimeOriginal="2024:06:01 09:15:00" -GPSLatitude=48.8584 -GPSLatitudeRef=N -GPSLongitude=2.2945 -GPSLongitudeRef=E "$out/exif6-gps.jpg"
# PNG (eXIf chunk, and XMP in iTXt), WebP (EXIF and XMP chunks), AVIF (Exif and
# XMP items), JPEG XL (Exif and xml boxes): the photo's pixels, its EXIF (date,
# camera, GPS) and the XMP GPS, as exiftool writes them.
for ext in png webp avif jxl; do
    vips copy "$photo" "$work/plain.$ext[strip]"
    cp "$work/plain.$ext" "$out/gps.$ext"
    et -tagsFromFile "$photo" -EXIF:all "${xmp[@]}" "$out/gps.$ext"
done
# PNG whose XMP is compressed (zTXt): it cannot be edited in place.
python3 "$here/privacy-edit.py" ztxt-xmp "$work/plain.png" "$out/ztxt-xmp-gps.png"
# Videos: an Android MP4 (©xyz in udta), a QuickTime movie (©xyz, as ffmpeg
# writes it), an MP4 with 3GPP loci (as ffmpeg writes location into MP4).
ffmpeg -v error -y -i "$clip" -c copy -map_metadata -1 -fflags +bitexact "$work/plain.mp4"
python3 "$here/privacy-edit.py" android-xyz "$work/plain.mp4" "$out/android-xyz.mp4" "+48.8584+002.2945/"
ffmpeg -v error -y -i "$clip" -c copy -map_metadata -1 -fflags +bitexact -f mov -metadata location="+48.8584+002.2945/" "$out/quicktime-xyz.mov"
ffmpeg -v error -y -i "$clip" -c copy -map_metadata -1 -fflags +bitexact -metadata location="+48.8584+002.2945/" "$out/loci.mp4"
# A QuickTime movie whose location is where an iPhone writes it: the
# com.apple.quicktime.location.ISO6709 key of moov/meta (mdta keys), beside
# the make, model and creation date (exiftool writes the keys; the moov moves
# before the mdat and the chunk offsets with it).
ffmpeg -v error -y -i "$clip" -c copy -map_metadata -1 -fflags +bitexact -f mov "$work/plain.mov"
cp "$work/plain.mov" "$out/keys-iso6709.mov"
et -Keys:GPSCoordinates="48.8584 N, 2.2945 E, 35 m" -Keys:Make=Apple -Keys:Model="iPhone 12" -Keys:CreationDate="2024:05:17 10:30:00+02:00" "$out/keys-iso6709.mov"
# Place names and Photoshop's image resources beyond a JPEG (issue 58): a
# QuickTime movie with the location keys that name the place (name, body,
# note, role) beside its ISO 6709 position; a PSD whose image resources
# exiftool wrote (EXIF GPS 0x0422, IPTC IIM place names 0x0404, XMP GPS and
# photoshop:City 0x0424); a TIFF with GPS and IPTC IIM place names (tag
# 33723); a TIFF whose Photoshop tag (34377) holds that PSD's resources.
cp "$work/plain.mov" "$out/keys-place.mov"
et -Keys:GPSCoordinates="48.8584 N, 2.2945 E, 35 m" -Keys:LocationName="Tour Eiffel" -Keys:LocationBody=Earth -Keys:LocationNote="by the river" -Keys:LocationRole#=0 -Keys:Make=Apple "$out/keys-place.mov"
names=(-IPTC:City=Paris -IPTC:Sub-location="Champ de Mars" -IPTC:Province-State=Ile-de-France -IPTC:Country-PrimaryLocationName=France -IPTC:Country-PrimaryLocationCode=FRA -IPTC:Keywords=tower)
gps=(-GPSLatitude=48.8584 -GPSLatitudeRef=N -GPSLongitude=2.2945 -GPSLongitudeRef=E)
python3 "$here/privacy-edit.py" psd "$out/photoshop-gps.psd"
et "${gps[@]}" "${names[@]}" "${xmp[@]}" -XMP-photoshop:City=Paris "$out/photoshop-gps.psd"
cp "$here/media/image.tiff" "$out/iptc-gps.tiff"
et "${gps[@]}" "${names[@]}" "$out/iptc-gps.tiff"
python3 "$here/privacy-edit.py" tiff-photoshop "$here/media/image.tiff" "$out/photoshop-gps.psd" "$out/photoshop-tag.tiff"
