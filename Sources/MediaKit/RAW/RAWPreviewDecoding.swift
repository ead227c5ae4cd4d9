import CShims
import CVips
import Glibc
import MediaFormats

/// Camera RAW photos (DNG, NEF, CR2, CR3, ARW, RAF, ORF, RW2): the thumbnail is
/// made from the largest preview the camera embedded (``RAWFile`` finds them,
/// in pure Swift), turned by the RAW's own orientation; the sensor data is never
/// decoded. A RAW with no preview that decodes is delivered as a file, with the
/// reason.
struct RAWStep: DecoderStep {
    var library: String { "embedded preview" }
    func reads(_ format: MediaFormat) -> Bool { format.isCameraRAW }
    func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        try RAWPreviewDecoding(request: request, source: DescriptorBytes(descriptor)).decode()
    }
}

/// One RAW file's facts and thumbnail (see ``RAWStep``).
struct RAWPreviewDecoding {
    let request: DecodeRequest
    let source: any RandomAccessBytes

    /// A preview whose frame header was read: its pixel size.
    struct Candidate {
        let preview: RAWPreview
        let width: Int
        let height: Int
        var pixels: Int { width * height }
        var longSide: Int { max(width, height) }
    }

    /// Bytes of a JPEG preview read to find its frame header (EXIF with a
    /// thumbnail and maker data comes first: up to 64 KiB).
    static let headLength = 128 << 10

    func decode() throws(MediaError) -> DecodedMedia {
        guard source.count > 0 else {
            throw MediaError(.damaged, "\(request.label): empty \(request.format.name) file")
        }
        let description: RAWDescription
        do {
            description = try RAWFile.describe(source, format: request.format)
        } catch {
            throw MediaError(.unsupported, "its \(request.format.name) structure is not readable here: \(error)")
        }
        let (usable, refused) = candidates(description.previews)
        guard !usable.isEmpty else {
            if let over = refused.first(where: { $0.kind == .tooManyPixels }) { throw over }
            throw MediaError(
                .unsupported, "no embedded preview that can be shown (\(Self.summary(description.previews, refused)))")
        }
        let largest = usable.max { $0.pixels < $1.pixels }!
        let stored = storedSize(description, largest: largest)
        // Only a preview of the photo's shape shows it: a token thumbnail of
        // another shape (letterboxed, or a placeholder) would be a false picture.
        let shaped = usable.filter { Self.sameShape($0.width, $0.height, stored.width, stored.height) }
        guard !shaped.isEmpty else {
            throw MediaError(
                .unsupported,
                "no embedded preview that can be shown (none of the photo's \(stored.width)×\(stored.height) shape: \(usable.map { "\($0.preview.origin) \($0.width)×\($0.height)" }.joined(separator: ", ")))"
            )
        }
        let size = description.orientation >= 5 ? (width: stored.height, height: stored.width) : stored
        let facts = MediaFacts(kind: .image, width: size.width, height: size.height)
        guard let spec = request.thumbnail else { return DecodedMedia(facts: facts) }
        // The chosen preview first, then the others, largest first: a preview
        // that does not decode is passed over.
        var failures: [String] = []
        for candidate in order(shaped, spec: spec) {
            do {
                return DecodedMedia(
                    facts: facts,
                    thumbnail: .made(try thumbnail(candidate, orientation: description.orientation, spec: spec)))
            } catch {
                if error.wasKilled {
                    return DecodedMedia(
                        facts: facts, thumbnail: .failed(MediaError(.timeLimit, "\(request.label): \(error)")))
                }
                failures.append("\(candidate.preview.origin) \(candidate.width)×\(candidate.height): \(error)")
            }
        }
        throw MediaError(.unsupported, "no embedded preview decodes (\(failures.joined(separator: "; ")))")
    }

    /// The previews whose headers say they can be shown, within the pixel limit;
    /// and why the others cannot.
    func candidates(_ previews: [RAWPreview]) -> (usable: [Candidate], refused: [MediaError]) {
        var usable: [Candidate] = []
        var refused: [MediaError] = []
        for preview in previews {
            let width: Int
            let height: Int
            switch preview.encoding {
            case .jpeg:
                guard let range = preview.ranges.first,
                    let head = source.read(
                        range.lowerBound..<min(range.upperBound, range.lowerBound + Self.headLength)),
                    let frame = JPEGFrameHeader(head[...])
                else {
                    refused.append(MediaError(.damaged, "\(preview.origin): not a JPEG (\(preview.byteCount) bytes)"))
                    continue
                }
                guard frame.isHuffmanDCT else {
                    refused.append(MediaError(.unsupported, "\(preview.origin): a lossless or arithmetic-coded JPEG"))
                    continue
                }
                (width, height) = (frame.width, frame.height)
            case .rgb(let w, let h):
                let (needed, overflow) = w.multipliedReportingOverflow(by: h * 3)
                guard !overflow, preview.byteCount >= needed else {
                    refused.append(MediaError(.damaged, "\(preview.origin): RGB strips shorter than \(w)×\(h)"))
                    continue
                }
                (width, height) = (w, h)
            }
            do {
                try PixelLimit(request.pixelLimit).check(width, height, label: request.label)
            } catch {
                refused.append(error)
                continue
            }
            usable.append(Candidate(preview: preview, width: width, height: height))
        }
        return (usable, refused)
    }

