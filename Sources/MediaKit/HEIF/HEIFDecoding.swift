import Glibc
import MediaFormats
import SystemCalls

/// HEIC, HEIF and AVIF files, stills and sequences:
///
/// - Facts come from the item structure (``HEIFFile``, pure Swift): the primary
///   item's `ispe`, then its `clap`/`irot` (in `ipma` order), or — only when the
///   item has none of `irot`/`imir`/`clap` — its EXIF Orientation (iPhone 7 era
///   files: 4032×3024 stored, EXIF 6, no `irot`). No pixel is decoded for them,
///   and the pixel limit is checked against the item and, for a grid, its tiles.
/// - Thumbnails of 8-bit HEVC pictures and grids (every phone HEIC) are decoded
///   by libavcodec at reduced size (``CodedItemDecoder``); an embedded `thmb`
///   picture is used instead when it is at least as large as the thumbnail.
///   Everything else (AV1, 10-bit, alpha, odd grids, a file our parser refuses,
///   a libavcodec failure) goes through libheif (``LibheifDecoder``).
/// - Image sequences (`msf1`, `avis`: `.heics`, `.avifs`) are read as tracks by
///   libavformat: type image, the frame count, a thumbnail of the first frame.
struct HEIFDecoding {
    let request: DecodeRequest
    /// The file, open (what a sandboxed helper is handed); nil: opened from
    /// `request.path` (tests).
    var descriptor: Int32? = nil
    /// Which decoder makes the thumbnail (tests force libheif to compare the two).
    var paths: Paths = .automatic

    /// Decoder choice for thumbnails.
    enum Paths {
        /// libavcodec where it applies (and an embedded thumbnail when large enough), libheif otherwise.
        case automatic
        /// libavcodec for the primary item (never an embedded thumbnail), libheif otherwise.
        case primaryItem
        /// libheif only.
        case libheif
    }

    /// Which decoder made a thumbnail.
    enum Route: Equatable {
        case libavcodec
        case embeddedThumbnail
        case libheif
        case sequence
    }

    /// libavcodec threads per grid decode: frame threading over the tiles, so a
    /// photo decoded alone (the last one of a batch) uses both cores.
    static let decoderThreads = 2
    /// libheif's grid tile threads.
    static let libheifThreads = 2
    /// Files larger than this are not read into memory (a HEIC photo is 1–5 MB;
    /// a 100 MP one at high quality well under 100 MB).
    static let maximumFileSize = 256 << 20

    func decode() throws(MediaError) -> DecodedMedia {
        try decodeWithRoute().media
    }

    func decodeWithRoute() throws(MediaError) -> (media: DecodedMedia, route: Route?) {
        let bytes = try readFile()
        let file: HEIFFile
        do {
            file = try HEIFFile.parse(bytes)
        } catch {
            // A structure this parser refuses: libheif may still read it.
            return try libheifOnly(bytes, parseError: error)
        }
        if file.isSequence {
            do {
                return (try HEIFSequenceDecoding(request: request, descriptor: descriptor).decode(), .sequence)
            } catch {
                guard file.primaryItem != nil else { throw error }
                // A sequence whose track libav cannot read, with a still primary image: the still.
            }
        }
        guard let primary = file.primaryItem else {
            throw MediaError(.damaged, "\(request.label): \(request.format.name) file has no primary image")
        }
        guard let stored = file.spatialExtents(of: primary), let displayed = file.displayedSize(of: primary) else {
            return try libheifOnly(
                bytes, parseError: HEIFFormatError("the primary image has no size (ispe) or an empty crop"))
        }
        try checkPixelLimit(primary, stored: stored, in: file, bytes: bytes)
        let transforms = file.transforms(of: primary)
        let exif =
            transforms.isEmpty ? file.exifOrientation(of: primary, in: bytes).flatMap { $0 == 1 ? nil : $0 } : nil
        let turned = (exif ?? 1) >= 5
        let facts = MediaFacts(
            kind: .image, width: turned ? displayed.height : displayed.width,
            height: turned ? displayed.width : displayed.height)
        guard let spec = request.thumbnail else { return (DecodedMedia(facts: facts), nil) }
        switch thumbnail(of: primary, in: file, bytes: bytes, displayed: displayed, exif: exif, spec: spec) {
        case .success(let (thumbnail, route)):
            return (DecodedMedia(facts: facts, thumbnail: .made(thumbnail)), route)
        case .failure(let error) where error.kind == .unsupported:
            // A variant no decoder here reads: the decoder chain delivers the file
            // as a file, with this reason.
            throw MediaError(.unsupported, error.message)
        case .failure(let error):
            return (
                DecodedMedia(
                    facts: facts,
                    thumbnail: .failed(
                        MediaError(
                            error.kind, "\(request.label): cannot decode \(request.format.name) image: \(error.message)"
                        ))), nil
            )
        }
    }

