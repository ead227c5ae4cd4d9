import Foundation
// Fuzz target: the Google Takeout JSON reader (TakeoutJSON: its own JSON
// parser, the sidecar's facts, and where it records a place), which a
// decoder helper runs on JSONs that came with a photo (scripts/fuzz.sh
// takeout). A title or description never longer than kept, places finite;
// the places' overwrites inside the file, and once they are made (spaces),
// the JSON still reads, with no place left.
import FuzzChecks
import FuzzReplay
import MediaFormats

func check(_ data: Data) {
    let bytes = [UInt8](data)
    let read = try? TakeoutJSON.read(bytes)
    if let read {
        precondition(read.title.unicodeScalars.count <= TakeoutJSON.maximumTitle)
        precondition((read.description?.unicodeScalars.count ?? 0) <= TakeoutJSON.maximumDescription)
        for place in [read.geoData, read.geoDataExif].compactMap({ $0 }) {
            precondition(place.latitude.isFinite && place.longitude.isFinite && (place.altitude?.isFinite ?? true))
        }
    }
    let location = TakeoutJSON.location(bytes)
    LocationChecks.check(location, fileSize: bytes.count)
    guard !location.found.isEmpty else { return }
    let blanked = LocationChecks.blanked(bytes, location)
    precondition(TakeoutJSON.location(blanked).found.isEmpty, "a place is left once blanked")
    if read != nil {
        let again = try? TakeoutJSON.read(blanked)
        precondition(
            again != nil && again?.geoData == nil && again?.geoDataExif == nil,
            "blanked, the JSON no longer reads or still has a place")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    check(Data(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if !FUZZING
    @main struct Replay { static func main() { FuzzReplay.run(check) } }
#endif
