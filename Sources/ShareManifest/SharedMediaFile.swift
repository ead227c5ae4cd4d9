import Foundation

/// What kind of shared item a manifest entry is.
public enum SharedMediaType: String, Sendable, Codable, CaseIterable {
    /// A photo or other still (or animated) image; legacy `0`.
    case image
    /// A video; legacy `1`.
    case video
    /// Any other file (PDF, audio, archive, …); legacy `2`.
    case file
    /// Shared text: the entry's `path` is the text.
    case text
    /// A shared link: the entry's `path` is the URL.
    case url

    /// The legacy (seed) integer: 0 image, 1 video, 2 file. Text and URLs have none:
    /// the legacy format stores them as plain strings.
    public var legacyValue: Int? {
        switch self {
        case .image: 0
        case .video: 1
        case .file: 2
        case .text, .url: nil
        }
    }

    init?(legacyValue: Int) {
        switch legacyValue {
        case 0: self = .image
        case 1: self = .video
        case 2: self = .file
        default: return nil
        }
    }

    /// True for images and videos: a batch holding any is redirected as `media`.
    public var isMedia: Bool { self == .image || self == .video }
}

/// One entry of a share manifest: the `SharedMediaFile` that host apps read.
///
/// For files, `path` is a `file://` URL into the container; for text and URL
/// items it holds the text or the URL itself.
public struct SharedMediaFile: Sendable, Hashable {
    /// A `file://` URL into the container; for text and URL entries, the text or link itself.
    public var path: String
    /// A `file://` URL of the JPEG thumbnail, if one was made.
    public var thumbnail: String?
    /// Duration in milliseconds (videos and audio).
    public var duration: Double?
    /// What the entry is.
    public var type: SharedMediaType
    /// The MIME type from the content (v2 only).
    public var mimeType: String?
    /// Text that came with the share.
    public var message: String?
    /// The original file name.
    public var fileName: String?
    /// Size in bytes of the copy.
    public var size: Int64?
    /// Display size, after EXIF orientation or video rotation.
    public var width: Int?
    /// Display height (see ``width``).
    public var height: Int?

    // share-ingest's own fields (v2 only, and only when set: readers that
    // ignore unknown keys keep working; the legacy and plugin flavours never
    // carry them).

    /// The ThumbHash of the thumbnail (base64, standard alphabet, padded):
    /// Evan Wallace's placeholder format, computed from the thumbnail's own
    /// pixels (scaled to fit 100×100), with their alpha where they have it. Set
    /// on every entry with a thumbnail.
    public var thumbhash: String?
    /// Larger pictures of the item, made from the same decode as its
    /// `thumbnail` (which stays the smallest): the thumbnail stage's `sizes`
    /// beyond the first. Nil when it asked for one size only (the default).
    public var previews: [Preview]?

    /// One preview (v2 `previews`): a JPEG or WebP in the thumbnails folder, named by the item's UUID.
    public struct Preview: Sendable, Hashable, Codable {
        /// A `file://` URL of the picture (`thumbnails/<UUID>.<size>.jpg` or `.webp`), spelled like the entry's `path`.
        public var path: String
        /// Width in pixels, upright.
        public var width: Int
        /// Height in pixels, upright.
        public var height: Int
        /// `image/jpeg` or `image/webp`.
        public var mimeType: String
        /// Size in bytes.
        public var size: Int64?
        /// `gainMap` for an Ultra HDR JPEG preview (it carries the photo's HDR gain map); nil otherwise.
        public var hdr: String?