    // MARK: - Thumbnails

    private func thumbnail(
        of primary: HEIFItem, in file: HEIFFile, bytes: [UInt8], displayed: (width: Int, height: Int), exif: Int?,
        spec: ThumbnailSpec
    ) -> Result<(Thumbnail, Route), MediaError> {
        let deadline = Deadline(seconds: spec.timeLimit)
        var avError: MediaError?
        if paths != .libheif {
            // An embedded thumbnail at least as large as the one wanted, same shape.
            if paths == .automatic,
                let embedded = embeddedThumbnail(of: primary, in: file, displayed: displayed, spec: spec)
            {
                let exifForThumbnail = file.transforms(of: embedded).isEmpty ? exif : nil
                if case .success(let thumbnail) = libavcodec(
                    embedded, in: file, bytes: bytes, exif: exifForThumbnail, spec: spec, deadline: deadline)
                {
                    return .success((thumbnail, .embeddedThumbnail))
                }
            }
            switch libavcodec(primary, in: file, bytes: bytes, exif: exif, spec: spec, deadline: deadline) {
            case .success(let thumbnail): return .success((thumbnail, .libavcodec))
            case .failure(let error as MediaError):
                if error.kind == .timeLimit { return .failure(error) }
                avError = error
            case .failure:
                break  // not taken: libheif's
            }
        }
        switch libheif(bytes, exif: exif, spec: spec) {
        case .success(let thumbnail): return .success((thumbnail, .libheif))
        case .failure(let error):
            // libheif's word is final, but a libavcodec failure says more about damage.
            if error.kind == .unsupported, let avError { return .failure(avError) }
            return .failure(error)
        }
    }

    /// The smallest `thmb` item of `primary` that is at least as large as the
    /// thumbnail (its long side ≥ the thumbnail's) and has the same shape (within
    /// 1 %), if libavcodec's path takes it.
    private func embeddedThumbnail(
        of primary: HEIFItem, in file: HEIFFile, displayed: (width: Int, height: Int), spec: ThumbnailSpec
    ) -> HEIFItem? {
        let needed = min(spec.decodeSize, max(displayed.width, displayed.height))
        let aspect = Double(displayed.width) / Double(max(1, displayed.height))
        return file.items(referring: primary.id, type: "thmb")
            .compactMap { item -> (HEIFItem, Int)? in
                guard item.type == "hvc1", let size = file.displayedSize(of: item), size.width > 0, size.height > 0
                else { return nil }
                let long = max(size.width, size.height)
                guard long >= needed, abs(Double(size.width) / Double(size.height) / aspect - 1) <= 0.01 else {
                    return nil
                }
                return (item, long)
            }
            .min { $0.1 < $1.1 }?.0
    }

