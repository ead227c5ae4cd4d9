// The contact sheet as data: its tiles, its geometry, the plan a decoder
// composes it from (DecodeTask.contactSheet), and the sheet that comes back.
// Pure Swift: the composing is MediaKit's (libvips), done where decoding is
// done (in a sandboxed helper, for `share`).

/// One cell of a contact sheet: a picture and a short caption under it.
public struct ContactSheetTile: Sendable, Hashable {
    /// What fills the square above the caption.
    public enum Picture: Sendable, Hashable {
        /// Pixels (a thumbnail decoded to fit ``ContactSheetLayout/pictureBox``,
        /// by a ``MediaDecoder``'s ``DecodeTask/pixels`` request): the sheet
        /// only composes, and decodes no file. Pixels larger than the box are
        /// shrunk to fit it.
        case pixels(DecodedPixels)
        /// A light square with a short label (e.g. `PDF`, `TXT`) for items without a picture.
        case placeholder(String)
        /// A grey square with a white label (e.g. "failed"), for items that were not delivered.
        case failed(String)
    }

    /// The picture above the caption.
    public var picture: Picture
    /// Plain text (not markup), one or two lines separated by `\n`; each line is
    /// shortened in the middle to fit the cell, and a third line is cut off.
    public var caption: String

    /// A tile showing `picture` above `caption`.
    public init(picture: Picture, caption: String) {
        self.picture = picture
        self.caption = caption
    }
}

/// The geometry of a contact sheet. Every tile is `cellSize` wide and
/// `cellSize + captionHeight` tall; tiles are `spacing` apart, with a `spacing`
/// margin around the grid, and the title strip (when there is a title) on top:
///
///     width  = columns × cellSize + (columns + 1) × spacing
///     height = titleHeight + rows × (cellSize + captionHeight) + (rows + 1) × spacing
public struct ContactSheetLayout: Sendable, Hashable {
    /// Width and height of the square that holds each picture, in pixels.
    public var cellSize: Int
    /// Height of the caption strip under each picture (two lines of text).
    public var captionHeight: Int
    /// Gap between tiles and around the grid.
    public var spacing: Int
    /// Height of the strip above the grid that holds the title, when there is one.
    public var titleHeight: Int
    /// Tiles per row; nil picks the smallest square-ish grid, at most `maximumColumns` wide.
    public var columns: Int?
    /// The widest grid chosen automatically.
    public var maximumColumns: Int
    /// Tiles beyond this many are left out, so memory stays bounded: every tile is
    /// held decoded (`cellSize × (cellSize + captionHeight) × 3` bytes, about
    /// 140 kB at the defaults) until the sheet is encoded; with libvips' and
    /// Pango's own buffers, 400 tiles peak at about 200 MB.
    public var maximumTiles: Int
    /// JPEG quality, 1–100.
    public var quality: Int

    /// The defaults: 200 px cells, up to 10 columns and 400 tiles.
    public init(
        cellSize: Int = 200, captionHeight: Int = 36, spacing: Int = 6, titleHeight: Int = 30,
        columns: Int? = nil, maximumColumns: Int = 10, maximumTiles: Int = 400, quality: Int = 85
    ) {
        self.cellSize = cellSize
        self.captionHeight = captionHeight
        self.spacing = spacing
        self.titleHeight = titleHeight
        self.columns = columns
        self.maximumColumns = maximumColumns
        self.maximumTiles = maximumTiles
        self.quality = quality
    }

    /// Tiles per row for `tileCount` tiles: the given `columns`, else the ceiling of
    /// the square root (4 tiles → 2 × 2, 7 → 3 × 3), capped at `maximumColumns`.
    public func columns(for tileCount: Int) -> Int {
        let count = max(1, tileCount)
        if let columns { return max(1, min(columns, count)) }
        var side = 1
        while side * side < count { side += 1 }
        return max(1, min(side, maximumColumns))
    }

    /// Rows for `tileCount` tiles.
    public func rows(for tileCount: Int) -> Int {
        let columns = columns(for: tileCount)
        return (max(1, tileCount) + columns - 1) / columns
    }

    /// The picture area of a cell, the longest side a tile's pixels may have:
    /// the cell less a small inner padding.
    public var pictureBox: Int { max(1, cellSize - 2 * padding) }
    /// The inner padding of a cell around its picture.
    public var padding: Int { max(2, cellSize / 25) }
}

extension ContactSheetLayout {
    /// The size of the sheet drawn for `tileCount` tiles (an empty list draws
    /// one "no items" tile), with or without a title strip: the formula above.
    public func sheetSize(tileCount: Int, titled: Bool) -> (width: Int, height: Int) {
        let drawn = max(1, min(tileCount, max(1, maximumTiles)))
        let columns = columns(for: drawn)
        let rows = rows(for: drawn)
        let width = columns * cellSize + (columns + 1) * spacing
        let height = (titled ? titleHeight : 0) + rows * (cellSize + captionHeight) + (rows + 1) * spacing
        return (width, height)
    }
}