        /// A preview at `path` (a `file://` URL).
        public init(path: String, width: Int, height: Int, mimeType: String, size: Int64? = nil) {
            self.path = path
            self.width = width
            self.height = height
            self.mimeType = mimeType
            self.size = size
        }
    }
    /// The SHA-256 of the copy's bytes (64 hexadecimal digits): its content identity.
    public var sha256: String?
    /// Set on an entry whose content was already delivered (earlier in the same
    /// share, or in one not yet consumed): that entry's `path`.
    public var duplicateOf: String?
    /// Set on a picture (or a video's poster) that looks like one delivered
    /// before it (earlier in the same share, or in one not yet consumed) without
    /// being the same bytes (those are ``duplicateOf``): that entry's `path` and
    /// how many of the 64 bits of their perceptual hashes differ.
    public var similarTo: SimilarTo?
    /// A motion photo's video (Google or Samsung; JPEG or HEIC), copied out of
    /// the photo into a file of its own; the photo's `path` is the original,
    /// byte for byte. Nil for anything else.
    public var motionVideo: MotionVideo?
    /// Set on both halves of a Live Photo shared together: the still's and the
    /// movie's paths (each entry is one of them).
    public var livePhoto: LivePhoto?
    /// A JPEG of this photo for apps that cannot open its format (HEIC/HEIF,
    /// AVIF, JPEG XL, camera RAW): full resolution, upright, sRGB, with its
    /// capture metadata; iOS's "Most Compatible". Set when the pipeline's
    /// `compatible` stage made one.
    public var compatible: Compatible?
    /// What location metadata was removed from the copy, in words (`EXIF GPS
    /// (GPSLatitude, …)`, `XMP exif:GPSLatitude`, `QuickTime ©xyz`): set when the
    /// pipeline's location privacy removed any. The copy's `sha256` is then the
    /// stripped bytes'.
    public var locationRemoved: [String]?
    /// The export's sidecars that describe this item (Google Takeout JSON, XMP,
    /// Apple `.AAE`), each copied into the container under the item's UUID
    /// (`<UUID>.<n>.json`, `.xmp`, `.aae`). Nil when it has none.
    public var sidecars: [Sidecar]?
    /// When the photo or video was taken, RFC 3339 (`2019-07-01T16:53:20Z`).
    public var capturedAt: String?
    /// Where ``capturedAt`` came from: `takeout` (its Takeout JSON's `photoTakenTime`),
    /// `exif`, `quicktime`, `mp4`, `gps`, `fileName` or `fileTime`.
    public var capturedAtSource: String?
    /// False when ``capturedAt`` is a local time whose offset nobody knows
    /// (written without one); nil (absent) when it has its offset.
    public var capturedAtOffsetKnown: Bool?
    /// Where ``capturedAt``'s offset came from, when it is the place's: `exif`
    /// (`OffsetTimeOriginal`, or the GPS time stamp's difference), `quicktime`
    /// (the creation date's offset), `position` (the time zone at the position
    /// the file records, at that instant) or `takeout` (the time zone at its
    /// Takeout JSON's `geoData`). Nil (absent) when the offset is unknown (a `Z`
    /// of a UTC instant is no place's offset).
    public var capturedAtOffsetSource: String?
    /// What took it (v2 `camera`): the maker, model and lens its metadata names.
    public var camera: Camera?
    /// Where its export says it was taken (a Takeout JSON's `geoData`): set only
    /// when location privacy is off (on, it is removed from the JSON's copy too).
    public var exportLocation: ExportLocation?

    /// The group of shots this item belongs to (v2 `group`): a RAW and its JPEG.
    public var group: Group?
    /// How a video plays (v2 `video`).
    public var video: Video?
    /// A panorama's projection and crop (v2 `projection`), from its GPano XMP.
    public var projection: Projection?
    /// True for a stereo pair (v2 `stereo`): an Apple spatial photo (a HEIC
    /// `ster` group; the thumbnail is the left eye) or spatial video (MV-HEVC;
    /// the poster is the base, left, layer).
    public var stereo: Bool?
    /// A photo's HDR (v2 `hdr`): `gainMap` when it carries an HDR gain map
    /// (Ultra HDR JPEG, Apple HEIC, AVIF/HEIF `tmap`). A video's is `video.hdr`.
    public var hdr: String?
    /// `gainMap` when the thumbnail is an Ultra HDR JPEG carrying the photo's
    /// HDR gain map (v2 `thumbnailHdr`); nil otherwise.
    public var thumbnailHdr: String?