    /// `item` through libavcodec at reduced size, then its transforms. Fails with
    /// `NotTaken` when the item is not for this path, `MediaError` when decoding failed.
    private func libavcodec(
        _ item: HEIFItem, in file: HEIFFile, bytes: [UInt8], exif: Int?, spec: ThumbnailSpec, deadline: Deadline
    ) -> Result<Thumbnail, any Error> {
        do {
            let layout = try CodedItemDecoder.layout(of: item, in: file, bytes: bytes)
            guard let displayed = file.displayedSize(of: item) else { throw CodedItemDecoder.NotTaken("empty crop") }
            let single = layout.tiles.count == 1
            let reduction = HEIFThumbnail.reduction(
                displayedLongSide: max(displayed.width, displayed.height), size: spec.decodeSize,
                tileWidth: single ? 1 << 20 : layout.tileWidth, tileHeight: single ? 1 << 20 : layout.tileHeight)
            // Frame threads only help a grid: one picture is one frame (and a second
            // thread would hold a second full-size frame).
            let decoder = CodedItemDecoder(
                file: file, bytes: bytes, threads: single ? 1 : Self.decoderThreads, pixelLimit: request.pixelLimit,
                deadline: deadline)
            let picture = try decoder.decode(layout, reduction: reduction)
            try Vips.start()
            return .success(
                try Vips.withExactErrors { () throws(VipsError) -> Thumbnail in
                    var image = try VipsImageHandle.fromRGB(
                        picture.pixels, width: picture.width, height: picture.height)
                    if !picture.inSRGB, let profile = file.iccProfileKept(for: item) {
                        image = image.tagged(iccProfile: Array(bytes[profile]))
                    }
                    return try HEIFThumbnail.finish(
                        image, sourceWidth: layout.outputWidth, sourceHeight: layout.outputHeight,
                        transforms: file.transforms(of: item),
                        exifOrientation: exif, spec: spec)
                })
        } catch let error as VipsError {
            return .failure(MediaError(.damaged, "\(error)"))
        } catch {
            return .failure(error)
        }
    }

    /// The thumbnail of the top-level image `item` instead of the primary (a
    /// stereo pair's left eye, ``SpatialMetadata``), through libheif.
    func thumbnail(ofItem item: HEIFItemID, spec: ThumbnailSpec) throws(MediaError) -> Thumbnail {
        try libheif(try readFile(), exif: nil, spec: spec, item: item).get()
    }

    /// The primary image (or `item`) through libheif (transforms applied by libheif), then EXIF, fit and encode.
    private func libheif(_ bytes: [UInt8], exif: Int?, spec: ThumbnailSpec, item: HEIFItemID? = nil) -> Result<
        Thumbnail, MediaError
    > {
        bytes.withUnsafeBytes { buffer in
            do {
                let decoder: LibheifDecoder
                do throws(LibheifDecoder.Failure) {
                    decoder = try LibheifDecoder(bytes: buffer, threads: Self.libheifThreads, item: item)
                } catch {
                    throw MediaError(error.kind, "libheif: \(error)")
                }
                let image = try decoder.decode(targetSize: spec.decodeSize)
                try Vips.start()
                return .success(
                    try Vips.withExactErrors { () throws(VipsError) -> Thumbnail in
                        try HEIFThumbnail.finish(
                            image, sourceWidth: image.width, sourceHeight: image.height, transforms: [],
                            exifOrientation: exif, spec: spec)
                    })
            } catch let error as MediaError {
                return .failure(error)
            } catch {
                return .failure(MediaError(.damaged, "\(error)"))
            }
        }
    }

    /// A file our parser refuses: libheif's facts and thumbnail, or the parser's reason.
    private func libheifOnly(_ bytes: [UInt8], parseError: HEIFFormatError) throws(MediaError) -> (
        media: DecodedMedia, route: Route?
    ) {
        let size: (width: Int, height: Int)
        do throws(LibheifDecoder.Failure) {
            size = try LibheifDecoder.size(of: bytes)
        } catch {
            if error.kind == .unsupported {
                throw MediaError(.unsupported, "\(parseError); libheif: \(error)")
            }
            throw MediaError(
                .damaged,
                "\(request.label): not a readable \(request.format.name) image: \(parseError); libheif: \(error)")
        }
        try PixelLimit(request.pixelLimit).check(size.width, size.height, label: request.label)
        let facts = MediaFacts(kind: .image, width: size.width, height: size.height)
        guard let spec = request.thumbnail else { return (DecodedMedia(facts: facts), nil) }
        switch libheif(bytes, exif: nil, spec: spec) {
        case .success(let thumbnail): return (DecodedMedia(facts: facts, thumbnail: .made(thumbnail)), .libheif)
        case .failure(let error):
            return (
                DecodedMedia(
                    facts: facts,
                    thumbnail: .failed(
                        MediaError(
                            error.kind, "\(request.label): cannot decode \(request.format.name) image: \(error.message)"
                        ))), nil
            )
        }
    }

