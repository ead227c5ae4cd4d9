import CShims
import CVips
import MediaFormats

/// An Ultra HDR JPEG's gain map carried into its thumbnail and JPEG previews
/// (issue 54): the source's map (the image its MPF index lists, with its
/// `hdrgm` XMP: ``SpatialMetadata/ultraHDRGainMap(_:)``), decoded once in the
/// same request (shrink-on-load to the largest picture's size), turned by the
/// primary's EXIF orientation as the base was, scaled to each picture by the
/// source's own map-to-picture scale (a phone's map is a quarter of its photo
/// on each side, and so is the thumbnail's: a sixteenth of the pixels), and
/// encoded as a JPEG of its own (grey, or three channels as the source's), at
/// ``quality``. The parent checks each and writes the Ultra HDR
/// container itself (MediaFormats' `UltraHDR`). WebP previews get none.
enum GainMapThumbnail {
    /// The gain maps' JPEG quality (phones use 85–95 for theirs).
    static let quality = 85

    /// The most times a source's map may exceed its photo on a side (issue 62:
    /// a larger map is resampled to the thumbnail's grid; shrink-on-load decodes
    /// it at up to an eighth of its side, so it costs no more than the photo).
    static let largestMapScale = 4

    /// `thumbnail` with a gain map on it and on each JPEG preview, from the
    /// Ultra HDR JPEG in `source`; unchanged when it has none.
    /// A map larger than the photo's pixel limit, or than ``largestMapScale``
    /// times the photo on a side, is refused before any of it is decoded; one
    /// larger than the photo within that is made each picture's own size.
    static func attach(to thumbnail: Thumbnail, source: any RandomAccessBytes, spec: ThumbnailSpec, pixelLimit: Int)
        throws(VipsError) -> Thumbnail
    {
        guard let found = SpatialMetadata.ultraHDRGainMap(source), let bytes = source.read(found.range),
            let map = JPEGFrameHeader(bytes[...]), let head = source.read(0..<min(source.count, 1 << 20)),
            let base = JPEGFrameHeader(head[...]),
            map.width > 0, map.height > 0, base.width > 0, base.height > 0
        else { return thumbnail }
        guard map.width.multipliedReportingOverflow(by: map.height).partialValue <= pixelLimit,
            map.width <= largestMapScale * base.width,
            map.height <= largestMapScale * base.height
        else {
            throw VipsError(
                "gain map", message: "a \(map.width)×\(map.height) gain map for a \(base.width)×\(base.height) photo")
        }
        // The map keeps its scale to the picture (phones store it at a quarter of the base's size on each side);
        // Apple's (half the photo's side) is kept at a quarter at most, as a HEIC's is.
        var ratio = Double(map.width) / Double(base.width)
        if found.apple { ratio = min(HEIFGainMapThumbnail.largestScale, ratio) }
        let sizes = mapSizes(for: thumbnail, ratio: ratio)
        let (rotation, mirrored) = TIFFStep.Layout.orientation(found.orientation)  // EXIF's orientation is TIFF's tag
        let turned = rotation == 90 || rotation == 270
        // Each size as stored (before turning), and the largest, which the map is decoded at.
        let stored = sizes.map { turned ? (width: $0.height, height: $0.width) : $0 }
        guard let largest = stored.max(by: { $0.width * $0.height < $1.width * $1.height }) else { return thumbnail }
        try Vips.start()
        let maps = try Vips.withExactErrors { () throws(VipsError) -> [GainMapPicture] in
            var decoded = try decode(
                bytes, width: largest.width, height: largest.height, failOn: spec.damageTolerance.vipsFailOn)
            // Apple's map values re-encoded for the metadata (the HEIC's table), and a three-channel map's per channel,
            // before any resampling, as a HEIC's are.
            if let tables = found.values { decoded = try decoded.mapped(through: tables) }
            return try stored.map { (size) throws(VipsError) -> GainMapPicture in
                var map = try decoded.scaled(toWidth: size.width, height: size.height).rotated(clockwise: rotation)
                if mirrored {
                    map = try VipsImageHandle.make("vips_flip") { shim_vips_flip_horizontal(map.pointer, $0) }
                }
                map = try map.inMemory()
                return GainMapPicture(
                    jpeg: try map.jpegData(quality: quality), width: map.width, height: map.height,
                    metadata: found.metadata)
            }
        }
        return carry(maps, on: thumbnail)
    }

