import CShims
import CVips
import Glibc
import MediaFormats

// Drawing a contact sheet (MediaFormats' ContactSheet) with libvips.
extension ContactSheet {
    /// Renders `tiles` (the first `layout.maximumTiles` of them) under an optional
    /// one-line `title`. A tile whose thumbnail cannot be read is drawn as a
    /// placeholder rather than failing the sheet. An empty list gives one
    /// placeholder tile reading "no items" (and a `tileCount` of 0).
    /// `total`: how many tiles there were in all, when the caller made only the
    /// first ones (the rest count as omitted).
    public static func render(
        _ tiles: [ContactSheetTile], title: String? = nil, layout: ContactSheetLayout = ContactSheetLayout(),
        total: Int? = nil
    ) throws(VipsError) -> ContactSheet {
        try Vips.start()
        let shown = Array(tiles.prefix(max(1, layout.maximumTiles)))
        let drawn = shown.isEmpty ? [ContactSheetTile(picture: .placeholder("—"), caption: "no items")] : shown
        let renderer = TileRenderer(layout: layout)
        var images: [VipsImageHandle] = []
        images.reserveCapacity(drawn.count)
        for tile in drawn { images.append(try renderer.tile(tile)) }

        let columns = layout.columns(for: drawn.count)
        let grid = try VipsImageHandle.arrayJoined(
            images, across: columns, spacing: layout.spacing, background: TileRenderer.sheetBackground)
        images.removeAll()
        let gridWidth = grid.width + 2 * layout.spacing
        var sheet = try grid.embedded(
            x: layout.spacing, y: layout.spacing, width: gridWidth, height: grid.height + 2 * layout.spacing,
            background: TileRenderer.sheetBackground)
        if let title {
            let strip = try renderer.textStrip(
                title, width: gridWidth, height: layout.titleHeight, background: TileRenderer.sheetBackground,
                centred: false)
            sheet = try strip.stacked(above: sheet)
        }
        let jpeg = try sheet.jpegData(quality: layout.quality)
        return ContactSheet(
            jpeg: jpeg, width: sheet.width, height: sheet.height, tileCount: shown.count,
            omittedCount: max(total ?? 0, tiles.count) - shown.count, columns: columns,
            rows: layout.rows(for: drawn.count))
    }
}

/// Draws single tiles; every tile comes out as 3-band sRGB uchar of the same
/// size, held in memory so no thumbnail file stays open while the grid is built.
private struct TileRenderer {
    typealias RGB = (r: Double, g: Double, b: Double)
    static let sheetBackground: RGB = (226, 226, 226)
    static let tileBackground: RGB = (255, 255, 255)
    static let placeholderBackground: RGB = (240, 240, 240)
    static let failedBackground: RGB = (150, 150, 150)
    static let captionInk: RGB = (34, 34, 34)
    static let placeholderInk: RGB = (110, 110, 110)
    static let failedInk: RGB = (255, 255, 255)
    static let captionFont = "DejaVu Sans 9"
    static let labelFont = "DejaVu Sans Bold 16"
    static let dpi: Int32 = 96

    let layout: ContactSheetLayout

    func tile(_ tile: ContactSheetTile) throws(VipsError) -> VipsImageHandle {
        let cell = layout.cellSize
        let picture: VipsImageHandle
        switch tile.picture {
        case .pixels(let pixels):
            let fitted = try fitted(pixels)
            picture = try fitted.embedded(
                x: (cell - fitted.width) / 2, y: (cell - fitted.height) / 2, width: cell, height: cell,
                background: Self.tileBackground)
        case .placeholder(let label):
            picture = try labelled(label, background: Self.placeholderBackground, ink: Self.placeholderInk)
        case .failed(let label):
            picture = try labelled(label, background: Self.failedBackground, ink: Self.failedInk)
        }
        let caption = try textStrip(
            tile.caption, width: cell, height: layout.captionHeight, background: Self.tileBackground, centred: true)
        let joined = try picture.stacked(above: caption)
        return try joined.inMemory()
    }

