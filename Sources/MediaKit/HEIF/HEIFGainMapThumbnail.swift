import CShims
import CVips
import MediaFormats

/// A HEIC's or HEIF's gain map carried into its thumbnail and JPEG previews
/// (issue 54): Apple's (iPhone 12 and later: a hidden auxiliary image and a
/// headroom) and ISO 21496-1's (a `tmap` item whose base is the SDR picture:
/// iPhones since iOS 18 write both, and the `tmap`'s own numbers are used; AVIFs
/// write it with an AV1 map), found by MediaFormats' `HEIFGainMap`. The map image
/// (HEVC or AV1) is decoded in the same request, by libavcodec at reduced size as
/// a HEIC photo is (``CodedItemDecoder``, its coded values as they are), its values re-encoded for Apple's maps, turned as the
/// photo (the map's own `irot`/`imir`/`clap` when it has any, else the
/// primary's, else the primary's EXIF orientation when it has none), then
/// scaled (at most a quarter of each picture's side: ``largestScale``) and
/// encoded as ``GainMapThumbnail`` does for Ultra HDR JPEG sources: the parent
/// checks each and writes the Ultra HDR JPEG.
enum HEIFGainMapThumbnail {
    /// The largest map-to-picture scale carried: a quarter of the picture's side,
    /// an Ultra HDR phone JPEG's. Apple's maps are half the photo's side; at the
    /// thumbnail's half they added 29 % to a real iPhone 16 photo's thumbnail, at
    /// a quarter 14 %, for 0.5 mean ΔE ITP more (BENCHMARKS.md, "HDR kept in thumbnails: iPhone HEIC").
    static let largestScale = 0.25

    /// libavcodec threads for the map's decode.
    static let mapDecoderThreads = 1

    /// `thumbnail` (of the primary image of the file `request` names, open at
    /// `descriptor`) with a gain map on it and on each JPEG preview; unchanged
    /// when the file has no gain map this reads, or its base is HDR.
    /// A map larger than the pixel limit or than its photo is refused before
    /// any of it is decoded.
    static func attach(to thumbnail: Thumbnail, request: DecodeRequest, descriptor: Int32, spec: ThumbnailSpec)
        throws(MediaError) -> Thumbnail
    {
        let bytes = try HEIFDecoding(request: request, descriptor: descriptor).readFile()
        guard let file = try? HEIFFile.parse(bytes), let primary = file.primaryItem else { return thumbnail }
        guard let found = HEIFGainMap.find(in: file, bytes: bytes) else {
            // Never silent: a map that is there but not carried is named.
            if let why = HEIFGainMap.uncarried(in: file, bytes: bytes) { throw MediaError(.unsupported, why) }
            return thumbnail
        }
        guard let item = file.items[found.item], let base = file.spatialExtents(of: primary),
            let map = file.spatialExtents(of: item),
            base.width > 0, base.height > 0, map.width > 0, map.height > 0
        else { return thumbnail }
        // An HDR primary is tone-mapped for its thumbnail: a map meant for an SDR base does not apply to that.
        if case .nclx(_, let transfer, _, _) = file.colour(of: primary), transfer == 16 || transfer == 18 {
            return thumbnail
        }
        guard map.width.multipliedReportingOverflow(by: map.height).partialValue <= request.pixelLimit,
            map.width <= base.width, map.height <= base.height
        else {
            throw MediaError(
                .tooManyPixels, "a \(map.width)×\(map.height) gain map for a \(base.width)×\(base.height) photo")
        }
        let sizes = GainMapThumbnail.mapSizes(
            for: thumbnail, ratio: min(largestScale, Double(map.width) / Double(base.width)))
        guard let needed = sizes.map({ max($0.width, $0.height) }).max() else { return thumbnail }
        let layout: CodedItemDecoder.Layout
        do throws(CodedItemDecoder.NotTaken) {
            layout = try CodedItemDecoder.layout(
                of: item, in: file, bytes: bytes, types: CodedItemDecoder.gainMapTypes, auxiliary: true)
        } catch {
            throw MediaError(.unsupported, "a gain map this decoder does not read (\(error))")
        }
        // A map's values are read as they are coded: 8 bits (ISO 21496-1 allows more; no phone writes it).
        guard layout.bitDepth == 8 else {
            throw MediaError(.unsupported, "a \(layout.bitDepth)-bit gain map (only 8-bit maps are carried)")
        }
        let single = layout.tiles.count == 1
        let reduction = HEIFThumbnail.reduction(
            displayedLongSide: max(layout.outputWidth, layout.outputHeight), size: needed,
            tileWidth: single ? 1 << 20 : layout.tileWidth,
            tileHeight: single ? 1 << 20 : layout.tileHeight)
        // One decoder thread: frame threads would give each thread its own copy of
        // the decoder's tables and pictures, for more CPU time in all (BENCHMARKS.md).
        let decoder = CodedItemDecoder(
            file: file, bytes: bytes, threads: mapDecoderThreads, pixelLimit: request.pixelLimit,
            deadline: Deadline(seconds: spec.timeLimit))
        // A monochrome map (Apple's, most AVIFs') is read as its one band, without an RGB conversion.
        let grey = layout.coding.chromaFormat == 0
        let picture = try decoder.decode(layout, reduction: reduction, raw: true, grey: grey)
        let pixels = values(of: picture.pixels, bands: grey ? 1 : 3, tables: found.values)
        let bands = grey && found.values?.count != 3 ? 1 : 3
        // The map's own transforms when it has any (as Apple writes it: the primary's), else the primary's.
        let own = file.transforms(of: item)
        let transforms = own.isEmpty ? file.transforms(of: primary) : own
        let source: (width: Int, height: Int) = own.isEmpty ? base : (layout.outputWidth, layout.outputHeight)
        let exif =
            file.transforms(of: primary).isEmpty && own.isEmpty
            ? file.exifOrientation(of: primary, in: bytes).flatMap { $0 == 1 ? nil : $0 } : nil
        let maps = try mapPictures(
            pixels, width: picture.width, height: picture.height, bands: bands, source: source,
            transforms: transforms, exifOrientation: exif, sizes: sizes, metadata: found.metadata)
        return GainMapThumbnail.carry(maps, on: thumbnail)
    }