    /// The sizes of the maps of `thumbnail` and of its JPEG previews (in that
    /// order), each picture's scaled by the source's map-to-picture `ratio`
    /// (at most 1), at least 1 pixel.
    static func mapSizes(for thumbnail: Thumbnail, ratio: Double) -> [(width: Int, height: Int)] {
        let ratio = min(1, ratio)
        func scaled(_ side: Int) -> Int { max(1, Int((Double(side) * ratio).rounded())) }
        var sizes = [(width: scaled(thumbnail.width), height: scaled(thumbnail.height))]
        for preview in thumbnail.previews ?? [] where preview.format == .jpeg {
            sizes.append((scaled(preview.width), scaled(preview.height)))
        }
        return sizes
    }

    /// `thumbnail` with `maps` put on it and its JPEG previews, in ``mapSizes(for:ratio:)``'s order.
    static func carry(_ maps: [GainMapPicture], on thumbnail: Thumbnail) -> Thumbnail {
        var carried = thumbnail
        carried.gainMap = maps.first
        var next = 1
        if var previews = carried.previews {
            for index in previews.indices where previews[index].format == .jpeg && next < maps.count {
                previews[index].gainMap = maps[next]
                next += 1
            }
            carried.previews = previews
        }
        return carried
    }

    /// The gain map JPEG `bytes` decoded to exactly `width`×`height`, the largest
    /// picture's map (shrink-on-load, then each axis scaled on its own; no
    /// rotation), held in memory while `bytes` live. Exactly, not to fit: an
    /// iPhone's 2856×2142 map shrinks on load to 357×267 (the last partial
    /// block row dropped), which fits 90×68 as 90×67, and the resize of that
    /// one row more moved the whole map half a pixel right and down from its
    /// picture (issue 62's real iPhone JPEG). The sizes asked are the map's own
    /// scale of each picture, so no larger than the map but by rounding.
    static func decode(_ bytes: [UInt8], width: Int, height: Int, failOn: VipsFailOn) throws(VipsError)
        -> VipsImageHandle
    {
        let result: Result<VipsImageHandle, VipsError> = bytes.withUnsafeBytes { buffer in
            Result { () throws(VipsError) in
                let image = try VipsImageHandle.make("vips_thumbnail_buffer") {
                    shim_vips_thumbnail_buffer_exact(
                        buffer.baseAddress, buffer.count, $0, Int32(width), Int32(height), failOn)
                }
                return try image.inMemory()
            }
        }
        return try result.get()
    }

}

extension VipsImageHandle {
    /// This 8-bit grey or three-band gain map with each sample through `tables`
    /// (256 entries each): one for every band, or one per band (red, green,
    /// blue; a grey map is made three bands), in memory (``HEIFGainMapThumbnail/values(of:bands:tables:)``).
    func mapped(through tables: [[UInt8]]) throws(VipsError) -> VipsImageHandle {
        let width = self.width
        let height = self.height
        let bands = self.bands
        guard tables.count == 1 || tables.count == 3, tables.allSatisfy({ $0.count == 256 }), bands == 1 || bands == 3,
            vips_image_get_format(pointer) == VIPS_FORMAT_UCHAR, width > 0, height > 0
        else {
            throw VipsError("gain map", message: "a \(bands)-band gain map")
        }
        var size = 0
        guard let memory = vips_image_write_to_memory(pointer, &size) else {
            throw VipsError("vips_image_write_to_memory")
        }
        defer { g_free(memory) }
        let count = width * height * bands
        guard size == count else {
            throw VipsError(
                "vips_image_write_to_memory", message: "\(size) bytes for a \(width)×\(height)×\(bands) map")
        }
        let samples = Array(UnsafeRawBufferPointer(start: memory, count: count))
        return try Self.fromMap(
            HEIFGainMapThumbnail.values(of: samples, bands: bands, tables: tables), width: width, height: height,
            bands: max(bands, tables.count))
    }

    /// This picture scaled to exactly `width`×`height` (each axis by its own factor).
    func scaled(toWidth width: Int, height: Int) throws(VipsError) -> VipsImageHandle {
        guard width != self.width || height != self.height else { return self }
        let (h, v) = (Double(width) / Double(self.width), Double(height) / Double(self.height))
        return try Self.make("vips_resize") { shim_vips_resize_xy(pointer, $0, h, v) }
    }
}
