import MediaFormats

/// The compatible copy of a photo (``CompatibleCopySpec``): the picture its
/// format's decoders make for a thumbnail, at its full size (a thumbnail
/// "box" larger than any picture: nothing is shrunk, and every path applies
/// what it applies to thumbnails: `irot`/`imir`/`clap` or EXIF orientation,
/// HDR and wide gamut tone-mapped to SDR sRGB, a RAW's largest preview turned
/// upright), encoded as JPEG, with a new EXIF block written from the source's
/// (``CaptureMetadata``: Orientation 1, the copy's size, no GPS unless the spec
/// keeps it) and, where the pixels are still in the source's colours, its ICC
/// profile.
struct CompatibleCopyMaker {
    let request: DecodeRequest
    let spec: CompatibleCopySpec
    let descriptor: Int32

    /// The formats a compatible copy is made of: HEIC/HEIF, AVIF, JPEG XL and camera RAW.
    static func makes(_ format: MediaFormat) -> Bool {
        ["heic", "heif", "avif", "jxl"].contains(format.id) || format.isCameraRAW
    }

    /// A thumbnail "size" no picture reaches: the decoders keep every pixel.
    static let unbounded = 1 << 20

    /// Decodes the file for its facts and its full-size picture, and makes the copy.
    func make(route: DecoderRoute) throws(MediaError) -> DecodedMedia {
        guard Self.makes(request.format) else {
            return DecodedMedia(
                facts: try route.decode(withoutCopy, descriptor: descriptor).facts,
                compatibleCopy: .failed(
                    MediaError(
                        .unsupported, "\(request.label): no compatible copy is made of \(request.format.name) files")))
        }
        var inner = withoutCopy
        inner.thumbnail = ThumbnailSpec(
            size: Self.unbounded, quality: spec.quality, damageTolerance: .truncated,
            timeLimit: spec.timeLimit ?? request.timeLimit, posterTime: 0)
        inner.thumbnail?.convertsToSRGB = false  // the copy carries the source's profile
        var decoded = try route.decode(inner, descriptor: descriptor)
        let picture = decoded.thumbnail
        decoded.thumbnail = nil
        switch picture {
        case .made(let full)?:
            decoded.compatibleCopy = finish(full)
        case .failed(let error)?:
            decoded.compatibleCopy = .failed(MediaError(error.kind, "no compatible copy: \(error.message)"))
        case nil:
            decoded.compatibleCopy = .failed(
                MediaError(.damaged, "\(request.label): no picture to make a compatible copy of"))
        }
        return decoded
    }

    private var withoutCopy: DecodeRequest {
        var plain = request
        plain.compatibleCopy = nil
        plain.thumbnail = nil
        return plain
    }

    /// The JPEG with the source's capture metadata and colour profile.
    private func finish(_ picture: Thumbnail) -> CompatibleCopyOutcome {
        let file = DescriptorBytes(descriptor)
        let icc = iccProfile(file)
        var notes: [String] = []
        var exif: [UInt8]?
        if let metadata = CaptureMetadata.read(file, format: request.format),
            let segment = metadata.exifSegment(
                width: picture.width, height: picture.height, keepsLocation: spec.keepsLocation,
                colourSpace: icc == nil ? 1 : 0xFFFF)
        {
            exif = segment.payload
            notes.append("EXIF: " + (segment.tags.isEmpty ? "Orientation" : segment.tags.joined(separator: ", ")))
        }
        if let icc { notes.append("ICC profile (\(icc.count) bytes)") }
        let jpeg = JPEGMetadataSegments.inserting(exif: exif, icc: icc, into: picture.jpeg)
        guard jpeg.count <= spec.maximumBytes else {
            return .failed(
                MediaError(
                    .tooManyPixels,
                    "\(request.label): its compatible copy is \(jpeg.count >> 20) MiB, over the \(spec.maximumBytes >> 20) MiB a decoder may send"
                ))
        }
        return .made(CompatibleCopy(jpeg: jpeg, width: picture.width, height: picture.height, metadata: notes))
    }

    /// A HEIF's ICC profile, when its pixels were left in the colours it
    /// describes (no `nclx` that the decoders converted to sRGB).
    private func iccProfile(_ file: DescriptorBytes) -> [UInt8]? {
        guard ["heic", "heif", "avif"].contains(request.format.id), file.count <= HEIFDecoding.maximumFileSize,
            let bytes = file.read(0..<file.count), let heif = try? HEIFFile.parse(bytes), let primary = heif.primaryItem
        else { return nil }
        guard let profile = heif.iccProfileKept(for: primary), profile.count <= 1 << 20 else { return nil }
        return Array(bytes[profile])
    }
}