    /// The pixels as an image, shrunk into the picture box when they are larger
    /// (a decoder's promise is not relied on; ``DecodedPixels`` already
    /// guarantees their rows and length).
    private func fitted(_ pixels: DecodedPixels) throws(VipsError) -> VipsImageHandle {
        let made = pixels.bytes.withUnsafeBytes { buffer in
            Result { () throws(VipsError) in
                try VipsImageHandle.fromRGB(buffer, width: pixels.width, height: pixels.height)
            }
        }
        let image = try made.get()
        let box = layout.pictureBox
        guard pixels.width > box || pixels.height > box else { return image }
        let scale = Double(box) / Double(max(pixels.width, pixels.height))
        let shrunk = try VipsImageHandle.make("vips_resize") { shim_vips_resize(image.pointer, $0, scale) }
        return try shrunk.embedded(
            x: 0, y: 0, width: min(box, shrunk.width), height: min(box, shrunk.height), background: Self.tileBackground)
    }

    /// A cell-sized square of `background` with `label` centred on it.
    private func labelled(_ label: String, background: RGB, ink: RGB) throws(VipsError) -> VipsImageHandle {
        let cell = layout.cellSize
        let text = try rendered(
            Self.ellipsized(label, limit: Self.characters(fitting: layout.pictureBox) / 2), font: Self.labelFont,
            align: VIPS_ALIGN_CENTRE, ink: ink, background: background)
        return try text.embedded(
            x: (cell - text.width) / 2, y: (cell - text.height) / 2, width: cell, height: cell,
            background: background)
    }

    /// `text` (plain, up to two lines) on a `width` × `height` strip of `background`,
    /// centred or left-aligned; lines are shortened to fit, never wrapped, and
    /// whatever still does not fit is cut off.
    func textStrip(_ text: String, width: Int, height: Int, background: RGB, centred: Bool) throws(VipsError)
        -> VipsImageHandle
    {
        let limit = Self.characters(fitting: width - 2 * layout.padding)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(2).map {
            Self.ellipsized(String($0), limit: limit)
        }
        let joined = lines.joined(separator: "\n")
        guard !joined.allSatisfy(\.isWhitespace) else {
            return try VipsImageHandle.filled(width: width, height: height, colour: background)
        }
        let rendered = try rendered(
            joined, font: Self.captionFont, align: centred ? VIPS_ALIGN_CENTRE : VIPS_ALIGN_LOW, ink: Self.captionInk,
            background: background)
        let x = centred ? (width - rendered.width) / 2 : 2 * layout.padding
        let y = (height - rendered.height) / 2
        return try rendered.embedded(x: x, y: y, width: width, height: height, background: background)
    }

    /// Renders plain text with `vips_text`, which takes Pango markup: the text is
    /// escaped first (`g_markup_escape_text`), so a file named `<b>` is drawn as is.
    /// The layout is wide enough that Pango never wraps a line; callers shorten
    /// lines and cut off the rest.
    private func rendered(_ text: String, font: String, align: VipsAlign, ink: RGB, background: RGB) throws(VipsError)
        -> VipsImageHandle
    {
        let markup = Self.markupEscaped(text)
        let mask = try VipsImageHandle.make("vips_text") {
            shim_vips_text_aligned($0, markup, 4096, Self.dpi, font, align)
        }
        return try VipsImageHandle.make("vips_linear") {
            shim_vips_ink_on_background(mask.pointer, $0, ink.r, ink.g, ink.b, background.r, background.g, background.b)
        }
    }

