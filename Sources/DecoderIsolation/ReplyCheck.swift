import Foundation
import MediaFormats

/// The parent's check of every helper reply before anything in it is used: a
/// helper is a process a hostile file may have taken over, so its facts, its
/// MIME type and its thumbnail are claims. A reply that fails a check fails its
/// item with ``MediaError/Kind/decoderMisbehaved``, and the helper is killed.
///
/// - Facts: a kind the sniffed format can have (``kinds(for:)``: a JPEG's
///   facts are never a video's); width and height both given or both absent, each positive and at
///   most ``maximumSide``, their product within the request's pixel limit (a
///   displayed size may exceed the stored one by the sample aspect ratio: up to
///   ``displayStretch`` times); a duration finite and not negative (and at most
///   ``maximumDuration``); a frame or page count from 1 to ``maximumFrames``; a
///   MIME type from the known set (``knownMIMETypes``); at most
///   ``maximumWarnings`` warnings of at most ``maximumText`` bytes each.
/// - Thumbnail: only when one was asked for; bytes that are a JPEG (start of
///   image, a frame header before the scan, end of image last) whose frame size,
///   read here by ``JPEGFrame``, is the size the reply claims, at most the size
///   asked for on its longer side, and of the facts' shape (within two pixels of
///   rounding; a 360° photo's may have its centre view's); its ThumbHash, if any, base64 of 5 to ``maximumThumbHash``
///   bytes (``checkThumbHash(_:)``); its perceptual hash, if any, exactly 16
///   lowercase hexadecimal digits (``checkPerceptualHash(_:)``); its colour
///   cells, if any, only with a perceptual hash, exactly 96 (``checkColourCells(_:)``).
/// - Panorama, stereo and gain map (``Projection``): a projection only for an
///   image, with sizes of 1 to ``Projection/maximumSide`` and its crop inside the
///   full panorama; `stereo` only for an image or a video, `gainMap` only for an image.
/// - Moment facts: only when asked for, and only for an image or a video; an
///   embedded video only in an image, its byte range inside the file (whose
///   size the parent reads itself) and at least ``minimumVideo`` bytes long; a
///   content identifier of 1–100 characters of `A–Z a–z 0–9 -`; capture times
///   finite and between 1900 and 2200; a still-image time finite, not negative
///   and within the duration (and a day); a position finite, within ±90° and
///   ±180°, not 0, 0 (``CapturePosition/problem``); camera facts (make,
///   model, lens) kept only as ``CameraFacts/cleaned`` leaves them: control
///   characters made spaces, spaces trimmed, a value of more than
///   ``CameraFacts/maximumBytes`` UTF-8 bytes dropped.
/// - Compatible copy: only when one was asked for; bytes that are a JPEG
///   (checked as a thumbnail's) of the size the reply claims, at most the
///   spec's ``CompatibleCopySpec/maximumBytes``, at most the facts' size (two
///   pixels of rounding) and of their shape: exactly their size (a HEIF, AVIF
///   or JPEG XL is copied at full resolution), or for a camera RAW (its
///   largest preview) their shape within 2 %; at most ``maximumNotes`` notes of
///   what it carries, of at most ``maximumText`` bytes.
/// - Location metadata: only for a location request, and then no size, no
///   thumbnail and no compatible copy; at most ``maximumLocationRecords``
///   places and ``maximumEdits`` overwrites in all, each a non-empty range of
///   non-negative offsets in steps 0 to 3, names of at most ``maximumText``
///   bytes. (Where the ranges lie in the copy is checked by whoever makes the
///   overwrites, against the file.)
/// - Takeout JSON readings: exactly one for each Takeout JSON the request
///   carried, none otherwise; each the facts read (a title of at most
///   ``TakeoutJSON/maximumTitle`` and a description of at most
///   ``TakeoutJSON/maximumDescription`` Unicode scalars, each at most
///   ``maximumText`` bytes times two, places of finite numbers) or a refusal
///   (a message of at most ``maximumText`` bytes). (The facts' ranges — a date
///   between 1826 and 2200, latitudes and longitudes — are the pipeline's to
///   check: a file may say anything.)
/// - Pixels (a ``DecodeTask/pixels`` request's answer, and only then): nothing
///   else in the reply, at most the size asked for on each side, rows of
///   `width × 3` bytes, exactly `stride × height` bytes (``checkPixels``).
/// - Failures: a message of at most ``maximumText`` bytes; no thumbnail bytes.
/// - Text (messages and warnings) is shown to people: its control characters
///   (a terminal's escape sequences among them) become spaces.
package enum ReplyCheck {
    package static let maximumSide = 1 << 20
    package static let displayStretch = 2
    package static let maximumDuration = 1e11  // about three years, in milliseconds
    package static let maximumFrames = 1_000_000
    package static let maximumWarnings = 64
    package static let maximumText = 4096
    /// The smallest embedded video: an `ftyp` box and one more box header.
    package static let minimumVideo = 24
    package static let maximumNotes = 16
    package static let maximumLocationRecords = 256
    package static let maximumEdits = 4096
    /// The longest ThumbHash accepted (the reference's longest is about 30 bytes).
    package static let maximumThumbHash = 40

    /// MIME types a decoder may report: every known format's, and for each
    /// video container `video/X` its sound-only form `audio/X` (an MP4 or
    /// WebM that holds only audio).
    package static let knownMIMETypes: Set<String> = {
        var types = Set(MediaFormat.all.map(\.mimeType))
        for type in types where type.hasPrefix("video/") { types.insert("audio/" + type.dropFirst("video/".count)) }
        return types
    }()

    /// The decoded media (or the decoder's failure) of a reply that passes every
    /// check; throws the first check it fails, in words.
    /// `fileSize`: the size of the file decoded, as the parent reads it (nil: no
    /// byte range can be accepted).
    package static func validate(_ reply: HelperReply, for request: DecodeRequest, fileSize: Int? = nil)
        throws(ReplyViolation) -> Result<DecodedMedia, MediaError>
    {
        let result = reply.result
        if let failure = result.failure {
            guard reply.jpeg.isEmpty, reply.compatible.isEmpty, result.facts == nil, result.moments == nil,
                result.location == nil, result.takeouts == nil,
                result.pixelsWidth == nil
            else {
                throw ReplyViolation("a failure with facts, moment facts, location metadata or picture bytes")
            }
            try checkText(failure.message, "its failure message")
            return .failure(MediaError(failure.kind, printable(failure.message)))
        }
        guard var facts = result.facts else { throw ReplyViolation("a result with neither facts nor a failure") }
        guard kinds(for: request).contains(facts.kind) else {
            throw ReplyViolation(
                "the facts of \(article(facts.kind)) \(facts.kind.rawValue) for a file sniffed as \(request.format.name)"
            )
        }
        try check(facts, for: request)
        facts.warnings = facts.warnings.map(printable)
        if request.task == .pixels { return try checkPixels(reply, for: request, facts: facts) }
        if request.task == .contactSheet { return try checkContactSheet(reply, for: request, facts: facts) }
        guard result.pixelsWidth == nil, result.pixelsHeight == nil, result.pixelsStride == nil else {
            throw ReplyViolation("pixels nobody asked for")
        }
        var thumbnail: ThumbnailOutcome?
        if let width = result.thumbnailWidth, let height = result.thumbnailHeight {
            guard let spec = request.thumbnail else { throw ReplyViolation("a thumbnail nobody asked for") }
            let jpeg = try kept(reply.jpeg, metadata: false, request: request, what: "thumbnail")
            try checkThumbnail(jpeg[...], width: width, height: height, spec: spec, facts: facts)
            let hash = try result.thumbnailThumbHash.map { (text) throws(ReplyViolation) in try checkThumbHash(text) }
            var made = Thumbnail(jpeg: jpeg, width: width, height: height, thumbHash: hash)
            try checkNearDuplicateHash(result, into: &made)
            made.previews = try checkPreviews(reply, for: request, spec: spec, thumbnail: (width, height))
            try checkGainMaps(result, facts: facts, spec: spec, into: &made)  // GainMapReplyCheck.swift (issue 54)
            thumbnail = .made(made)
        } else {
            guard result.thumbnailWidth == nil, result.thumbnailHeight == nil else {
                throw ReplyViolation("a thumbnail with only one side")
            }
            guard result.thumbnailThumbHash == nil else { throw ReplyViolation("a ThumbHash without a thumbnail") }
            guard result.thumbnailPerceptualHash == nil else {
                throw ReplyViolation("a perceptual hash without a thumbnail")
            }
            guard result.thumbnailColourCells == nil else { throw ReplyViolation("colour cells without a thumbnail") }
            guard result.previews == nil, reply.previews.isEmpty else {
                throw ReplyViolation("previews without a thumbnail")
            }
            guard reply.jpeg.isEmpty else { throw ReplyViolation("thumbnail bytes without a thumbnail") }
            if let failure = result.thumbnailFailure {
                guard request.thumbnail != nil else {
                    throw ReplyViolation("a thumbnail failure when none was asked for")
                }
                try checkText(failure.message, "its thumbnail failure message")
                thumbnail = .failed(MediaError(failure.kind, printable(failure.message)))
            }
        }
        var moments = result.moments
        if let read = moments {
            guard request.moments else { throw ReplyViolation("moment facts nobody asked for") }
            try check(read, facts: facts, fileSize: fileSize)
            // Camera facts are text a file made up: cleaned again here, whatever the helper did.
            moments?.camera = read.camera?.cleaned
        }
        var checked = reply
        if request.compatibleCopy != nil, !reply.compatible.isEmpty {
            checked.compatible = try kept(reply.compatible, metadata: true, request: request, what: "compatible copy")[
                ...]
        }
        let compatible = try checkCompatibleCopy(checked, for: request, facts: facts)
        let location = try checkLocation(result, for: request, facts: facts, fileSize: fileSize)
        let takeouts = try checkTakeouts(result, for: request)
        return .success(
            DecodedMedia(
                facts: facts, thumbnail: thumbnail, moments: moments, location: location, compatibleCopy: compatible,
                takeouts: takeouts))
    }

    /// A pixel request's answer: pixels and nothing else, at most the size
    /// asked for on each side, rows of three bytes a pixel one after the
    /// other, and exactly as many bytes as the size says.
    private static func checkPixels(_ reply: HelperReply, for request: DecodeRequest, facts: MediaFacts)
        throws(ReplyViolation) -> Result<DecodedMedia, MediaError>
    {
        let result = reply.result
        guard result.thumbnailWidth == nil, result.thumbnailHeight == nil, result.thumbnailThumbHash == nil,
            result.thumbnailPerceptualHash == nil, result.thumbnailColourCells == nil, result.thumbnailFailure == nil,
            result.previews == nil, reply.previews.isEmpty, reply.compatible.isEmpty, result.compatibleLength == nil,
            result.compatibleFailure == nil,
            result.moments == nil, result.location == nil, result.takeouts == nil
        else { throw ReplyViolation("a pixel request's answer with more than pixels") }
        guard let spec = request.thumbnail, let width = result.pixelsWidth, let height = result.pixelsHeight,
            let stride = result.pixelsStride
        else {
            throw ReplyViolation("a pixel request's answer without the pixels' size")
        }
        guard (1...spec.size).contains(width), (1...spec.size).contains(height) else {
            throw ReplyViolation("pixels of \(width)×\(height) where at most \(spec.size) on a side were asked for")
        }
        guard stride == width * 3 else {
            throw ReplyViolation("pixels whose rows are \(stride) bytes apart, for \(width) pixels of 3 bytes")
        }
        guard reply.jpeg.count == stride * height,
            let pixels = DecodedPixels(width: width, height: height, stride: stride, bytes: Array(reply.jpeg))
        else {
            throw ReplyViolation("\(reply.jpeg.count) bytes of pixels for \(width)×\(height)")
        }
        var decoded = DecodedMedia(facts: facts)
        decoded.pixels = pixels
        return .success(decoded)
    }

    /// A contact sheet's answer: the sheet as a thumbnail (a JPEG whose frame
    /// is the size the facts and the result say, at most the size asked for)
    /// and nothing else; the caller then accepts it only at the plan's size.
    private static func checkContactSheet(_ reply: HelperReply, for request: DecodeRequest, facts: MediaFacts)
        throws(ReplyViolation) -> Result<DecodedMedia, MediaError>
    {
        let result = reply.result
        guard result.pixelsWidth == nil, result.pixelsHeight == nil, result.pixelsStride == nil,
            result.thumbnailThumbHash == nil, result.thumbnailPerceptualHash == nil, result.thumbnailColourCells == nil,
            result.thumbnailFailure == nil,
            result.previews == nil, reply.previews.isEmpty, reply.compatible.isEmpty, result.compatibleLength == nil,
            result.compatibleFailure == nil,
            result.moments == nil, result.location == nil, result.takeouts == nil
        else { throw ReplyViolation("a contact sheet's answer with more than the sheet") }
        guard let spec = request.thumbnail, let width = result.thumbnailWidth, let height = result.thumbnailHeight,
            facts.width == width, facts.height == height
        else { throw ReplyViolation("a contact sheet's answer without the sheet, or of another size than its facts") }
        let jpeg = try kept(reply.jpeg, metadata: false, request: request, what: "contact sheet")
        try checkThumbnail(jpeg[...], width: width, height: height, spec: spec, facts: facts)
        return .success(
            DecodedMedia(facts: facts, thumbnail: .made(Thumbnail(jpeg: jpeg, width: width, height: height))))
    }

    private static func checkTakeouts(_ result: WireResult, for request: DecodeRequest) throws(ReplyViolation)
        -> [TakeoutReading]
    {
        let readings = result.takeouts ?? []
        guard readings.count == request.takeoutJSONs.count else {
            throw ReplyViolation("\(readings.count) Takeout JSON readings for the \(request.takeoutJSONs.count) sent")
        }
        var checked: [TakeoutReading] = []
        for reading in readings {
            switch reading {
            case .refused(let reason):
                try checkText(reason, "a Takeout JSON's refusal")
                checked.append(.refused(printable(reason)))
            case .read(var takeout):
                guard takeout.title.unicodeScalars.count <= TakeoutJSON.maximumTitle else {
                    throw ReplyViolation("a Takeout title of \(takeout.title.unicodeScalars.count) characters")
                }
                try checkText(takeout.title, "a Takeout title", limit: 2 * maximumText)
                if let text = takeout.description {
                    guard text.unicodeScalars.count <= TakeoutJSON.maximumDescription else {
                        throw ReplyViolation("a Takeout description of \(text.unicodeScalars.count) characters")
                    }
                    try checkText(text, "a Takeout description", limit: 4 * TakeoutJSON.maximumDescription)
                }
                for place in [takeout.geoData, takeout.geoDataExif].compactMap({ $0 }) {
                    guard place.latitude.isFinite, place.longitude.isFinite, place.altitude?.isFinite ?? true else {
                        throw ReplyViolation("a Takeout place of \(place.latitude), \(place.longitude)")
                    }
                }
                takeout.title = printable(takeout.title)
                checked.append(.read(takeout))
            }
        }
        return checked
    }

    private static func check(_ moments: MomentFacts, facts: MediaFacts, fileSize: Int?) throws(ReplyViolation) {
        guard facts.kind == .image || facts.kind == .video else {
            throw ReplyViolation("moment facts of a file that is no image or video")
        }
        if let video = moments.embeddedVideo {
            guard facts.kind == .image else { throw ReplyViolation("an embedded video in a video") }
            guard let fileSize else { throw ReplyViolation("an embedded video in a file whose size is not known") }
            let (end, overflow) = video.offset.addingReportingOverflow(video.length)
            guard video.offset >= 0, video.length >= minimumVideo, !overflow, end <= fileSize else {
                throw ReplyViolation(
                    "an embedded video at bytes \(video.offset) to \(overflow ? "(overflow)" : String(end)) of a file of \(fileSize) bytes"
                )
            }
        }
        if let identifier = moments.contentIdentifier, !MomentFacts.isValidIdentifier(identifier) {
            throw ReplyViolation("the content identifier \"\(printable(String(identifier.prefix(64))))\"")
        }
        if let burst = moments.burstIdentifier {
            guard facts.kind == .image, MomentFacts.isValidIdentifier(burst) else {
                throw ReplyViolation("the burst identifier \"\(printable(String(burst.prefix(64))))\"")
            }
        }
        if let time = moments.captureTime {
            for value in [time.local, time.utc, time.gps].compactMap({ $0 })
            where !(value.isFinite && CaptureTime.plausible.contains(value)) {
                throw ReplyViolation("a capture time of \(value) s")
            }
            // An offset within ±14:00, on a 15-minute grid (what the decoder accepts from a file).
            if let local = time.local, let utc = time.utc {
                let offset = local - utc
                guard abs(offset) <= 14 * 3600 + 0.01, abs(offset - (offset / 900).rounded() * 900) < 0.01 else {
                    throw ReplyViolation("a capture time whose offset is \(offset) s")
                }
            }
        }
        // A position only finite, in range and not 0, 0 (issue 54: looked up only once checked).
        if let problem = moments.position?.problem { throw ReplyViolation(problem) }
        if let still = moments.stillImageTime {
            let limit = (facts.durationMilliseconds ?? 0) / 1000 + 86_400
            guard facts.kind == .video, still.isFinite, still >= 0, still <= limit else {
                throw ReplyViolation("a still-image time of \(still) s")
            }
        }
    }

    private static func checkCompatibleCopy(_ reply: HelperReply, for request: DecodeRequest, facts: MediaFacts)
        throws(ReplyViolation) -> CompatibleCopyOutcome?
    {
        let result = reply.result
        guard let spec = request.compatibleCopy else {
            guard result.compatibleWidth == nil, result.compatibleHeight == nil, result.compatibleFailure == nil,
                result.compatibleMetadata == nil,
                reply.compatible.isEmpty
            else { throw ReplyViolation("a compatible copy nobody asked for") }
            return nil
        }
        guard let width = result.compatibleWidth, let height = result.compatibleHeight else {
            guard result.compatibleWidth == nil, result.compatibleHeight == nil, reply.compatible.isEmpty,
                result.compatibleMetadata == nil
            else {
                throw ReplyViolation("compatible copy bytes or a side without a whole copy")
            }
            guard let failure = result.compatibleFailure else {
                throw ReplyViolation("neither a compatible copy nor why not")
            }
            try checkText(failure.message, "its compatible copy failure message")
            return .failed(MediaError(failure.kind, printable(failure.message)))
        }
        guard result.compatibleFailure == nil else {
            throw ReplyViolation("a compatible copy and a failure to make it")
        }
        guard reply.compatible.count <= spec.maximumBytes else {
            throw ReplyViolation(
                "a compatible copy of \(reply.compatible.count) bytes where at most \(spec.maximumBytes) were allowed")
        }
        guard let frame = JPEGFrame(reply.compatible) else {
            throw ReplyViolation("compatible copy bytes that are not a JPEG")
        }
        guard frame.width == width, frame.height == height else {
            throw ReplyViolation(
                "a compatible copy said to be \(width)×\(height) whose JPEG is \(frame.width)×\(frame.height)")
        }
        guard let mediaWidth = facts.width, let mediaHeight = facts.height else {
            throw ReplyViolation("a compatible copy of a picture without a size")
        }
        let notes = result.compatibleMetadata ?? []
        let copy = CompatibleCopy(
            jpeg: Array(reply.compatible), width: width, height: height, metadata: notes.map(printable))
        guard copy.fits(width: mediaWidth, height: mediaHeight, preview: request.format.isCameraRAW) else {
            throw ReplyViolation(
                "a \(width)×\(height) compatible copy of a \(mediaWidth)×\(mediaHeight) picture (\(request.format.isCameraRAW ? "another shape" : "not its full size"))"
            )
        }
        guard notes.count <= maximumNotes else { throw ReplyViolation("\(notes.count) notes on a compatible copy") }
        for note in notes { try checkText(note, "a note on the compatible copy") }
        return .made(copy)
    }

    /// The JPEG segments the parent keeps of a helper's picture (``JPEGSegments``).
    private static func kept(_ jpeg: ArraySlice<UInt8>, metadata: Bool, request: DecodeRequest, what: String)
        throws(ReplyViolation) -> [UInt8]
    {
        guard
            let kept = JPEGSegments.filtered(
                jpeg, keepingMetadata: metadata, allowsLocation: request.compatibleCopy?.keepsLocation ?? true)
        else {
            throw ReplyViolation("\(what) bytes that are not a JPEG")
        }
        return kept
    }

    /// The location overwrites are bounded: in each step no two of those that
    /// write their whole range (zeros, spaces) overlap, and they write at most
    /// the copy's size in all; the others (a `free` box's type, a PNG chunk's
    /// CRC) lie inside the file and do not overlap each other.
    private static func checkOverwrites(_ location: LocationMetadata, fileSize: Int?) throws(ReplyViolation) {
        let edits = Array(Set(location.found.flatMap(\.edits)))
        guard !edits.isEmpty else { return }
        guard let fileSize else { throw ReplyViolation("location overwrites in a file whose size is not known") }
        var total = 0
        for edit in edits {
            guard edit.offset <= fileSize - edit.length else {
                throw ReplyViolation(
                    "an overwrite of \(edit.length) bytes at \(edit.offset) of a \(fileSize)-byte file")
            }
            if edit.fill == .zeros || edit.fill == .spaces { total += edit.length }
        }
        guard total <= fileSize else {
            throw ReplyViolation("overwrites of \(total) bytes in all in a \(fileSize)-byte file")
        }
        let groups = Dictionary(grouping: edits) { "\($0.step)-\($0.fill == .zeros || $0.fill == .spaces)" }
        for group in groups.values {
            let sorted = group.sorted { $0.offset < $1.offset }
            for (earlier, later) in zip(sorted, sorted.dropFirst()) where later.offset < earlier.offset + earlier.length
            {
                throw ReplyViolation(
                    "overlapping overwrites at \(earlier.offset) (\(earlier.length) bytes) and \(later.offset)")
            }
        }
    }

    private static func checkLocation(
        _ result: WireResult, for request: DecodeRequest, facts: MediaFacts, fileSize: Int?
    ) throws(ReplyViolation)
        -> LocationMetadata?
    {
        guard request.task == .locationMetadata else {
            guard result.location == nil else { throw ReplyViolation("location metadata nobody asked for") }
            return nil
        }
        guard var location = result.location else {
            throw ReplyViolation("a location request answered without its findings")
        }
        guard facts.width == nil, facts.height == nil, facts.durationMilliseconds == nil, facts.frameCount == nil,
            result.thumbnailWidth == nil,
            result.thumbnailFailure == nil, result.compatibleWidth == nil, result.compatibleFailure == nil,
            // Of the moment facts, only the position (read before it is removed: issue 54) and the capture time (its offset there).
            result.moments == nil
                || result.moments
                    == MomentFacts(captureTime: result.moments?.captureTime, position: result.moments?.position)
        else { throw ReplyViolation("a location request answered with decoded media") }
        guard location.found.count <= maximumLocationRecords, location.unremovable.count <= maximumWarnings else {
            throw ReplyViolation("\(location.found.count) places holding a location")
        }
        guard location.found.reduce(0, { $0 + $1.edits.count }) <= maximumEdits else {
            throw ReplyViolation("more than \(maximumEdits) overwrites")
        }
        for record in location.found {
            try checkText(record.name, "a location record's name")
            for edit in record.edits {
                guard edit.offset >= 0, edit.length >= 1, edit.offset <= Int.max - edit.length,
                    (0...3).contains(edit.step)
                else {
                    throw ReplyViolation("an overwrite of \(edit.length) bytes at \(edit.offset) in step \(edit.step)")
                }
            }
        }
        for text in location.unremovable { try checkText(text, "a note on unremovable location metadata") }
        try checkOverwrites(location, fileSize: fileSize)
        location.found = location.found.map { LocationRecord(name: printable($0.name), edits: $0.edits) }
        location.unremovable = location.unremovable.map(printable)
        return location
    }

    /// What a file of the sniffed format may turn out to be, as the decoders
    /// here route it (``InProcessDecoder``): an image format an image, a video
    /// or audio format a video or a sound (an MP4 of audio alone; an Ogg
    /// whose first stream is sound and another a video), a document a document,
    /// SVG and PSD (rendered only in helpers) a document; any of them a file no
    /// decoder here reads (`unreadable`), and every other format only that. A
    /// location request's facts are the format's kind itself (and a Takeout
    /// JSON's, text, `unreadable`).
    package static func kinds(for request: DecodeRequest) -> Set<MediaFacts.Kind> {
        let format = request.format
        if request.task == .pixels || request.task == .contactSheet { return [.image] }
        if request.task == .locationMetadata {
            switch format.kind {
            case .image: return [.image]
            case .video: return [.video]
            case .audio: return [.audio]
            case .document: return [.document]
            default: return [.unreadable]
            }
        }
        if HelperKind.needsSandboxOnlyLoaders(format) { return [.document, .unreadable] }
        switch format.kind {
        case .image: return [.image, .unreadable]
        case .video, .audio: return [.video, .audio, .unreadable]
        case .document: return [.document, .unreadable]
        default: return [.unreadable]
        }
    }

    private static func article(_ kind: MediaFacts.Kind) -> String {
        kind == .image || kind == .audio || kind == .unreadable ? "an" : "a"
    }

    private static func check(_ facts: MediaFacts, for request: DecodeRequest) throws(ReplyViolation) {
        switch (facts.width, facts.height) {
        case (nil, nil): break
        case (let width?, let height?):
            guard (1...maximumSide).contains(width), (1...maximumSide).contains(height) else {
                throw ReplyViolation("a size of \(width)×\(height) pixels")
            }
            let limit = request.pixelLimit.multipliedReportingOverflow(by: displayStretch)
            guard limit.overflow || width * height <= limit.partialValue else {
                throw ReplyViolation(
                    "a size of \(width)×\(height) pixels, over the pixel limit of \(request.pixelLimit)")
            }
        default:
            throw ReplyViolation("a width without a height, or a height without a width")
        }
        if let duration = facts.durationMilliseconds {
            guard duration.isFinite, duration >= 0, duration <= maximumDuration else {
                throw ReplyViolation("a duration of \(duration) ms")
            }
        }
        if let frames = facts.frameCount {
            guard (1...maximumFrames).contains(frames) else { throw ReplyViolation("a frame count of \(frames)") }
        }
        if let mime = facts.mimeType {
            guard knownMIMETypes.contains(mime) else {
                throw ReplyViolation("the unknown MIME type \"\(mime.prefix(64))\"")
            }
        }
        if let video = facts.video {
            guard facts.kind == .video else { throw ReplyViolation("video facts of a file that is no video") }
            if let problem = video.problem { throw ReplyViolation(problem) }
        }
        if let projection = facts.projection {
            guard facts.kind == .image else { throw ReplyViolation("a panorama projection of a file that is no image") }
            if let problem = projection.problem { throw ReplyViolation(problem) }
        }
        if facts.stereo != nil, facts.kind != .image && facts.kind != .video {
            throw ReplyViolation("a stereo pair that is no image or video")
        }
        if facts.gainMap != nil, facts.kind != .image { throw ReplyViolation("a gain map of a file that is no image") }
        guard facts.warnings.count <= maximumWarnings else { throw ReplyViolation("\(facts.warnings.count) warnings") }
        for warning in facts.warnings { try checkText(warning, "a warning") }
    }

    private static func checkThumbnail(
        _ jpeg: ArraySlice<UInt8>, width: Int, height: Int, spec: ThumbnailSpec, facts: MediaFacts
    ) throws(ReplyViolation) {
        guard let frame = JPEGFrame(jpeg) else { throw ReplyViolation("thumbnail bytes that are not a JPEG") }
        guard frame.width == width, frame.height == height else {
            throw ReplyViolation(
                "a thumbnail said to be \(width)×\(height) whose JPEG is \(frame.width)×\(frame.height)")
        }
        guard width >= 1, height >= 1, max(width, height) <= spec.size else {
            throw ReplyViolation("a \(width)×\(height) thumbnail where at most \(spec.size) pixels were asked for")
        }
        // The same shape as the media: |w·H − h·W| within two pixels of rounding on the longer side.
        // A 360° photo's may be its centre view (MediaKit's `CentreView`: a quarter of its width, a third of
        // its height), or the whole picture when that view could not be made.
        if let mediaWidth = facts.width, let mediaHeight = facts.height {
            var shapes = [(mediaWidth, mediaHeight)]
            if facts.projection?.isFullSphere == true { shapes.append((mediaWidth * 3, mediaHeight * 4)) }
            guard shapes.contains(where: { abs(width * $0.1 - height * $0.0) <= 2 * max($0.0, $0.1) }) else {
                throw ReplyViolation("a \(width)×\(height) thumbnail of a \(mediaWidth)×\(mediaHeight) picture")
            }
        }
    }

    /// The largest preview accepted for a longest side of `size`: its pixels
    /// uncompressed (4 bytes each) and 64 KiB of headers; a compressed picture
    /// larger than that is no honest encoder's.
    package static func maximumPreviewBytes(size: Int) -> Int { size * size * 4 + (64 << 10) }

    /// The previews of a reply whose thumbnail passed: exactly one for each
    /// size asked for, in order, each in the format asked for (JPEG: its
    /// frame read by ``JPEGFrame``, only the segments a picture needs kept;
    /// WebP: read by ``WebPFrame``, only its picture chunks kept), of the size
    /// the reply claims, at most the size asked for and at least one pixel on
    /// each side, of the thumbnail's shape, and at most ``maximumPreviewBytes(size:)``.
    private static func checkPreviews(
        _ reply: HelperReply, for request: DecodeRequest, spec: ThumbnailSpec, thumbnail: (width: Int, height: Int)
    ) throws(ReplyViolation)
        -> [EncodedPicture]?
    {
        let claimed = reply.result.previews
        guard let asked = spec.previews, !asked.sizes.isEmpty else {
            guard claimed == nil, reply.previews.isEmpty else { throw ReplyViolation("previews nobody asked for") }
            return nil
        }
        guard let claimed, claimed.count == asked.sizes.count, reply.previews.count == claimed.count else {
            throw ReplyViolation("\(claimed?.count ?? 0) previews where \(asked.sizes.count) were asked for")
        }
        var pictures: [EncodedPicture] = []
        for (index, size) in asked.sizes.enumerated() {
            let claim = claimed[index]
            var bytes = reply.previews[index]
            guard claim.format == asked.format else {
                throw ReplyViolation("a \(claim.format.rawValue) preview where \(asked.format.rawValue) was asked for")
            }
            guard bytes.count == claim.length, bytes.count <= maximumPreviewBytes(size: size) else {
                throw ReplyViolation("a preview of \(bytes.count) bytes for \(size) pixels")
            }
            let frame: (width: Int, height: Int)
            switch asked.format {
            case .jpeg:
                bytes = try kept(bytes, metadata: false, request: request, what: "preview")[...]
                guard let jpeg = JPEGFrame(bytes) else { throw ReplyViolation("preview bytes that are not a JPEG") }
                frame = (jpeg.width, jpeg.height)
            case .webp:
                guard let webp = WebPFrame(bytes) else { throw ReplyViolation("preview bytes that are not a WebP") }
                frame = (webp.width, webp.height)
                bytes = webp.kept[...]
            }
            guard frame.width == claim.width, frame.height == claim.height else {
                throw ReplyViolation(
                    "a preview said to be \(claim.width)×\(claim.height) whose picture is \(frame.width)×\(frame.height)"
                )
            }
            guard claim.width >= 1, claim.height >= 1, max(claim.width, claim.height) <= size else {
                throw ReplyViolation(
                    "a \(claim.width)×\(claim.height) preview where at most \(size) pixels were asked for")
            }
            // The thumbnail's shape (itself checked against the media's, or a 360° photo's centre view):
            // both are scaled from one picture, so they differ by rounding alone.
            let longest = max(claim.width, claim.height, thumbnail.width, thumbnail.height)
            guard abs(claim.width * thumbnail.height - claim.height * thumbnail.width) <= 2 * longest else {
                throw ReplyViolation(
                    "a \(claim.width)×\(claim.height) preview beside a \(thumbnail.width)×\(thumbnail.height) thumbnail"
                )
            }
            pictures.append(
                EncodedPicture(bytes: Array(bytes), width: claim.width, height: claim.height, format: asked.format))
        }
        return pictures
    }

    /// A thumbnail's perceptual hash (``checkPerceptualHash(_:)``) and colour
    /// cells (``checkColourCells(_:)``, only with a hash) into `made`.
    static func checkNearDuplicateHash(_ result: WireResult, into made: inout Thumbnail) throws(ReplyViolation) {
        made.perceptualHash = try result.thumbnailPerceptualHash.map { (text) throws(ReplyViolation) in
            try checkPerceptualHash(text)
        }
        guard let cells = result.thumbnailColourCells else { return }
        guard made.perceptualHash != nil else { throw ReplyViolation("colour cells without a perceptual hash") }
        made.colourCells = try checkColourCells(cells)
    }

    /// A thumbnail's perceptual hash: exactly 16 lowercase hexadecimal digits
    /// (``PerceptualHash/hex(_:)``).
    package static func checkPerceptualHash(_ text: String) throws(ReplyViolation) -> UInt64 {
        guard text.utf8.count == 16, text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
            let hash = UInt64(text, radix: 16)
        else {
            throw ReplyViolation(
                "a perceptual hash that is not 16 hexadecimal digits: \"\(printable(String(text.prefix(64))))\"")
        }
        return hash
    }

    /// A thumbnail's colour cells: exactly 96 lowercase hexadecimal digits
    /// (``PerceptualHash/colourCells(width:height:rgba:)``, 48 bytes: 4×4
    /// cells; a helper of the same build never sends the older 24).
    package static func checkColourCells(_ text: String) throws(ReplyViolation) -> [UInt8] {
        guard let cells = PerceptualHash.parseColours(text) else {
            throw ReplyViolation(
                "colour cells that are not 96 hexadecimal digits: \"\(printable(String(text.prefix(64))))\"")
        }
        return cells
    }

    /// The bytes of a thumbnail's ThumbHash: base64 (standard alphabet, padded)
    /// of 5 to ``maximumThumbHash`` bytes whose header
    /// says how many follow (its alpha flag makes it at least 6).
    package static func checkThumbHash(_ text: String) throws(ReplyViolation) -> [UInt8] {
        guard text.utf8.count <= 4 * ((maximumThumbHash + 2) / 3), let data = Data(base64Encoded: text),
            data.base64EncodedString() == text
        else {
            throw ReplyViolation("a ThumbHash that is not base64: \"\(printable(String(text.prefix(64))))\"")
        }
        let bytes = [UInt8](data)
        guard bytes.count >= 5, bytes.count <= maximumThumbHash, bytes[2] & 0x80 == 0 || bytes.count >= 6 else {
            throw ReplyViolation("a ThumbHash of \(bytes.count) bytes")
        }
        return bytes
    }

    /// `text` with every control character (C0, DEL, C1) replaced by a space.
    package static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? " " : $0 }))
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func checkText(_ text: String, _ what: String, limit: Int = maximumText) throws(ReplyViolation) {
        guard text.utf8.count <= limit else { throw ReplyViolation("\(what) of \(text.utf8.count) bytes") }
    }
}