/// A grid of thumbnails with captions, encoded as one JPEG: for terminals, chat
/// and CI artifacts. Composed with libvips from pixels its caller decoded
/// (``ContactSheetTile/Picture/pixels(_:)``; it reads no image file): each tile
/// is a picture (centred with `vips_embed`) over a caption (`vips_text`),
/// joined with `vips_join`; the tiles are laid out with `vips_arrayjoin`.
public struct ContactSheet: Sendable {
    /// The JPEG bytes.
    public let jpeg: [UInt8]
    /// Width of the sheet in pixels.
    public let width: Int
    /// Height of the sheet in pixels.
    public let height: Int
    /// Tiles drawn (at most the layout's `maximumTiles`).
    public let tileCount: Int
    /// Tiles left out because of `maximumTiles`.
    public let omittedCount: Int
    /// Tiles per row.
    public let columns: Int
    /// Rows of tiles.
    public let rows: Int

    /// A sheet of `jpeg`, `width` × `height` pixels, showing `tileCount` tiles
    /// (and leaving out `omittedCount`) in `columns` × `rows`.
    public init(jpeg: [UInt8], width: Int, height: Int, tileCount: Int, omittedCount: Int, columns: Int, rows: Int) {
        (self.jpeg, self.width, self.height, self.tileCount, self.omittedCount, self.columns, self.rows) =
            (jpeg, width, height, tileCount, omittedCount, columns, rows)
    }

    /// The sheet a decoder composed for `plan` (its ``DecodeTask/contactSheet``
    /// answer: the sheet as the thumbnail), accepted only at exactly the size
    /// the plan's layout gives; the grid's numbers come from the plan, not
    /// from the decoder.
    public init(plan: ContactSheetPlan, composed: DecodedMedia) throws(MediaError) {
        guard case .made(let sheet) = composed.thumbnail else {
            if case .failed(let error) = composed.thumbnail { throw error }
            throw MediaError(.damaged, "the contact sheet was not drawn")
        }
        let expected = plan.size
        guard sheet.width == expected.width, sheet.height == expected.height else {
            throw MediaError(
                .damaged,
                "a contact sheet of \(sheet.width)×\(sheet.height) where \(expected.width)×\(expected.height) was planned"
            )
        }
        let drawn = max(1, plan.tiles.count)
        self.init(
            jpeg: sheet.jpeg, width: sheet.width, height: sheet.height, tileCount: plan.tiles.count,
            omittedCount: max(plan.total ?? 0, plan.tiles.count) - plan.tiles.count,
            columns: plan.layout.columns(for: drawn), rows: plan.layout.rows(for: drawn))
    }
}

/// What a contact sheet is drawn from: the tiles (at most the layout's
/// `maximumTiles`), an optional one-line title, the layout, and how many tiles
/// there were in all. Written to a file by the process that wants the sheet
/// and read by the decoder that draws it (``DecodeTask/contactSheet``), in a
/// small binary form of its own (``encoded()``, ``init(decoding:)``): the
/// pixels are most of it, and JSON would triple them.
public struct ContactSheetPlan: Sendable, Hashable {
    /// The tiles drawn, in order.
    public var tiles: [ContactSheetTile]
    /// The line above the grid, if any.
    public var title: String?
    /// The geometry.
    public var layout: ContactSheetLayout
    /// Tiles in all, when only the first were made (the rest count as omitted).
    public var total: Int?

    /// A plan of the first `layout.maximumTiles` of `tiles`.
    public init(
        tiles: [ContactSheetTile], title: String? = nil, layout: ContactSheetLayout = ContactSheetLayout(),
        total: Int? = nil
    ) {
        self.tiles = Array(tiles.prefix(max(1, layout.maximumTiles)))
        self.title = title
        self.layout = layout
        self.total = total
    }

    /// The size of the sheet this plan draws.
    public var size: (width: Int, height: Int) { layout.sheetSize(tileCount: tiles.count, titled: title != nil) }

    /// The largest plan read: 10,000 tiles, 4096 bytes of text in each string,
    /// and each tile's pixels at most 1024 on a side.
    public static let maximumTiles = 10_000
    static let maximumText = 4096
    static let maximumSide = 1024
    static let magic = Array("share-contact-sheet-1\n".utf8)

