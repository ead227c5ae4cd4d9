import Foundation
import MediaFormats
import ShareIngest
import ShareManifest
import Testing

@testable import ShareIngestCore

/// The fan-in's rules that compare capture times (issue 54 part 2): the Live
/// Photo window (2 s, either way), the RAW+JPEG and edit gaps (1 s), a burst's
/// minute from its cover and its cover (the earliest), with times as phones
/// write them: each with its offset (EXIF `OffsetTimeOriginal`, QuickTime's
/// creation date), so the rules compare instants (`CaptureTime.distance`'s
/// `utc` branch), and a wall clock made an instant by its place's time zone.
/// Each rule has its breakage in scripts/mutations/ (320–329).
@Suite struct CaptureGapRulesTests {
    /// 2024-05-01 12:00:00 UTC.
    static let noon = 1_714_564_800.0

    /// A time taken `seconds` after noon UTC, written at `offset` hours (its wall clock and its instant).
    static func time(_ seconds: Double, offset: Double = 2, source: CaptureTime.Source = .exif) -> CaptureTime {
        CaptureTime(local: noon + seconds + offset * 3600, utc: noon + seconds, source: source)
    }

    static func item(
        _ index: Int, _ name: String, format: MediaFormat, time: CaptureTime?, type: SharedMediaType = .image,
        duration: Double? = nil,
        position: CapturePosition? = nil
    ) -> ItemState {
        var state = ItemState(index: index, id: UUID(), source: .text(""), label: "drop/" + name)
        state.type = type
        state.copyPath = "/c/\(name)"
        state.sniffed = SniffedContent(
            format: format, fileExtension: "x", mimeType: format.mimeType, recognised: true, declaredExtension: nil,
            contradictedFormat: nil)
        state.moments = MomentFacts(captureTime: time, position: position)
        state.durationMilliseconds = duration
        return state
    }

    static func pairs(_ still: CaptureTime?, _ movie: CaptureTime?, stillPosition: CapturePosition? = nil) -> Bool {
        let a = item(0, "IMG_0001.JPG", format: .jpeg, time: still, position: stillPosition)
        let b = item(1, "IMG_0001.MOV", format: .mov, time: movie, type: .video, duration: 2000)
        return LivePhotoPairing(candidates: [a, b], final: { $0 }).links.count == 2
    }

    /// Live Photo window, the movie after the still: within 2 s pairs, a minute later never.
    @Test func aLivePhotosMovieAfterItsStillPairsOnlyWithinTwoSecondsOfItsInstant() {
        #expect(Self.pairs(Self.time(0), Self.time(1.5, source: .quicktime)))
        #expect(!Self.pairs(Self.time(0), Self.time(60, source: .quicktime)), "a movie a minute after its still paired")
    }