    /// A panorama's projection (v2 `projection`): GPano's `ProjectionType` and the
    /// whole panorama's size, and where the picture sits in it.
    public struct Projection: Sendable, Hashable, Codable {
        /// `equirectangular` or `cylindrical`.
        public var type: String
        /// The whole panorama's size (`FullPanoWidthPixels`, `FullPanoHeightPixels`).
        public var fullWidth: Int
        /// The whole panorama's height.
        public var fullHeight: Int
        /// The picture's place in it (`CroppedAreaLeftPixels`, `CroppedAreaTopPixels`,
        /// `CroppedAreaImageWidthPixels`, `CroppedAreaImageHeightPixels`).
        public var cropLeft: Int
        /// Its top edge's row in the whole panorama.
        public var cropTop: Int
        /// Its width.
        public var croppedWidth: Int
        /// Its height.
        public var croppedHeight: Int

        /// A projection.
        public init(
            type: String, fullWidth: Int, fullHeight: Int, cropLeft: Int, cropTop: Int, croppedWidth: Int,
            croppedHeight: Int
        ) {
            self.type = type
            self.fullWidth = fullWidth
            self.fullHeight = fullHeight
            self.cropLeft = cropLeft
            self.cropTop = cropTop
            self.croppedWidth = croppedWidth
            self.croppedHeight = croppedHeight
        }

        /// True for a 360° photo: equirectangular, no crop, and a whole panorama of
        /// 2:1 within rounding (2 pixels, or 1 % of the width), as the decoder
        /// judges it (a stray `equirectangular` on a square photo is no sphere).
        public var isFullSphere: Bool {
            type == "equirectangular" && cropLeft == 0 && cropTop == 0 && croppedWidth == fullWidth
                && croppedHeight == fullHeight
                && fullHeight > 0 && abs(fullWidth - 2 * fullHeight) <= max(2, fullWidth / 100)
        }
    }

    /// The earlier entry a picture looks like (v2 `similarTo`).
    public struct SimilarTo: Sendable, Hashable, Codable {
        /// The earlier entry's `path`.
        public var path: String
        /// The Hamming distance between the two perceptual hashes (0 to 64).
        public var distance: Int

        /// A near-duplicate of the entry at `path`, `distance` bits apart.
        public init(path: String, distance: Int) {
            self.path = path
            self.distance = distance
        }
    }

    /// What took a photo or video (v2 `camera`), each only where its metadata
    /// says: EXIF `Make`, `Model` and `LensModel`; a movie's QuickTime
    /// `com.apple.quicktime.make` and `model` (or `©mak` and `©mod`).
    public struct Camera: Sendable, Hashable, Codable {
        /// The maker (`Apple`, `samsung`, `Google`).
        public var make: String?
        /// The model (`iPhone 15 Pro`, `Pixel 8 Pro`).
        public var model: String?
        /// The lens (`iPhone 15 Pro back triple camera 6.765mm f/1.78`).
        public var lens: String?

        /// Camera facts.
        public init(make: String? = nil, model: String? = nil, lens: String? = nil) {
            self.make = make
            self.model = model
            self.lens = lens
        }
    }

    /// How a video plays (v2 `video`): its codec, frame rate, HDR, rotation, audio.
    public struct Video: Sendable, Hashable, Codable {
        /// The video codec (`h264`, `hevc`, `vp9`, `av1`…).
        public var codec: String
        /// Frames per second, from the first frames' presentation times.
        public var frameRate: Double?
        /// True when those times are unevenly spaced.
        public var variableFrameRate: Bool?
        /// The capture rate its camera recorded (Android's `com.android.capture.fps`, an Apple slow-motion movie's rate).
        public var captureFrameRate: Double?
        /// True for a slow-motion movie.
        public var slowMotion: Bool?
        /// `pq`, `hlg` or `dolbyVision`; nil for SDR.
        public var hdr: String?
        /// The Dolby Vision profile, with `hdr` `dolbyVision`.
        public var dolbyVisionProfile: Int?
        /// Clockwise degrees to rotate for display.
        public var rotation: Int
        /// The first audio stream's codec; nil when silent.
        public var audio: String?

