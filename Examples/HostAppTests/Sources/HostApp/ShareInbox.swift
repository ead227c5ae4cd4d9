import Foundation
import ShareManifest

/// One row of the app's "Received" screen.
public struct DisplayItem: Equatable, Sendable {
    /// The kinds of row, each drawn its own way.
    public enum Kind: String, Equatable, Sendable {
        case photo, video, document, text, link
    }

    /// How the row is drawn.
    public var kind: Kind
    /// The original file name, or the text or link itself.
    public var title: String
    /// The shared file in the container (nil for text and links).
    public var fileURL: URL?
    /// The thumbnail to show, if the share has one.
    public var thumbnailURL: URL?
    /// A video's length in seconds.
    public var durationSeconds: Double?

    /// A row.
    public init(
        kind: Kind, title: String, fileURL: URL? = nil, thumbnailURL: URL? = nil, durationSeconds: Double? = nil
    ) {
        self.kind = kind
        self.title = title
        self.fileURL = fileURL
        self.thumbnailURL = thumbnailURL
        self.durationSeconds = durationSeconds
    }
}

/// What the app does when the share extension opens it with
/// `ShareMedia://dataUrl=<key>#<kind>`: read the share from the shared container
/// (once), and turn its entries into rows.
public struct ShareInbox: Sendable {
    /// The app group's shared container.
    public let container: ContainerDirectory

    /// An inbox reading shares from `container`.
    public init(container: ContainerDirectory) {
        self.container = container
    }

    /// Handles the redirect URL: opens and consumes the share it names (so it is
    /// shown once) and maps its entries to rows. A share whose manifest names a
    /// file outside the container, or was already handled, is refused.
    public func handle(url: String) throws(RedirectError) -> [DisplayItem] {
        let share = try RedirectHandler(container: container).open(url, consume: true)
        return share.entries.map(Self.displayItem)
    }

    static func displayItem(_ entry: SharedMediaFile) -> DisplayItem {
        let file = entry.fileURL
        let title = entry.fileName ?? file?.lastPathComponent ?? entry.path
        let thumbnail = entry.thumbnail.flatMap(URL.init(string:))
        switch entry.type {
        case .image:
            return DisplayItem(kind: .photo, title: title, fileURL: file, thumbnailURL: thumbnail ?? file)
        case .video:
            return DisplayItem(
                kind: .video, title: title, fileURL: file, thumbnailURL: thumbnail,
                durationSeconds: entry.duration.map { $0 / 1000 })
        case .file:
            return DisplayItem(kind: .document, title: title, fileURL: file, thumbnailURL: thumbnail)
        case .text:
            return DisplayItem(kind: .text, title: entry.path)
        case .url:
            return DisplayItem(kind: .link, title: entry.path)
        }
    }
}