    /// Live Photo window, the movie before the still: within 2 s pairs, a minute earlier never.
    @Test func aLivePhotosMovieBeforeItsStillPairsOnlyWithinTwoSecondsOfItsInstant() {
        #expect(Self.pairs(Self.time(0), Self.time(-1.5, source: .quicktime)))
        #expect(
            !Self.pairs(Self.time(0), Self.time(-60, source: .quicktime)), "a movie a minute before its still paired")
    }

    /// Instants, not wall clocks: a still written at +02:00 and a movie at UTC
    /// (clocks two hours apart) taken the same second pair; two clocks that
    /// read the same but are an hour apart (+02:00 and +01:00) do not.
    @Test func theLivePhotoWindowComparesInstantsNotClocks() {
        #expect(Self.pairs(Self.time(0, offset: 2), Self.time(0.5, offset: 0, source: .quicktime)))
        let still = CaptureTime(local: Self.noon, utc: Self.noon - 7200, source: .exif)
        let movie = CaptureTime(local: Self.noon, utc: Self.noon - 3600, source: .quicktime)
        #expect(!Self.pairs(still, movie), "clocks that read the same an hour apart paired")
    }

    /// A still with a wall clock only (no OffsetTimeOriginal) but a position:
    /// its place's offset makes it an instant, compared with the movie's (mvhd, UTC).
    @Test func aWallClockAtAPlaceIsComparedAsAnInstant() {
        let paris = CapturePosition(latitude: 48.8584, longitude: 2.2945)
        // 14:00:00 in Paris in May is 12:00:00 UTC.
        let still = CaptureTime(local: Self.noon + 7200, source: .exif)
        #expect(Self.pairs(still, CaptureTime(utc: Self.noon + 1, source: .mp4), stillPosition: paris))
        #expect(!Self.pairs(still, CaptureTime(utc: Self.noon + 3600, source: .mp4), stillPosition: paris))
    }

    static func groups(_ items: [ItemState]) -> [String: SharedMediaFile.Group] {
        let grouping = ShotGrouping(candidates: items, final: { $0 })
        var found: [String: SharedMediaFile.Group] = [:]
        for item in items {
            if let group = grouping.groups[item.index] { found[item.label.lastPathComponentOfPath] = group }
        }
        return found
    }

    /// RAW+JPEG: the same stem and capture instants within 1 s group; 5 s apart never.
    @Test func aRAWAndItsJPEGGroupOnlyWithinOneSecondOfTheirInstants() {
        let together = Self.groups([
            Self.item(0, "IMG_0100.CR2", format: .cr2, time: Self.time(0)),
            Self.item(1, "IMG_0100.JPG", format: .jpeg, time: Self.time(0.5)),
        ])
        #expect(together["IMG_0100.CR2"]?.role == .raw && together["IMG_0100.JPG"]?.role == .jpeg, "\(together)")
        let apart = Self.groups([
            Self.item(0, "IMG_0100.CR2", format: .cr2, time: Self.time(0)),
            Self.item(1, "IMG_0100.JPG", format: .jpeg, time: Self.time(5)),
        ])
        #expect(apart.isEmpty, "a RAW and a JPEG 5 s apart grouped: \(apart)")
        // The same instant at two offsets (a camera set to UTC, a JPEG re-dated to local time) is one shot.
        let zones = Self.groups([
            Self.item(0, "IMG_0100.CR2", format: .cr2, time: Self.time(0, offset: 0)),
            Self.item(1, "IMG_0100.JPG", format: .jpeg, time: Self.time(0, offset: 2)),
        ])
        #expect(zones.count == 2, "\(zones)")
    }

    /// Edit: an original and its edited render within 1 s group; 5 s apart never.
    @Test func anOriginalAndItsEditGroupOnlyWithinOneSecondOfTheirInstants() {
        let together = Self.groups([
            Self.item(0, "IMG_1234.HEIC", format: .heic, time: Self.time(0)),
            Self.item(1, "IMG_E1234.JPG", format: .jpeg, time: Self.time(0)),
        ])
        #expect(
            together["IMG_1234.HEIC"]?.role == .original && together["IMG_E1234.JPG"]?.role == .edited, "\(together)")
        let apart = Self.groups([
            Self.item(0, "IMG_1234.HEIC", format: .heic, time: Self.time(0)),
            Self.item(1, "IMG_E1234.JPG", format: .jpeg, time: Self.time(5)),
        ])
        #expect(apart.isEmpty, "an original and an edit 5 s apart grouped: \(apart)")
    }

    /// Burst by name: frames within a minute of the cover's instant are frames; two minutes away, none.
    @Test func aBurstsFramesAreWithinAMinuteOfItsCover() {
        let found = Self.groups([
            Self.item(0, "20240501_120000_BURST001_COVER.jpg", format: .jpeg, time: Self.time(0)),
            Self.item(1, "20240501_120000_BURST002.jpg", format: .jpeg, time: Self.time(30)),
            Self.item(2, "20240501_120000_BURST003.jpg", format: .jpeg, time: Self.time(120)),
        ])
        #expect(
            found["20240501_120000_BURST001_COVER.jpg"]?.role == .cover
                && found["20240501_120000_BURST002.jpg"]?.role == .frame, "\(found)")
        #expect(
            found["20240501_120000_BURST003.jpg"] == nil, "a frame two minutes from its cover is a member: \(found)")
    }

    /// An Apple burst's cover is its earliest frame by instant: a frame whose
    /// clock reads earlier but was taken later (another offset) is not.
    @Test func anAppleBurstsCoverIsItsEarliestInstant() {
        func frame(_ index: Int, _ name: String, _ time: CaptureTime) -> ItemState {
            var item = Self.item(index, name, format: .jpeg, time: time)
            item.moments?.burstIdentifier = "6E3F0D4A-1C2B-4E5F-9A8B-7C6D5E4F3A2B"
            return item
        }
        var grouping = ShotGrouping()
        // IMG_0102 reads 12:00:10 at +02:00 (10:00:10 UTC); IMG_0101 reads 11:00:05 at +00:00... taken later (11:00:05 UTC).
        let later = frame(
            0, "IMG_0101.JPG", CaptureTime(local: Self.noon - 3600 + 5, utc: Self.noon - 3600 + 5, source: .exif))
        let earlier = frame(
            1, "IMG_0102.JPG", CaptureTime(local: Self.noon + 10, utc: Self.noon - 7200 + 10, source: .exif))
        grouping.addBurst([later, earlier], final: { $0 })
        #expect(grouping.groups[1]?.role == .cover && grouping.groups[0]?.role == .frame, "\(grouping.groups)")
    }

    /// A named burst's cover is the frame named so (`…_COVER`), else the first.
    @Test func aBurstsCoverIsTheFrameNamedSo() {
        let found = Self.groups([
            Self.item(0, "20240501_120000_BURST001.jpg", format: .jpeg, time: Self.time(0)),
            Self.item(1, "20240501_120000_BURST002_COVER.jpg", format: .jpeg, time: Self.time(1)),
        ])
        #expect(
            found["20240501_120000_BURST002_COVER.jpg"]?.role == .cover
                && found["20240501_120000_BURST001.jpg"]?.role == .frame, "\(found)")
    }
}
