import CShims
import CVips
import MediaFormats

/// What a picture's ICC profile says about its colours, read as far as the
/// thumbnail needs (ICC.1:2010, §7): whether the profile describes sRGB, so the
/// picture's values can be shown as they are. A profile is untrusted bytes from
/// the file: every offset is checked against its length, and a profile this
/// cannot read is taken as not sRGB (the picture is then converted by LittleCMS,
/// which refuses what it cannot use).
enum ICCProfile {
    /// The largest profile a picture may carry into the conversion (a Display P3
    /// profile is 536 bytes, a print profile's tables a few megabytes at most).
    static let largestSize = 4 << 20

    /// sRGB's red, green and blue colorants adapted to the profile connection
    /// space's D50 white, as IEC 61966-2-1's profile and its copies state them.
    static let sRGBColorants: [(x: Double, y: Double, z: Double)] = [
        (0.4361, 0.2225, 0.0139), (0.3851, 0.7169, 0.0971), (0.1431, 0.0606, 0.7141),
    ]

    /// How far each colorant value may be from sRGB's (profiles round them
    /// differently by up to 0.0005; Display P3's red is 0.08 away).
    static let colorantTolerance = 0.003

    /// True when `profile` is an RGB matrix profile with sRGB's colorants and a
    /// tone curve of about sRGB's gamma (a table, a parametric curve or a single
    /// gamma of 2.0–2.6; a linear "sRGB" is not): the colours of a picture with
    /// no profile, left as they are.
    static func describesSRGB(_ profile: [UInt8]) -> Bool {
        guard profile.count >= 132, isRGB(profile), let count = word(profile, at: 128),
            count <= 1024
        else { return false }
        var tags: [UInt32: Range<Int>] = [:]
        for index in 0..<Int(count) {
            let entry = 132 + 12 * index
            guard let signature = word(profile, at: entry), let offset = word(profile, at: entry + 4),
                let size = word(profile, at: entry + 8), Int(offset) + Int(size) <= profile.count
            else { return false }
            tags[signature] = Int(offset)..<Int(offset) + Int(size)
        }
        for (name, expected) in zip(["rXYZ", "gXYZ", "bXYZ"], sRGBColorants) {
            guard let range = tags[tag(name)], let xyz = xyz(profile, in: range),
                abs(xyz.x - expected.x) <= colorantTolerance, abs(xyz.y - expected.y) <= colorantTolerance,
                abs(xyz.z - expected.z) <= colorantTolerance
            else { return false }
        }
        guard let curve = tags[tag("rTRC")] else { return false }
        return curveIsAboutSRGBs(profile, in: curve)
    }

    /// True when `profile` is for RGB pictures (its header's colour space).
    static func isRGB(_ profile: [UInt8]) -> Bool { word(profile, at: 16) == tag("RGB ") }

    /// An `XYZType` tag's first value.
    private static func xyz(_ profile: [UInt8], in range: Range<Int>) -> (x: Double, y: Double, z: Double)? {
        guard range.count >= 20, word(profile, at: range.lowerBound) == tag("XYZ "),
            let x = word(profile, at: range.lowerBound + 8), let y = word(profile, at: range.lowerBound + 12),
            let z = word(profile, at: range.lowerBound + 16)
        else { return nil }
        func fixed(_ value: UInt32) -> Double { Double(Int32(bitPattern: value)) / 65536 }
        return (fixed(x), fixed(y), fixed(z))
    }

    /// True when the tone curve in `range` is a table or a parametric curve of
    /// more than a gamma (taken as sRGB's shape), or a single gamma of 2.0–2.6;
    /// false for any other gamma and for a curve this cannot read.
    private static func curveIsAboutSRGBs(_ profile: [UInt8], in range: Range<Int>) -> Bool {
        guard range.count >= 12, let type = word(profile, at: range.lowerBound) else { return false }
        let sRGBLike = 2.0...2.6
        if type == tag("curv"), let entries = word(profile, at: range.lowerBound + 8) {
            guard entries == 1 else { return true }
            guard range.count >= 14 else { return false }
            let value = UInt16(profile[range.lowerBound + 12]) << 8 | UInt16(profile[range.lowerBound + 13])
            return sRGBLike.contains(Double(value) / 256)
        }
        if type == tag("para"), range.count >= 16, let g = word(profile, at: range.lowerBound + 12) {
            let function = UInt16(profile[range.lowerBound + 8]) << 8 | UInt16(profile[range.lowerBound + 9])
            return function != 0 || sRGBLike.contains(Double(Int32(bitPattern: g)) / 65536)
        }
        return false
    }

    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt32? {
        guard offset >= 0, offset + 4 <= bytes.count else { return nil }
        return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func tag(_ name: String) -> UInt32 { name.utf8.reduce(0) { $0 << 8 | UInt32($1) } }
}

extension VipsImageHandle {
    /// libvips' metadata field for a picture's ICC profile: its loaders set it
    /// from the file, ``tagged(iccProfile:)`` from a HEIF's `colr` box.
    static let iccField = "icc-profile-data"