        /// Video facts.
        public init(
            codec: String, frameRate: Double? = nil, variableFrameRate: Bool? = nil, captureFrameRate: Double? = nil,
            slowMotion: Bool? = nil,
            hdr: String? = nil, dolbyVisionProfile: Int? = nil, rotation: Int = 0, audio: String? = nil
        ) {
            self.codec = codec
            self.frameRate = frameRate
            self.variableFrameRate = variableFrameRate
            self.captureFrameRate = captureFrameRate
            self.slowMotion = slowMotion
            self.hdr = hdr
            self.dolbyVisionProfile = dolbyVisionProfile
            self.rotation = rotation
            self.audio = audio
        }
    }

    /// Items that are one shot, or one burst, or an original and its edit (v2 `group`).
    public struct Group: Sendable, Hashable, Codable {
        /// What kind of group.
        public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
            /// A RAW and a JPEG of the same shot (same folder and stem; capture
            /// times within 1 s when both have one).
            case rawJpeg
            /// An original and its edited renders (`IMG_E1234.JPG` with
            /// `IMG_1234.HEIC`, Takeout's `X-edited.jpg` with `X.jpg`).
            case edit
            /// The frames of one burst (Samsung's `…_BURST001_COVER.jpg`,
            /// `…_BURST002.jpg`; Google's `PXL_….RAW-01.COVER.jpg`, `….RAW-02.ORIGINAL.dng`).
            case burst
        }