    /// The map's pixels, turned as the photo is shown (`transforms`, else its
    /// EXIF orientation) and scaled to each of `sizes`, as JPEGs.
    private static func mapPictures(
        _ pixels: [UInt8], width: Int, height: Int, bands: Int, source: (width: Int, height: Int),
        transforms: [HEIFTransform], exifOrientation exif: Int?, sizes: [(width: Int, height: Int)],
        metadata: GainMapMetadata
    ) throws(MediaError) -> [GainMapPicture] {
        do throws(VipsError) {
            try Vips.start()
            return try Vips.withExactErrors { () throws(VipsError) -> [GainMapPicture] in
                let decoded = try VipsImageHandle.fromMap(pixels, width: width, height: height, bands: bands)
                let shown = try HEIFThumbnail.oriented(
                    decoded, sourceWidth: source.width, sourceHeight: source.height, transforms: transforms,
                    exifOrientation: exif
                ).inMemory()
                return try sizes.map { (size) throws(VipsError) -> GainMapPicture in
                    let scaled = try shown.scaled(toWidth: size.width, height: size.height).inMemory()
                    return GainMapPicture(
                        jpeg: try scaled.jpegData(quality: GainMapThumbnail.quality), width: scaled.width,
                        height: scaled.height, metadata: metadata)
                }
            }
        } catch {
            throw MediaError(.damaged, "\(error)")
        }
    }

    /// The map's decoded samples (`bands`: one or three), each through `tables`
    /// when there are any: one for every band, or one per band (red, green,
    /// blue; a grey map is made three bands).
    static func values(of samples: [UInt8], bands: Int, tables: [[UInt8]]?) -> [UInt8] {
        guard let tables, tables.count == 1 || tables.count == 3, tables.allSatisfy({ $0.count == 256 }),
            bands == 1 || bands == 3
        else {
            return samples
        }
        let out = max(bands, tables.count)
        let pixels = samples.count / bands
        var mapped = [UInt8](repeating: 0, count: pixels * out)
        for pixel in 0..<pixels {
            for band in 0..<out {
                mapped[pixel * out + band] =
                    tables[tables.count == 1 ? 0 : band][Int(samples[pixel * bands + (bands == 1 ? 0 : band)])]
            }
        }
        return mapped
    }
}

extension VipsImageHandle {
    /// Wraps packed 8-bit gain map samples: one band (grey) or three (`bands`).
    static func fromMap(_ pixels: [UInt8], width: Int, height: Int, bands: Int) throws(VipsError) -> VipsImageHandle {
        guard pixels.count == width * height * bands,
            let image = pixels.withUnsafeBytes({
                vips_image_new_from_memory_copy(
                    $0.baseAddress, pixels.count, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
            })
        else { throw VipsError("vips_image_new_from_memory_copy") }
        // The header field itself: vips_image_set_int cannot change a built-in field.
        image.pointee.Type = bands == 1 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
        return VipsImageHandle(image)
    }
}
