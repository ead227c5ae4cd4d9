import CShims
import CVips
import MediaFormats

/// A 360° photo's thumbnail: its centre view, not the whole squashed sphere.
///
/// An equirectangular picture that covers the whole sphere maps 360° of
/// longitude across its width and 180° of latitude down its height; its centre
/// (longitude 0, on the horizon) is what panorama viewers open on. The
/// thumbnail is the 90° × 60° around it (a quarter of the width, the middle
/// third of the height: 3:2 for a 2:1 panorama), at the thumbnail's size: the
/// whole picture is shrunk on load so that region's longest side is the
/// largest size asked (``ThumbnailSpec/decodeSize``: the thumbnail's, or its
/// largest preview's), then that region is cut out, and the thumbnail and any
/// previews are made from it.
enum CentreView {
    /// The region's share of the picture: left, top, width, height.
    static let region = (left: 3.0 / 8, top: 1.0 / 3, width: 1.0 / 4, height: 1.0 / 3)

    /// True when the centre view of a `width`×`height` picture is at least the
    /// thumbnail's size on its longest side: a smaller one (a 500×250 sphere's
    /// is 125×83) would be a thumbnail smaller than the whole picture's, so the
    /// whole picture is thumbnailed instead.
    static func isLargeEnough(width: Int, height: Int, spec: ThumbnailSpec) -> Bool {
        max(Double(width) * region.width, Double(height) * region.height) >= Double(spec.size)
    }

    /// The centre view of the `width`×`height` full-sphere picture `input`.
    static func thumbnail(_ input: ImageInput, width: Int, height: Int, spec: ThumbnailSpec) throws(VipsError)
        -> Thumbnail
    {
        try Vips.start()
        let regionLongest = max(Double(width) * region.width, Double(height) * region.height)
        let scale = min(1, Double(spec.decodeSize) / max(1, regionLongest))
        let size = max(1, Int((Double(max(width, height)) * scale).rounded()))
        return try Vips.withExactErrors { () throws(VipsError) in
            try input.withVips { (vips) throws(VipsError) in
                let whole = try VipsImageHandle.make("vips_thumbnail_source") {
                    vips.thumbnail($0, size: size, jpegShrink: nil, failOn: spec.damageTolerance.vipsFailOn)
                }
                let w = whole.width
                let h = whole.height
                let left = Int((Double(w) * region.left).rounded())
                let top = Int((Double(h) * region.top).rounded())
                let cropWidth = max(1, min(w - left, Int((Double(w) * region.width).rounded())))
                let cropHeight = max(1, min(h - top, Int((Double(h) * region.height).rounded())))
                let view = try VipsImageHandle.make("vips_extract_area") {
                    shim_vips_extract_area(
                        whole.pointer, $0, Int32(left), Int32(top), Int32(cropWidth), Int32(cropHeight))
                }
                return try view.thumbnail(spec: spec)
            }
        }
    }
}