        /// An item's part in its group.
        public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
            /// The RAW of a `rawJpeg` group.
            case raw
            /// The JPEG of a `rawJpeg` group.
            case jpeg
            /// The original of an `edit` group.
            case original
            /// An edited render of an `edit` group.
            case edited
            /// The frame a `burst` shows first.
            case cover
            /// Another frame of a `burst`.
            case frame
        }

        /// The same on every member (the UUID of its first member's copy).
        public var id: String
        /// Its kind.
        public var kind: Kind
        /// This item's part in it.
        public var role: Role

        /// A membership of group `id`.
        public init(id: String, kind: Kind, role: Role) {
            self.id = id
            self.kind = kind
            self.role = role
        }
    }

    /// A place an export records (v2 `exportLocation`).
    public struct ExportLocation: Sendable, Hashable, Codable {
        /// Degrees north.
        public var latitude: Double
        /// Degrees east.
        public var longitude: Double
        /// Metres above sea level, when known.
        public var altitude: Double?
        /// What recorded it: `takeout`.
        public var source: String

        /// A place, recorded by `source`.
        public init(latitude: Double, longitude: Double, altitude: Double? = nil, source: String = "takeout") {
            self.latitude = latitude
            self.longitude = longitude
            self.altitude = altitude
            self.source = source
        }
    }

    /// A sidecar attached to an entry (v2 `sidecars`).
    public struct Sidecar: Sendable, Hashable, Codable {
        /// What kind of sidecar it is.
        public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
            /// Google Takeout's JSON (`X.jpg.json`, `X.jpg.supplemental-metadata.json`, …).
            case takeout
            /// An XMP sidecar (`IMG_1234.xmp`, `IMG_1234.CR2.xmp`).
            case xmp
            /// Apple's adjustments (`IMG_1234.AAE`), a property list.
            case aae
        }

        /// A `file://` URL of the copy in the container, spelled like the entry's `path`.
        public var path: String
        /// Its kind.
        public var kind: Kind
        /// `application/json`, `application/rdf+xml` or `application/xml`.
        public var mimeType: String
        /// Size in bytes.
        public var size: Int64?

        /// A sidecar at `path` (a `file://` URL).
        public init(path: String, kind: Kind, mimeType: String, size: Int64? = nil) {
            self.path = path
            self.kind = kind
            self.mimeType = mimeType
            self.size = size
        }

        /// The sidecar's copy in the container.
        public var fileURL: URL? { URL(string: path) }
    }

    /// The video inside a motion photo (v2 `motionVideo`).
    public struct MotionVideo: Sendable, Hashable, Codable {
        /// A `file://` URL of the video in the container (`<UUID>.mp4`).
        public var path: String
        /// A `file://` URL of its poster (JPEG), if one was made.
        public var thumbnail: String?
        /// Duration in milliseconds.
        public var duration: Double?
        /// `video/mp4` (or `video/quicktime`).
        public var mimeType: String?
        /// Size in bytes.
        public var size: Int64?
        /// Display size, after rotation.
        public var width: Int?
        /// Display height (see ``width``).
        public var height: Int?

        /// A motion photo's video; everything but `path` is optional.
        public init(
            path: String, thumbnail: String? = nil, duration: Double? = nil, mimeType: String? = nil,
            size: Int64? = nil, width: Int? = nil, height: Int? = nil
        ) {
            self.path = path
            self.thumbnail = thumbnail
            self.duration = duration
            self.mimeType = mimeType
            self.size = size
            self.width = width
            self.height = height
        }

        /// The video file in the container.
        public var fileURL: URL? { URL(string: path) }
    }

    /// The two halves of a Live Photo (v2 `livePhoto`): the same value on both entries.
    public struct LivePhoto: Sendable, Hashable, Codable {
        /// How the halves were found to belong together.
        public enum Pairing: String, Sendable, Hashable, Codable, CaseIterable {
            /// Apple's content identifier: the still's maker note (tag 0x0011) and
            /// the movie's `com.apple.quicktime.content.identifier` are the same.
            case contentIdentifier
            /// Without identifiers: the same name in the same folder
            /// (`IMG_0001.HEIC`, `IMG_0001.MOV` or `IMG_0001_HEVC.MOV`), a movie of
            /// at most 3.2 s, and capture times within 2 s of each other.
            case nameAndTime
        }

        /// The still's `path` (a `file://` URL).
        public var photo: String
        /// The movie's `path` (a `file://` URL).
        public var video: String
        /// The content identifier both carry, when paired by it.
        public var contentIdentifier: String?
        /// How they were paired.
        public var pairedBy: Pairing

        /// The halves of a Live Photo.
        public init(photo: String, video: String, contentIdentifier: String? = nil, pairedBy: Pairing) {
            self.photo = photo
            self.video = video
            self.contentIdentifier = contentIdentifier
            self.pairedBy = pairedBy
        }
    }

    /// A compatible copy of an entry (v2 `compatible`).
    public struct Compatible: Sendable, Hashable {
        /// A `file://` URL of the JPEG in the container, spelled like the entry's `path`.
        public var path: String
        /// `image/jpeg`.
        public var mimeType: String
        /// Size in bytes.
        public var size: Int64?
        /// Width in pixels, upright.
        public var width: Int?
        /// Height in pixels, upright.
        public var height: Int?

        /// A compatible copy at `path` (a `file://` URL).
        public init(
            path: String, mimeType: String = "image/jpeg", size: Int64? = nil, width: Int? = nil, height: Int? = nil
        ) {
            self.path = path
            self.mimeType = mimeType
            self.size = size
            self.width = width
            self.height = height
        }

        /// The JPEG in the container.
        public var fileURL: URL? { URL(string: path) }
    }

    /// An entry; everything but `path` and `type` is optional.
    public init(
        path: String, thumbnail: String? = nil, duration: Double? = nil, type: SharedMediaType,
        mimeType: String? = nil, message: String? = nil, fileName: String? = nil, size: Int64? = nil,
        width: Int? = nil, height: Int? = nil
    ) {
        self.path = path
        self.thumbnail = thumbnail
        self.duration = duration
        self.type = type
        self.mimeType = mimeType
        self.message = message
        self.fileName = fileName
        self.size = size
        self.width = width
        self.height = height
    }

    /// The entry with share-ingest's own fields set (v2 manifests carry them).
    public func with(
        sha256: String?, duplicateOf: String? = nil, motionVideo: MotionVideo? = nil, livePhoto: LivePhoto? = nil
    ) -> SharedMediaFile {
        var entry = self
        entry.sha256 = sha256
        entry.duplicateOf = duplicateOf
        entry.motionVideo = motionVideo
        entry.livePhoto = livePhoto
        return entry
    }

    /// The entry with its compatible copy and what location metadata was removed (v2 manifests carry them).
    public func with(compatible: Compatible?, locationRemoved: [String]?) -> SharedMediaFile {
        var entry = self
        entry.compatible = compatible
        entry.locationRemoved = locationRemoved
        return entry
    }

    /// The entry with the sidecars attached to it (v2 manifests carry them).
    public func with(sidecars: [Sidecar]?) -> SharedMediaFile {
        var entry = self
        entry.sidecars = sidecars
        return entry
    }

    /// The entry with its capture time and the place its export records (v2 manifests carry them).
    public func with(capturedAt: String?, capturedAtSource: String?, exportLocation: ExportLocation?) -> SharedMediaFile
    {
        var entry = self
        entry.capturedAt = capturedAt
        entry.capturedAtSource = capturedAtSource
        entry.exportLocation = exportLocation
        return entry
    }

    /// The entry with whether its thumbnail carries the photo's gain map (v2 `thumbnailHdr`).
    public func with(thumbnailHdr: String?) -> SharedMediaFile {
        var entry = self
        entry.thumbnailHdr = thumbnailHdr
        return entry
    }

    /// The entry with its previews (v2 manifests carry them; an empty list is none).
    public func with(previews: [Preview]?) -> SharedMediaFile {
        var entry = self
        entry.previews = previews?.isEmpty == true ? nil : previews
        return entry
    }

    /// The entry with its thumbnail's ThumbHash (v2 manifests carry it).
    public func with(thumbhash: String?) -> SharedMediaFile {
        var entry = self
        entry.thumbhash = thumbhash
        return entry
    }

    /// The entry with the earlier entry it looks like (v2 manifests carry it).
    public func with(similarTo: SimilarTo?) -> SharedMediaFile {
        var entry = self
        entry.similarTo = similarTo
        return entry
    }

    /// The entry with what took it (v2 manifests carry it).
    public func with(camera: Camera?) -> SharedMediaFile {
        var entry = self
        entry.camera = camera
        return entry
    }

    /// The entry with how its video plays (v2 manifests carry it).
    public func with(video: Video?) -> SharedMediaFile {
        var entry = self
        entry.video = video
        return entry
    }

    /// The entry with its panorama projection, whether it is a stereo pair and a photo's HDR (v2 manifests carry them).
    public func with(projection: Projection?, stereo: Bool?, hdr: String?) -> SharedMediaFile {
        var entry = self
        (entry.projection, entry.stereo, entry.hdr) = (projection, stereo, hdr)
        return entry
    }

    /// The entry with whether its capture time's offset is known (false: a local time without one).
    /// The entry with whether its capture time's offset is known and where it came from.
    public func with(capturedAtOffsetKnown: Bool?, capturedAtOffsetSource: String?) -> SharedMediaFile {
        var entry = with(capturedAtOffsetKnown: capturedAtOffsetKnown)
        entry.capturedAtOffsetSource = capturedAtOffsetSource
        return entry
    }

    /// The entry with whether its capture time's offset is known.
    public func with(capturedAtOffsetKnown: Bool?) -> SharedMediaFile {
        var entry = self
        entry.capturedAtOffsetKnown = capturedAtOffsetKnown
        return entry
    }

    /// The entry with its group (v2 manifests carry it).
    public func with(group: Group?) -> SharedMediaFile {
        var entry = self
        entry.group = group
        return entry
    }

    /// The container file this entry points at, for file-like entries.
    public var fileURL: URL? { type == .text || type == .url ? nil : URL(string: path) }
}