    /// Which preview to decode first: the largest, unless several are at least
    /// twice the thumbnail's size and of the largest one's shape (within 2 %):
    /// then the smallest of those, which makes the same thumbnail for less
    /// decoding (a CR3's 1620×1080 `PRVW` rather than its 24 MP JPEG). The
    /// others follow, largest first.
    func order(_ usable: [Candidate], spec: ThumbnailSpec) -> [Candidate] {
        let bySize = usable.sorted { $0.pixels > $1.pixels }
        guard let largest = bySize.first else { return [] }
        let aspect = Double(largest.width) / Double(largest.height)
        let enough = bySize.filter {
            $0.longSide >= 2 * spec.decodeSize && abs(Double($0.width) / Double($0.height) / aspect - 1) <= 0.02
        }
        guard let first = enough.last else { return bySize }
        return [first] + bySize.filter { $0.preview != first.preview }
    }

    /// The photo's stored size (before its orientation is applied): the first
    /// size the file states that is at least as large as its largest preview
    /// (some cameras write a token EXIF size), else the preview's.
    func storedSize(_ description: RAWDescription, largest: Candidate) -> (width: Int, height: Int) {
        let stated = description.sizes.first { max($0.width, $0.height) * 100 >= largest.longSide * 95 }
        return stated.map { ($0.width, $0.height) } ?? (largest.width, largest.height)
    }

    /// True when a `width`×`height` picture has the shape of a `photoWidth`×`photoHeight`
    /// one: within 2 %, or within a pixel of rounding (a small preview).
    static func sameShape(_ width: Int, _ height: Int, _ photoWidth: Int, _ photoHeight: Int) -> Bool {
        guard width > 0, height > 0, photoWidth > 0, photoHeight > 0 else { return false }
        let expected = Double(width) * Double(photoHeight) / Double(photoWidth)
        return abs(expected - Double(height)) <= max(1.5, 0.02 * Double(height))
    }

    /// The preview decoded (a JPEG shrunk on load), fitted, turned upright by
    /// the RAW's orientation (a preview's own EXIF orientation, if any, is not
    /// applied: the RAW's is the photo's) and encoded.
    func thumbnail(_ candidate: Candidate, orientation: Int, spec: ThumbnailSpec) throws(VipsError) -> Thumbnail {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(candidate.preview.byteCount)
        for range in candidate.preview.ranges {
            guard let part = source.read(range) else {
                throw VipsError("read", message: "\(candidate.preview.origin) cannot be read")
            }
            bytes += part
        }
        try Vips.start()
        return try Vips.withExactErrors { () throws(VipsError) -> Thumbnail in
            var image: VipsImageHandle
            switch candidate.preview.encoding {
            case .jpeg:
                image = try VipsImageHandle.make("vips_thumbnail_buffer") {
                    shim_vips_thumbnail_buffer(
                        bytes, bytes.count, $0, Int32(spec.decodeSize), Int32(spec.decodeSize),
                        spec.damageTolerance.vipsFailOn)
                }
            case .rgb(let width, let height):
                let wrapped: Result<VipsImageHandle, VipsError> = bytes.withUnsafeBytes { buffer in
                    do throws(VipsError) {
                        return .success(
                            try VipsImageHandle.fromPixels(
                                buffer.baseAddress!, width: width, height: height, bands: 3, stride: width * 3))
                    } catch {
                        return .failure(error)
                    }
                }
                image = try wrapped.get()
                let longest = max(width, height)
                if longest > spec.decodeSize {
                    let scale = Double(spec.decodeSize) / Double(longest)
                    image = try VipsImageHandle.make("vips_resize") { shim_vips_resize(image.pointer, $0, scale) }
                }
            }
            // A preview kept at full size (a compatible copy) is still read
            // sequentially from its JPEG: turning it needs its pixels in memory.
            if orientation != 1, max(image.width, image.height) >= candidate.longSide { image = try image.inMemory() }
            image = try image.oriented(exif: orientation)
            return try image.thumbnail(spec: spec)
        }
    }

    /// What was found, for the warning of a RAW delivered as a file.
    static func summary(_ previews: [RAWPreview], _ refused: [MediaError]) -> String {
        guard !previews.isEmpty else { return "it holds none" }
        return refused.map(\.message).joined(separator: "; ")
    }
}
