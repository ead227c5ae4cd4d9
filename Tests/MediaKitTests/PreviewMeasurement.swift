import Foundation
import MediaFormats
import Testing

@testable import MediaKit

/// Not a test: the driver of BENCHMARKS.md's "Previews from one decode",
/// skipped unless `BENCH_FILE` and `BENCH_SIZES` (`360` or `360,1440`) are set;
/// then it makes the pictures `BENCH_RUNS` times (default 10) and prints
/// the time per item. Run the test binary itself under `/usr/bin/time -v` for
/// its peak memory (see BENCHMARKS.md for the commands).
@Suite struct PreviewMeasurement {
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["BENCH_FILE"] != nil,
            "a benchmark driver: set BENCH_FILE and BENCH_SIZES"))
    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let file = environment["BENCH_FILE"], let sizesText = environment["BENCH_SIZES"] else { return }
        let sizes = sizesText.split(separator: ",").compactMap { Int($0) }
        let runs = Int(environment["BENCH_RUNS"] ?? "10") ?? 10
        let start = Date()
        for _ in 0..<runs where !sizes.isEmpty {
            _ = try Thumbnailer.pictures(path: file, spec: ThumbnailSpec(), sizes: sizes, format: .jpeg)
        }
        print(
            "BENCH [\(sizesText)] \(runs) runs: \(Date().timeIntervalSince(start) / Double(max(runs, 1)) * 1000) ms per item"
        )
    }
}