    /// The ICC profile this picture carries, nil when none (or an empty one).
    var iccProfile: [UInt8]? {
        guard vips_image_get_typeof(pointer, Self.iccField) != 0 else { return nil }
        var data: UnsafeRawPointer?
        var length = 0
        guard vips_image_get_blob(pointer, Self.iccField, &data, &length) == 0, let data, length > 0 else {
            vips_error_clear()
            return nil
        }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }

    /// This newly made picture with `profile` as its ICC profile (a HEIF's
    /// pixels, decoded by us, whose `colr` box holds one); unchanged when the
    /// profile is empty or larger than ``ICCProfile/largestSize``.
    func tagged(iccProfile profile: [UInt8]) -> VipsImageHandle {
        guard !profile.isEmpty, profile.count <= ICCProfile.largestSize else { return self }
        profile.withUnsafeBytes { vips_image_set_blob_copy(pointer, Self.iccField, $0.baseAddress, $0.count) }
        return self
    }

    /// This picture's colours in sRGB (issue 62): one that carries an ICC
    /// profile other than sRGB's (an iPhone's Display P3, a camera's Adobe RGB,
    /// a print's CMYK) converted from it to sRGB by LittleCMS (relative
    /// colorimetric, 8 bits a sample, alpha kept), so its thumbnail shows the
    /// colours its source does wherever an untagged picture is taken as sRGB
    /// (a thumbnail carries no profile). An 8-bit RGB picture with an RGB
    /// profile (every phone photo) is converted by ``rgb8InSRGB(from:)``, whose
    /// transforms are kept; anything else by libvips' `icc_transform`. Itself
    /// when it has no profile, an sRGB one, fewer than three bands (grey), or
    /// one LittleCMS refuses (the picture is still shown, as it was before).
    /// Callers convert once, at the thumbnail's or preview's size.
    func inSRGBColours() -> VipsImageHandle {
        guard bands >= 3, let profile = iccProfile, profile.count <= ICCProfile.largestSize,
            !ICCProfile.describesSRGB(profile)
        else { return self }
        if ICCProfile.isRGB(profile), bands <= 4, vips_image_get_format(pointer) == VIPS_FORMAT_UCHAR {
            return (try? rgb8InSRGB(from: profile)) ?? self
        }
        var out: UnsafeMutablePointer<VipsImage>?
        guard shim_vips_icc_to_srgb(pointer, &out) == 0, let out else {
            vips_error_clear()
            return self
        }
        return VipsImageHandle(out)
    }

    /// This 8-bit RGB or RGBA picture's pixels, computed, converted from
    /// `profile` to sRGB with LittleCMS directly (`shim_icc_to_srgb_rgb8`: its
    /// own sRGB, the transform of each profile built once per process, where
    /// libvips' `icc_transform` builds one per picture for about 6 ms), as a
    /// new picture in memory with no profile.
    func rgb8InSRGB(from profile: [UInt8]) throws(VipsError) -> VipsImageHandle {
        let (width, height, bands) = (self.width, self.height, self.bands)
        var size = 0
        guard let memory = vips_image_write_to_memory(pointer, &size) else {
            throw VipsError("vips_image_write_to_memory")
        }
        defer { g_free(memory) }
        guard size == width * height * bands else {
            throw VipsError(
                "vips_image_write_to_memory", message: "\(size) bytes for a \(width)×\(height)×\(bands) picture")
        }
        // Converted in place (LittleCMS takes the same buffer as input and output), then copied into the picture.
        let pixels = memory.assumingMemoryBound(to: UInt8.self)
        let status = profile.withUnsafeBytes { icc in
            shim_icc_to_srgb_rgb8(icc.baseAddress, icc.count, pixels, pixels, width * height, Int32(bands))
        }
        guard status == 0 else { throw VipsError("LittleCMS", message: "an ICC profile it cannot use") }
        return try Self.fromPixels(memory, width: width, height: height, bands: bands, stride: width * bands)
    }
}

extension HEIFFile {
    /// Where `item`'s ICC profile is (its own, else its first tile's: a grid's
    /// colour is often its tiles', as iPhones until the 11 put it), when the
    /// decoders leave its pixels in the colours the profile describes: nil when
    /// it has none, or when its `nclx` box states a colour they convert to sRGB.
    func iccProfileKept(for item: HEIFItem) -> Range<Int>? {
        let tile = references(from: item.id, type: "dimg").first.flatMap { items[$0] }
        guard let profile = iccProfile(of: item) ?? tile.flatMap(iccProfile(of:)) else { return nil }
        if case .nclx(let primaries, let transfer, _, _)? = colour(of: item) ?? tile.flatMap(colour(of:)),
            ColourDescription(transferCode: transfer, primariesCode: primaries).needsConversion
        {
            return nil
        }
        return profile
    }
}
