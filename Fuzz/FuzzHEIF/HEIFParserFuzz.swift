// Fuzz target: the HEIF item parser (HEIFFile), the EXIF reader and the header
// size reader (HeaderDimensions) on arbitrary bytes (scripts/fuzz.sh). Everything a decoder asks of a parsed file is asked
// here too: item data, grids, transforms, displayed sizes, crops, EXIF.
import Foundation
import FuzzReplay
import MediaFormats

func check(_ data: Data) {
    let bytes = [UInt8](data)
    _ = EXIF.jpeg(bytes)
    _ = EXIF.jpegSize(bytes[...])
    _ = EXIF.orientation(tiff: bytes)
    for format in [MediaFormat.png, .gif, .jpeg, .webp, .bmp, .heic, .mp4] {
        if let size = HeaderDimensions.size(of: bytes, format: format) {
            precondition(size.width > 0 && size.height > 0)
        }
    }
    guard let file = try? HEIFFile.parse(bytes) else { return }
    _ = file.isSequence
    for item in file.items.values.sorted(by: { $0.id < $1.id }) {
        _ = try? file.data(of: item, in: bytes, limit: 1 << 20)
        _ = file.properties(of: item)
        _ = file.hevcConfiguration(of: item)
        _ = file.colour(of: item)
        _ = file.exifOrientation(of: item, in: bytes)
        _ = file.references(from: item.id, type: "dimg")
        _ = file.items(referring: item.id, type: "thmb")
        if let size = file.displayedSize(of: item) {
            precondition(size.width > 0 && size.height > 0, "an empty displayed size")
        }
        for transform in file.transforms(of: item) {
            if case .crop(let aperture) = transform, let extents = file.spatialExtents(of: item),
                let crop = aperture.crop(width: extents.width, height: extents.height)
            {
                precondition(
                    crop.left <= crop.right && crop.top <= crop.bottom && crop.right < extents.width
                        && crop.bottom < extents.height)
            }
        }
        if item.type == "grid", let grid = try? file.grid(item, in: bytes) {
            precondition(grid.tiles.count == grid.rows * grid.columns)
        }
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
