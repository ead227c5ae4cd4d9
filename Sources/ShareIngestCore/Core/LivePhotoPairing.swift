import Foundation
import MediaFormats
import ShareManifest

/// The Live Photo an item is half of: both halves stay items of their own, and
/// each carries the same link.
struct LivePhotoLink: Sendable, Hashable, Codable {
    /// The still's copy in the container.
    var photo: String
    /// The movie's copy in the container.
    var video: String
    /// The content identifier both carry, when they were paired by it.
    var contentIdentifier: String?
    /// How they were paired.
    var pairedBy: SharedMediaFile.LivePhoto.Pairing
}

extension ItemState {
    /// What the stores index so the fan-in finds a batch's Live Photo halves
    /// without reading every item: Apple's content identifier (of a still or a
    /// movie), and, for a still that could be a Live Photo's (HEIC, HEIF, JPEG)
    /// or a movie short enough to be one, both with a capture time, the name
    /// they would share (folder and base name, lower case; a movie's `_HEVC`
    /// suffix dropped).
    var livePhotoKeys: (identifier: String?, name: String?) {
        guard failure == nil, let moments, let format = sniffed?.format else { return (nil, nil) }
        let still = type == .image && ["heic", "heif", "jpeg"].contains(format.id)
        let movie = type == .video && ["mov", "mp4", "m4v"].contains(format.id)
        guard still || movie else { return (nil, nil) }
        var name: String?
        if moments.captureTime != nil,
            still
                || (durationMilliseconds ?? .infinity) <= PipelineDefinition.MotionSettings.livePhotoMaximumSeconds
                    * 1000
        {
            name = LivePhotoPairing.pairingName(label: label, isMovie: movie)
        }
        return (moments.contentIdentifier, name)
    }
}

/// Pairs the stills and movies of one batch that are the two halves of a Live
/// Photo, in the fan-in (both modes): by Apple's content identifier (the still's
/// maker note tag 0x0011, the movie's `com.apple.quicktime.content.identifier`),
/// else by the same name in the same folder (`IMG_0001.HEIC` with `IMG_0001.MOV`
/// or `IMG_0001_HEVC.MOV`) together with a movie of at most 3.2 s and capture
/// times within 2 s. A name alone never pairs; two different identifiers never
/// pair. Candidates come from the store's index (``ItemStore/livePhotoCandidates(for:)``).
struct LivePhotoPairing {
    /// The link of each paired item, by index.
    let links: [Int: LivePhotoLink]

    /// Pairs `candidates`, each as the fan-in will deliver it (`final`: nil for
    /// one that will not be delivered, e.g. a duplicate the pipeline skips).
    init(candidates: [ItemState], final: (ItemState) -> ItemState?) {
        let items = candidates.compactMap(final).filter { $0.failure == nil && $0.copyPath != nil }.sorted {
            $0.index < $1.index
        }
        let stills = items.filter { $0.type == .image }
        let movies = items.filter { $0.type == .video }
        var links: [Int: LivePhotoLink] = [:]
        func pair(_ still: ItemState, _ movie: ItemState, by: SharedMediaFile.LivePhoto.Pairing) {
            let link = LivePhotoLink(
                photo: still.copyPath ?? "", video: movie.copyPath ?? "",
                contentIdentifier: by == .contentIdentifier ? still.moments?.contentIdentifier : nil, pairedBy: by)
            links[still.index] = link
            links[movie.index] = link
        }
        // By content identifier: the first still with the first movie, and so on.
        var moviesByIdentifier: [String: [ItemState]] = [:]
        for movie in movies {
            if let id = movie.moments?.contentIdentifier { moviesByIdentifier[id, default: []].append(movie) }
        }
        for still in stills {
            guard let id = still.moments?.contentIdentifier, var waiting = moviesByIdentifier[id], !waiting.isEmpty
            else { continue }
            pair(still, waiting.removeFirst(), by: .contentIdentifier)
            moviesByIdentifier[id] = waiting
        }
        // By name, length and capture time, among those still unpaired.
        var moviesByName: [String: [ItemState]] = [:]
        for movie in movies where links[movie.index] == nil {
            if let name = movie.livePhotoKeys.name { moviesByName[name, default: []].append(movie) }
        }
        for still in stills where links[still.index] == nil {
            guard let name = still.livePhotoKeys.name, let waiting = moviesByName[name],
                let match = waiting.firstIndex(where: { links[$0.index] == nil && Self.matchByNameAndTime(still, $0) })
            else { continue }
            pair(still, waiting[match], by: .nameAndTime)
        }
        self.links = links
    }

    /// True when a still and a movie of the same name may be one Live Photo: no
    /// identifiers that differ, a movie of at most 3.2 s, capture times within 2 s.
    static func matchByNameAndTime(_ still: ItemState, _ movie: ItemState) -> Bool {
        if let a = still.moments?.contentIdentifier, let b = movie.moments?.contentIdentifier, a != b { return false }
        guard let duration = movie.durationMilliseconds,
            duration <= PipelineDefinition.MotionSettings.livePhotoMaximumSeconds * 1000,
            let stillTime = CaptureDate.comparableTime(of: still),
            let movieTime = CaptureDate.comparableTime(of: movie),
            let gap = stillTime.distance(to: movieTime)
        else { return false }
        return gap <= PipelineDefinition.MotionSettings.livePhotoMaximumGap
    }

    /// `holiday/IMG_0001.HEIC` → `holiday/img_0001`; a movie's `IMG_0001_HEVC.MOV` → `holiday/img_0001`.
    static func pairingName(label: String, isMovie: Bool) -> String? {
        let slash = label.lastIndex(of: "/")
        let folder = slash.map { String(label[...$0]) } ?? ""
        let file = slash.map { String(label[label.index(after: $0)...]) } ?? label
        guard let dot = file.lastIndex(of: "."), dot != file.startIndex else { return nil }
        var base = file[..<dot].lowercased()
        if isMovie, base.hasSuffix("_hevc") { base.removeLast("_hevc".count) }
        guard !base.isEmpty else { return nil }
        return folder + base
    }
}
