// How a picture is meant to be shown, beyond its size: a panorama's projection
// (GPano XMP), a stereo pair (a HEIC `ster` group, an MV-HEVC video), an HDR gain
// map (Ultra HDR, Apple's auxiliary image, a `tmap` item). Read by the decoder
// from the untrusted bytes (``SpatialMetadata``) with the facts, checked by the
// parent (``Projection/problem``) before the manifest carries any of it.

/// A panorama's projection and the part of it the picture covers (GPano XMP:
/// `ProjectionType`, `FullPanoWidthPixels`, `FullPanoHeightPixels`,
/// `CroppedAreaLeftPixels`, `CroppedAreaTopPixels`, `CroppedAreaImageWidthPixels`,
/// `CroppedAreaImageHeightPixels`).
public struct Projection: Sendable, Codable, Hashable {
    /// How the sphere (or cylinder) is mapped onto the picture.
    public enum Kind: String, Sendable, Codable, Hashable, CaseIterable {
        /// Longitude and latitude linear in x and y: 360° × 180° when full.
        case equirectangular
        /// Longitude linear in x around the viewer, height on a cylinder.
        case cylindrical
    }

    /// The projection.
    public var type: Kind
    /// The whole panorama's size, in pixels (of which the picture may be a crop).
    public var fullWidth: Int
    /// The whole panorama's height.
    public var fullHeight: Int
    /// Where the picture is in the whole panorama: its top-left corner and its size.
    public var cropLeft: Int
    /// Its top edge's row in the whole panorama.
    public var cropTop: Int
    /// Its width.
    public var croppedWidth: Int
    /// Its height.
    public var croppedHeight: Int

    /// A projection; the crop defaults to the whole panorama.
    public init(
        type: Kind, fullWidth: Int, fullHeight: Int, cropLeft: Int = 0, cropTop: Int = 0, croppedWidth: Int? = nil,
        croppedHeight: Int? = nil
    ) {
        self.type = type
        self.fullWidth = fullWidth
        self.fullHeight = fullHeight
        self.cropLeft = cropLeft
        self.cropTop = cropTop
        self.croppedWidth = croppedWidth ?? fullWidth
        self.croppedHeight = croppedHeight ?? fullHeight
    }

    /// True for a 360° photo: an equirectangular panorama that covers the whole
    /// sphere (360° × 180°, no crop), whose whole panorama is 2:1 (``isTwoToOne``):
    /// a stray `GPano:ProjectionType` on a square picture is no sphere.
    public var isFullSphere: Bool {
        type == .equirectangular && cropLeft == 0 && cropTop == 0 && croppedWidth == fullWidth
            && croppedHeight == fullHeight
            && Self.isTwoToOne(width: fullWidth, height: fullHeight)
    }

    /// True for a 360° photo whose picture (`width`×`height`, as stored or
    /// resized) is 2:1 too: the picture a centre view is cut from.
    public func isFullSphere(pictureWidth width: Int, pictureHeight height: Int) -> Bool {
        isFullSphere && Self.isTwoToOne(width: width, height: height)
    }

    /// True when `width` is twice `height` within rounding: 2 pixels, or 1 % of
    /// the width for a picture resized from its panorama's size.
    public static func isTwoToOne(width: Int, height: Int) -> Bool {
        height > 0 && abs(width - 2 * height) <= max(2, width / 100)
    }

    /// The largest size the parent accepts on either side.
    public static let maximumSide = 1 << 20

    /// What is wrong with a projection a decoder reported; nil when it is sane:
    /// positive sizes, a crop inside the full panorama.
    public var problem: String? {
        let sides = [fullWidth, fullHeight, croppedWidth, croppedHeight]
        guard sides.allSatisfy({ (1...Self.maximumSide).contains($0) }) else {
            return "a panorama size that is not 1–\(Self.maximumSide) pixels"
        }
        guard cropLeft >= 0, cropTop >= 0, cropLeft + croppedWidth <= fullWidth, cropTop + croppedHeight <= fullHeight
        else {
            return
                "a panorama crop \(croppedWidth)x\(croppedHeight)+\(cropLeft)+\(cropTop) outside its \(fullWidth)x\(fullHeight)"
        }
        return nil
    }
}