    private static func markupEscaped(_ text: String) -> String {
        // Control characters other than the line break are not allowed in Pango markup, even escaped.
        let printable = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F ? "\u{FFFD}" : $0 }))
        guard let escaped = g_markup_escape_text(printable, -1) else { return "" }
        defer { g_free(escaped) }
        return String(cString: escaped)
    }

    /// How many caption characters fit in `width` pixels (DejaVu Sans at 12 px
    /// averages about 7 px a character; the bold label font is twice as wide).
    static func characters(fitting width: Int) -> Int { max(4, width / 7) }

    /// Shortens `text` to `limit` characters by replacing its middle with "…", so
    /// the start of a name and its extension stay visible.
    static func ellipsized(_ text: String, limit: Int) -> String {
        guard text.count > limit, limit > 3 else { return text }
        let tail = (limit - 1) / 3
        let head = limit - 1 - tail
        return String(text.prefix(head)) + "…" + String(text.suffix(tail))
    }
}

extension VipsImageHandle {
    /// Three-band sRGB uchar, the common form of all tiles: alpha flattened over
    /// white, greyscale and other colour spaces converted, 16-bit cast down.
    func srgb8() throws(VipsError) -> VipsImageHandle {
        var image = self
        if image.hasAlpha {
            image = try Self.make("vips_flatten") { shim_vips_flatten(image.pointer, $0, 255, 255, 255) }
        }
        if vips_image_get_interpretation(image.pointer) != VIPS_INTERPRETATION_sRGB || image.bands != 3 {
            image = try Self.make("vips_colourspace") { shim_vips_to_srgb(image.pointer, $0) }
        }
        if vips_image_get_format(image.pointer) != VIPS_FORMAT_UCHAR {
            image = try Self.make("vips_cast") { shim_vips_cast_uchar(image.pointer, $0) }
        }
        return image
    }

    /// Places the image at (`x`, `y`) on a `width` × `height` canvas of `background`
    /// (`vips_embed`); parts outside the canvas are cut off.
    fileprivate func embedded(x: Int, y: Int, width: Int, height: Int, background: TileRenderer.RGB) throws(VipsError)
        -> VipsImageHandle
    {
        try Self.make("vips_embed") {
            shim_vips_embed(
                pointer, $0, Int32(x), Int32(y), Int32(width), Int32(height), background.r, background.g, background.b)
        }
    }

    /// This image with `other` under it (`vips_join`, top to bottom).
    fileprivate func stacked(above other: VipsImageHandle) throws(VipsError) -> VipsImageHandle {
        try Self.make("vips_join") { shim_vips_join(pointer, other.pointer, $0, VIPS_DIRECTION_VERTICAL, 255) }
    }

    /// The pixels computed now and held in memory (`vips_image_copy_memory`), so the
    /// files and operations the image came from are released.
    func inMemory() throws(VipsError) -> VipsImageHandle {
        guard let copy = vips_image_copy_memory(pointer) else { throw VipsError("vips_image_copy_memory") }
        return VipsImageHandle(copy)
    }

    /// A `width` × `height` sRGB image of one colour.
    fileprivate static func filled(width: Int, height: Int, colour: TileRenderer.RGB) throws(VipsError)
        -> VipsImageHandle
    {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for i in stride(from: 0, to: pixels.count, by: 3) {
            pixels[i] = UInt8(colour.r)
            pixels[i + 1] = UInt8(colour.g)
            pixels[i + 2] = UInt8(colour.b)
        }
        let image = pixels.withUnsafeBytes { buffer in
            Result { () throws(VipsError) in try fromRGB(buffer, width: width, height: height) }
        }
        return try image.get()
    }

    /// `images` in a grid `across` wide, `spacing` apart, gaps filled with
    /// `background` (`vips_arrayjoin`).
    fileprivate static func arrayJoined(
        _ images: [VipsImageHandle], across: Int, spacing: Int, background: TileRenderer.RGB
    ) throws(VipsError) -> VipsImageHandle {
        var pointers: [UnsafeMutablePointer<VipsImage>?] = images.map(\.pointer)
        let joined = try pointers.withUnsafeMutableBufferPointer { buffer throws(VipsError) in
            try make("vips_arrayjoin") {
                shim_vips_arrayjoin(
                    buffer.baseAddress, $0, Int32(buffer.count), Int32(across), Int32(spacing), background.r,
                    background.g, background.b)
            }
        }
        withExtendedLifetime(images) {}
        return joined
    }
}