/// A check a helper's reply failed, in words ("a size of 100000×100000 pixels").
package struct ReplyViolation: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// A JPEG's size, read by the parent itself from its frame header
/// (``JPEGFrameHeader``): the bytes must start with SOI (FF D8), end with EOI
/// (FF D9), and hold a SOFn segment before the first scan (SOS); segments are
/// walked by their lengths, never past the end.
package struct JPEGFrame: Equatable {
    package let width: Int
    package let height: Int

    package init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count >= 4, bytes[bytes.endIndex - 2] == 0xFF, bytes[bytes.endIndex - 1] == 0xD9,
            let frame = JPEGFrameHeader(bytes)
        else { return nil }
        (width, height) = (frame.width, frame.height)
    }
}

/// A WebP's size, read by the parent itself, and the bytes it keeps of it: a
/// RIFF whose length is the bytes', of form `WEBP`, holding a lossy (`VP8 `)
/// or lossless (`VP8L`) picture alone, or after a `VP8X` header (whose canvas
/// must be the picture's size, no animation) with an optional `ALPH` chunk
/// before a lossy picture. Metadata chunks (`EXIF`, `XMP `, `ICCP`) are
/// dropped, as ``JPEGSegments`` drops a JPEG's (libvips 8.14 writes EXIF into
/// a WebP whatever it is told); any other chunk refuses the file. Chunks are
/// walked by their lengths, never past the end.
package struct WebPFrame: Equatable {
    package let width: Int
    package let height: Int
    /// The picture's chunks alone, in a RIFF of their own: a `VP8X` (flags:
    /// alpha only) only when an `ALPH` chunk needs one.
    package let kept: [UInt8]

    package init?(_ bytes: ArraySlice<UInt8>) {
        let b = Array(bytes)
        func le32(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24 }
        func le24(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 }
        guard b.count >= 20, b.count <= Int(UInt32.max), b[0..<4].elementsEqual("RIFF".utf8),
            b[8..<12].elementsEqual("WEBP".utf8),
            le32(4) + 8 == b.count
        else { return nil }
        var chunks: [(type: String, start: Int, length: Int)] = []
        var at = 12
        while at < b.count {
            guard b.count - at >= 8, chunks.count < 8 else { return nil }
            let length = le32(at + 4)
            guard length <= b.count - at - 8 else { return nil }
            let type = String(decoding: b[at..<(at + 4)], as: UTF8.self)
            if !["EXIF", "XMP ", "ICCP"].contains(type) { chunks.append((type, at + 8, length)) }
            at += 8 + length + (length & 1)
        }
        guard at == b.count else { return nil }
        let types = chunks.map(\.type)
        guard
            types == ["VP8 "] || types == ["VP8L"] || types == ["VP8X", "VP8 "] || types == ["VP8X", "VP8L"]
                || types == ["VP8X", "ALPH", "VP8 "],
            let picture = chunks.last
        else { return nil }
        let p = picture.start
        if picture.type == "VP8 " {
            // Frame tag (3 bytes, a key frame: bit 0 clear), start code 9D 01 2A, 14-bit width and height.
            guard picture.length >= 10, b[p] & 1 == 0, b[p + 3] == 0x9D, b[p + 4] == 0x01, b[p + 5] == 0x2A else {
                return nil
            }
            width = (Int(b[p + 6]) | Int(b[p + 7]) << 8) & 0x3FFF
            height = (Int(b[p + 8]) | Int(b[p + 9]) << 8) & 0x3FFF
        } else {
            // Signature 0x2F, then 14 bits of width − 1 and 14 of height − 1.
            guard picture.length >= 5, b[p] == 0x2F else { return nil }
            let bits = le32(p + 1)
            width = (bits & 0x3FFF) + 1
            height = ((bits >> 14) & 0x3FFF) + 1
        }
        guard width >= 1, height >= 1 else { return nil }
        if let header = chunks.first, header.type == "VP8X" {
            // Flags (4 bytes; bit 1 animation), canvas width − 1 and height − 1 (24 bits each).
            guard header.length == 10, b[header.start] & 0x02 == 0, le24(header.start + 4) + 1 == width,
                le24(header.start + 7) + 1 == height
            else {
                return nil
            }
        }
        func chunk(_ type: String, _ payload: ArraySlice<UInt8>) -> [UInt8] {
            let n = payload.count
            return Array(type.utf8) + [
                UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24 & 0xFF),
            ] + payload + (n & 1 == 1 ? [0] : [])
        }
        var body = Array("WEBP".utf8)
        if types.contains("ALPH") {
            let w = width - 1
            let h = height - 1
            body += chunk(
                "VP8X",
                [
                    0x10, 0, 0, 0, UInt8(w & 0xFF), UInt8(w >> 8 & 0xFF), UInt8(w >> 16), UInt8(h & 0xFF),
                    UInt8(h >> 8 & 0xFF), UInt8(h >> 16),
                ])
            body += chunk("ALPH", b[chunks[1].start..<(chunks[1].start + chunks[1].length)])
        }
        body += chunk(picture.type, b[p..<(p + picture.length)])
        let n = body.count
        kept =
            Array("RIFF".utf8) + [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24 & 0xFF)]
            + body
    }
}
