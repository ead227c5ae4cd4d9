// swift-tools-version:6.0
// share-ingest: a media ingestion pipeline (copy, sniff, thumbnail, probe,
// manifest) for shared photos, videos, files, text and links.
import PackageDescription

let package = Package(
    name: "share-ingest",
    products: [
        .library(name: "ShareIngest", targets: ["ShareIngest"]),
        .executable(name: "share", targets: ["share"]),
    ],
    targets: [
        // C libraries from Debian, one system-library target each.
        .systemLibrary(
            name: "CVips", pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]),
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswscale-dev", "libavutil-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CPostgres", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        // Fixed-arity wrappers for varargs functions and function-like macros.
        .target(name: "CShims", dependencies: ["CVips", "CFFmpeg"]),

        // Swift over the C libraries: images, video, content sniffing.
        .target(name: "MediaKit", dependencies: ["CVips", "CFFmpeg", "CShims"]),
        // The pipeline: model, stages, runner, container, journal. No C in sight
        // except the SQLite journal's own binding.
        .target(name: "ShareIngest", dependencies: ["MediaKit", "CShims", "CSQLite", "CPostgres"]),
        // The CLI: arguments and terminal output only.
        .executableTarget(name: "share", dependencies: ["ShareIngest"]),

        .target(name: "TestSupport", dependencies: ["ShareIngest"], path: "Tests/TestSupport"),
        .testTarget(name: "MediaKitTests", dependencies: ["MediaKit", "TestSupport"]),
        .testTarget(name: "ShareIngestTests", dependencies: ["ShareIngest", "TestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