    /// The plan as bytes (``init(decoding:)`` reads them back).
    public func encoded() -> [UInt8] {
        var out = Self.magic
        func int(_ value: Int) { withUnsafeBytes(of: Int64(value).littleEndian) { out.append(contentsOf: $0) } }
        func text(_ value: String) {
            let bytes = Array(value.utf8.prefix(Self.maximumText))
            int(bytes.count)
            out += bytes
        }
        for value in [
            layout.cellSize, layout.captionHeight, layout.spacing, layout.titleHeight, layout.columns ?? -1,
            layout.maximumColumns, layout.maximumTiles, layout.quality, total ?? -1,
        ] {
            int(value)
        }
        int(title == nil ? 0 : 1)
        text(title ?? "")
        int(tiles.count)
        for tile in tiles {
            text(tile.caption)
            switch tile.picture {
            case .pixels(let pixels):
                int(0)
                int(pixels.width)
                int(pixels.height)
                for row in 0..<pixels.height {
                    let start = row * pixels.stride
                    out += pixels.bytes[start..<start + pixels.width * 3]
                }
            case .placeholder(let label):
                int(1)
                text(label)
            case .failed(let label):
                int(2)
                text(label)
            }
        }
        return out
    }

    /// Reads a plan ``encoded()`` wrote, refusing one out of bounds (a layout
    /// of cells from 16 to 1024 pixels, at most 100 columns, more tiles than
    /// ``maximumTiles``, text longer than 4096 bytes or not UTF-8, pixels
    /// larger than the picture box or shorter than their size says).
    public init(decoding bytes: [UInt8]) throws(MediaError) {
        var reader = PlanReader(bytes: bytes)
        guard bytes.starts(with: Self.magic) else { throw MediaError(.damaged, "not a contact sheet plan") }
        reader.offset = Self.magic.count
        let numbers = try (0..<9).map { _ throws(MediaError) in try reader.int() }
        let layout = ContactSheetLayout(
            cellSize: numbers[0], captionHeight: numbers[1], spacing: numbers[2], titleHeight: numbers[3],
            columns: numbers[4] < 0 ? nil : numbers[4],
            maximumColumns: numbers[5], maximumTiles: numbers[6], quality: numbers[7])
        guard (16...1024).contains(layout.cellSize), (0...256).contains(layout.captionHeight),
            (0...64).contains(layout.spacing),
            (0...256).contains(layout.titleHeight), (1...100).contains(layout.columns ?? 1),
            (1...100).contains(layout.maximumColumns),
            (1...Self.maximumTiles).contains(layout.maximumTiles), (1...100).contains(layout.quality), numbers[8] >= -1
        else { throw MediaError(.damaged, "a contact sheet plan with a layout out of bounds") }
        let titled = try reader.int()
        let title = try reader.text()
        let count = try reader.int()
        guard (0...layout.maximumTiles).contains(count) else {
            throw MediaError(.damaged, "a contact sheet plan of \(count) tiles")
        }
        var tiles: [ContactSheetTile] = []
        tiles.reserveCapacity(count)
        for _ in 0..<count {
            let caption = try reader.text()
            switch try reader.int() {
            case 0:
                let width = try reader.int()
                let height = try reader.int()
                guard (1...min(Self.maximumSide, layout.pictureBox)).contains(width),
                    (1...min(Self.maximumSide, layout.pictureBox)).contains(height),
                    let pixels = DecodedPixels(
                        width: width, height: height, stride: width * 3, bytes: try reader.take(width * height * 3))
                else { throw MediaError(.damaged, "a contact sheet plan with a tile's pixels out of bounds") }
                tiles.append(ContactSheetTile(picture: .pixels(pixels), caption: caption))
            case 1: tiles.append(ContactSheetTile(picture: .placeholder(try reader.text()), caption: caption))
            case 2: tiles.append(ContactSheetTile(picture: .failed(try reader.text()), caption: caption))
            default: throw MediaError(.damaged, "a contact sheet plan with an unknown kind of tile")
            }
        }
        guard reader.offset == bytes.count else {
            throw MediaError(.damaged, "a contact sheet plan with bytes after its last tile")
        }
        self.init(
            tiles: tiles, title: titled == 0 ? nil : title, layout: layout, total: numbers[8] < 0 ? nil : numbers[8])
    }
}

/// Reads a plan's numbers, strings and pixels, each checked against what is left.
private struct PlanReader {
    let bytes: [UInt8]
    var offset = 0

    mutating func int() throws(MediaError) -> Int {
        let raw = try take(8)
        let value = raw.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard let int = Int(exactly: Int64(bitPattern: value)) else {
            throw MediaError(.damaged, "a contact sheet plan with a number out of range")
        }
        return int
    }

    mutating func text() throws(MediaError) -> String {
        let length = try int()
        guard (0...ContactSheetPlan.maximumText).contains(length),
            let text = String(validating: try take(length), as: UTF8.self)
        else {
            throw MediaError(.damaged, "a contact sheet plan with text that is too long or not UTF-8")
        }
        return text
    }

    mutating func take(_ count: Int) throws(MediaError) -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else {
            throw MediaError(.damaged, "a contact sheet plan cut short")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}
