import Foundation

/// Sizes, durations and times as a person reads them in a report or a caption.
enum ReadableUnits {
    /// Decimal units, as file managers show them: `693 B`, `35.6 kB`, `1.2 MB`.
    static func bytes(_ count: Int64) -> String {
        guard count >= 1000 else { return "\(count) B" }
        var value = Double(count)
        for unit in ["kB", "MB", "GB", "TB"] {
            value /= 1000
            if value < 999.95 || unit == "TB" {
                return String(format: value < 9.995 ? "%.2f" : "%.1f", value) + " " + unit
            }
        }
        return "\(count) B"
    }

    /// Binary units, as sizes are given on a command line (`--max-item-size 8G`):
    /// `512 B`, `1 MiB`, `3.2 GiB` (a whole number shown without decimals).
    static func binaryBytes(_ count: Int64) -> String {
        guard count >= 1024 else { return "\(count) B" }
        var value = Double(count)
        for unit in ["KiB", "MiB", "GiB", "TiB"] {
            value /= 1024
            if value < 1023.95 || unit == "TiB" {
                return (value == value.rounded() ? String(Int64(value)) : String(format: "%.1f", value)) + " " + unit
            }
        }
        return "\(count) B"
    }

    /// A media duration: `0.4 s`, `2.0 s`, `1:05`, `1:02:03`.
    static func duration(milliseconds: Double) -> String {
        let seconds = max(0, milliseconds) / 1000
        if seconds < 60 { return String(format: "%.1f s", seconds) }
        let whole = Int(seconds.rounded())
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        return hours > 0
            ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }

    /// Processing time: `12 ms`, `1.35 s`.
    static func seconds(_ value: Double) -> String {
        value < 1 ? String(format: "%.0f ms", value * 1000) : String(format: "%.2f s", value)
    }

    /// `30 fps`, `29.97 fps`, `239.76 fps`.
    static func frameRate(_ rate: Double) -> String {
        let whole = rate.rounded()
        return (abs(rate - whole) < 0.005 ? String(format: "%.0f", whole) : String(format: "%.2f", rate)) + " fps"
    }

    /// `640 × 480`.
    static func dimensions(width: Int, height: Int) -> String { "\(width) × \(height)" }
}