    // MARK: - Limits and input

    /// The item's size, and for a grid the tiles' decoded pixels, against the limit.
    private func checkPixelLimit(_ item: HEIFItem, stored: (width: Int, height: Int), in file: HEIFFile, bytes: [UInt8])
        throws(MediaError)
    {
        let limit = PixelLimit(request.pixelLimit)
        try limit.check(stored.width, stored.height, label: request.label)
        guard item.type == "grid", let grid = try? file.grid(item, in: bytes) else { return }
        var decoded = 0
        for id in grid.tiles {
            guard let tile = file.items[id], let size = file.spatialExtents(of: tile) else { continue }
            let (tilePixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
            decoded =
                overflow
                ? Int.max : decoded.addingReportingOverflow(tilePixels).overflow ? Int.max : decoded + tilePixels
            if decoded > request.pixelLimit {
                throw MediaError(
                    .tooManyPixels,
                    "\(request.label): its \(grid.tiles.count) tiles decode to more than \(PixelLimit.megapixels(request.pixelLimit)) MP, the limit; not decoded"
                )
            }
        }
    }

    /// The whole file, read with `pread` from its start.
    func readFile() throws(MediaError) -> [UInt8] {
        // Read with pread from the start: the caller's descriptor keeps its position.
        let file: FileDescriptor
        let size: Int64
        do throws(SystemError) {
            if let descriptor {
                file = FileDescriptor(borrowing: descriptor)
            } else {
                file = try FileDescriptor.openForReading(request.path)
            }
            size = try file.status(path: request.label).size
        } catch {
            throw MediaError(.unreadable, "\(request.label): cannot open: \(error.message)")
        }
        guard size <= Self.maximumFileSize else {
            throw MediaError(
                .tooManyPixels,
                "\(request.label): a \(size >> 20) MiB \(request.format.name) file is larger than this decoder reads")
        }
        do throws(SystemError) {
            return try file.read(count: Int(size), at: 0, path: request.label)
        } catch {
            throw MediaError(.unreadable, "\(request.label): read failed: \(error.message)")
        }
    }
}

/// An image sequence (`msf1`/`avis` track) through libavformat and libavcodec: a
/// picture with a frame count, its thumbnail the first frame.
struct HEIFSequenceDecoding {
    let request: DecodeRequest
    /// The file, open; nil: opened from `request.path`.
    var descriptor: Int32? = nil

    func decode() throws(MediaError) -> DecodedMedia {
        let media: MediaFile
        let probe: MediaProbe
        do {
            if let descriptor {
                media = try MediaFile(descriptor: descriptor, name: request.path, timeLimit: request.timeLimit)
            } else {
                media = try MediaFile(path: request.path, timeLimit: request.timeLimit)
            }
            probe = try media.probe()
        } catch {
            throw MediaError(
                LibraryMessages.kind(of: error),
                "\(request.label): not a readable \(request.format.name) sequence: \(error)")
        }
        guard let video = probe.video else {
            throw MediaError(.damaged, "\(request.label): \(request.format.name) sequence has no decodable track")
        }
        try PixelLimit(request.pixelLimit).check(video.storedWidth, video.storedHeight, label: request.label)
        let frames = Int(media.stream(video.index).pointee.nb_frames)
        let facts = MediaFacts(
            kind: .image, width: video.width, height: video.height, frameCount: frames > 1 ? frames : nil)
        let thumbnail = request.thumbnail.map { spec -> ThumbnailOutcome in
            media.restartClock(seconds: spec.timeLimit)
            do throws(MediaError) {
                return .made(
                    try PosterFrame.thumbnail(
                        of: media, video: video, durationMilliseconds: nil, at: 0, spec: spec,
                        pixelLimit: request.pixelLimit))
            } catch {
                return .failed(
                    MediaError(error.kind, "\(request.label): cannot decode \(request.format.name) sequence: \(error)"))
            }
        }
        return DecodedMedia(facts: facts, thumbnail: thumbnail)
    }
}
