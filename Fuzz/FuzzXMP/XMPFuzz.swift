import Foundation
// Fuzz target: the XMP location scanner (XMPLocation: exif:GPS* properties,
// as attributes and as elements, in any packet), on arbitrary bytes read as
// an XMP packet, and the same bytes in each container the location scanner
// finds XMP in by itself being the file (scripts/fuzz.sh xmp). Every property's
// ranges lie inside the bytes, its value inside its whole; blanked, the
// packet holds no GPS property any more.
import FuzzReplay
import MediaFormats

func check(_ data: Data) {
    let bytes = [UInt8](data)
    for placeNames in [false, true] { check(bytes, placeNames: placeNames) }
}

/// The same, finding the place's names too when `placeNames` (a city, IPTC Extension's LocationCreated whole, …).
func check(_ bytes: [UInt8], placeNames: Bool) {
    let properties = XMPLocation.gpsProperties(bytes, placeNames: placeNames)
    for property in properties {
        precondition(
            property.whole.lowerBound >= 0 && property.whole.upperBound <= bytes.count && !property.whole.isEmpty)
        precondition(
            property.value.lowerBound >= property.whole.lowerBound
                && property.value.upperBound <= property.whole.upperBound)
        precondition(!property.name.isEmpty)
    }
    guard !properties.isEmpty else { return }
    var blanked = bytes
    for property in properties { for index in property.whole { blanked[index] = 0x20 } }
    precondition(
        XMPLocation.gpsProperties(blanked, placeNames: placeNames).isEmpty, "a GPS property is left once blanked")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    check(Data(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if !FUZZING
    @main struct Replay { static func main() { FuzzReplay.run(check) } }
#endif
