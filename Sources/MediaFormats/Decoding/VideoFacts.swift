// A video's playback facts, read by the decoder from the untrusted container
// and stream (libavformat) and checked by the parent (``VideoFacts/problem``)
// before the manifest's `video` carries them.

/// How a video plays (v2 `video`).
public struct VideoFacts: Sendable, Codable, Hashable {
    /// The video codec's short name (`h264`, `hevc`, `vp9`, `av1`, `mpeg1video`…).
    public var codec: String
    /// Frames per second: the typical spacing of the first frames' presentation times.
    public var frameRate: Double?
    /// True when those times are not evenly spaced (judged from the packets, not the container's claim).
    public var variableFrameRate: Bool?
    /// The rate the camera captured at, when the file says (`com.android.capture.fps`; an
    /// Apple slow-motion movie's own rate).
    public var captureFrameRate: Double?
    /// True for a slow-motion movie: Apple's `com.apple.quicktime.full-frame-rate-playback-intent`
    /// 0, or an Android capture rate above the file's frame rate.
    public var slowMotion: Bool?
    /// `pq`, `hlg` or `dolbyVision`; nil for SDR.
    public var hdr: String?
    /// The Dolby Vision profile, with `hdr` `dolbyVision`.
    public var dolbyVisionProfile: Int?
    /// Clockwise degrees to rotate for display (0, 90, 180, 270).
    public var rotation: Int
    /// The first audio stream's codec (`aac`, `opus`…); nil when it has none.
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

    /// The `hdr` values.
    public static let hdrKinds: Set<String> = ["pq", "hlg", "dolbyVision"]

    /// What is wrong with facts a decoder reported, for the parent's check; nil when they are sane.
    public var problem: String? {
        func isName(_ text: String) -> Bool {
            (1...32).contains(text.utf8.count)
                && text.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
        }
        if !isName(codec) { return "a video codec name of \(codec.utf8.count) bytes that is not [a-z0-9_]" }
        if let audio, !isName(audio) { return "an audio codec name that is not [a-z0-9_]" }
        for (name, rate) in [("frame rate", frameRate), ("capture frame rate", captureFrameRate)] {
            if let rate, !(rate.isFinite && rate > 0 && rate <= 10_000) { return "a \(name) of \(rate)" }
        }
        if let hdr, !Self.hdrKinds.contains(hdr) { return "an HDR kind that is none of pq, hlg, dolbyVision" }
        if let profile = dolbyVisionProfile, !(hdr == "dolbyVision" && (0...20).contains(profile)) {
            return "a Dolby Vision profile of \(profile)"
        }
        if ![0, 90, 180, 270].contains(rotation) { return "a rotation of \(rotation)" }
        return nil
    }
}
