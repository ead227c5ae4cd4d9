// swift-tools-version:6.0
// share-ingest: a media ingestion pipeline (copy, sniff, thumbnail, probe,
// manifest) for shared photos, videos, files, text and links.
import PackageDescription

let package = Package(
    name: "share-ingest",
    products: [
        // What a host app links to read shares: no C library, no Linux-only API.
        .library(name: "ShareManifest", targets: ["ShareManifest"]),
        // What a file is from its bytes, and the decode contract (pure Swift).
        .library(name: "MediaFormats", targets: ["MediaFormats"]),
        // The pipeline, for tools and for host apps' tests.
        .library(name: "ShareIngest", targets: ["ShareIngest"]),
        // Decoding in sandboxed helper processes (the `share-helper` executable):
        // the parent's side links no decoder; DecoderHelperKit (Isolation.decoder,
        // whose `none` decodes in-process, and the helper's side) links them.
        .library(name: "DecoderIsolation", targets: ["DecoderIsolation", "DecoderHelperKit"]),
        .executable(name: "share", targets: ["share"]),
        // The decoder helper `share` starts (its template, and the helpers forked
        // from it): the one executable that links libvips, libav, libheif and libtiff.
        .executable(name: "share-helper", targets: ["share-helper"]),
    ],
    targets: [
        // C libraries from Debian, one system-library target each.
        .systemLibrary(
            // pkg-config's own name for libvips would add OpenEXR's -pthread, which SwiftPM
            // refuses (a warning in every package that depends on this one): libvips' headers
            // are in /usr/include, and GObject's flags are all they need besides (issue 61, finding 13).
            name: "CVips", pkgConfig: "gobject-2.0",
            providers: [.apt(["libvips-dev"])]),
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswscale-dev", "libavutil-dev"])]),
        .systemLibrary(
            name: "CHeif", pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"])]),
        .systemLibrary(
            name: "CTIFF", pkgConfig: "libtiff-4",
            providers: [.apt(["libtiff-dev"])]),
        .systemLibrary(
            name: "CLcms2", pkgConfig: "lcms2",
            providers: [.apt(["liblcms2-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        // libpq's API (libpq-dev's header), loaded at run time by the commands
        // that name a database: `share` links no libpq (issue 59).
        .target(name: "CPostgres", linkerSettings: [.linkedLibrary("dl")]),
        .systemLibrary(
            name: "CNettle", pkgConfig: "nettle",
            providers: [.apt(["nettle-dev"])]),
        // Fixed-arity wrappers for libvips' varargs functions and libav's
        // function-like macros, and LittleCMS's sRGB conversion with its transforms kept.
        .target(
            name: "CShims", dependencies: ["CVips", "CFFmpeg", "CTIFF", "CLcms2"],
            linkerSettings: [.linkedLibrary("gmodule-2.0")]
        ),
        // Linux calls glibc hides from Swift (copy_file_range, renameat2,
        // SCM_RIGHTS, seccomp and Landlock, spawning helpers).
        .target(name: "CSystem"),
        // The system-call funnel every target uses: EINTR retried, typed errors
        // naming call, path and errno, descriptors owned by types.
        .target(name: "SystemCalls", dependencies: ["CSystem"]),
        // The time-zone grid (scripts/build-time-zone-grid.py) linked into the binary.
        .target(name: "CTimeZoneGrid", exclude: ["time_zone_grid.c.bin"]),
        // The IANA zone at a position (the grid) and a zone's offsets (the system's tzdata).
        .target(name: "PlaceTimeZones", dependencies: ["CTimeZoneGrid", "SystemCalls"]),
        // SHA-256 over Nettle: content identity, computed while copying.
        .target(name: "ContentHash", dependencies: ["CNettle"]),

        // Pure Swift, no C: the manifest a host app reads (model, both schemas,
        // redirect URL, container layout, RedirectHandler).
        .target(name: "ShareManifest", dependencies: ["SystemCalls"]),
        // Pure Swift, no C: formats from magic bytes, thumbnail settings, and the
        // decode contract (request, facts, typed errors) every decoder implements.
        .target(name: "MediaFormats"),
        // Decoding with libvips, libav, libheif and libtiff, behind MediaFormats' MediaDecoder.
        .target(
            name: "MediaKit",
            dependencies: ["MediaFormats", "SystemCalls", "CVips", "CFFmpeg", "CHeif", "CTIFF", "CShims"]),
        // A MediaDecoder that decodes in a pool of sandboxed helper processes (the
        // parent's side: no decoding library).
        .target(name: "DecoderIsolation", dependencies: ["MediaFormats", "SystemCalls", "CSystem"]),
        // The helper's side (`share-helper decode-helper`: template, sandbox entry,
        // request loop over MediaKit's InProcessDecoder) and Isolation.decoder.
        .target(
            name: "DecoderHelperKit",
            dependencies: ["DecoderIsolation", "MediaFormats", "MediaKit", "SystemCalls", "CShims", "CSystem"]),
        // The helper executable.
        .executableTarget(name: "share-helper", dependencies: ["DecoderHelperKit", "SystemCalls"]),
        // The pipeline: stages, runner, journal, watch, distributed workers. It
        // links no decoder: its decoder is given (sandboxed helpers, for `share`).
        .target(
            name: "ShareIngestCore",
            dependencies: [
                "ShareManifest", "MediaFormats", "SystemCalls", "ContentHash", "CSQLite", "CPostgres", "PlaceTimeZones",
            ],
            plugins: ["EmbedPipelines"]),
        // The library host apps' tests use: ShareIngestCore, re-exported, with
        // MediaKit's in-process decoder as its default.
        .target(name: "ShareIngest", dependencies: ["ShareIngestCore", "ShareManifest", "MediaFormats", "MediaKit"]),
        // pipelines/*.json compiled into ShareIngest (the built-in pipelines).
        .plugin(name: "EmbedPipelines", capability: .buildTool(), dependencies: ["EmbedPipelinesTool"]),
        .executableTarget(name: "EmbedPipelinesTool"),
        // The CLI: arguments and terminal output only.
        .executableTarget(
            name: "share",
            dependencies: ["ShareIngestCore", "ShareManifest", "MediaFormats", "DecoderIsolation", "SystemCalls"]),

        // Fuzz targets over the pure modules (and the pipeline loader): ordinary
        // executables that replay their corpus; scripts/fuzz.sh builds them with libFuzzer.
        .target(name: "FuzzReplay", path: "Fuzz/FuzzReplay"),
        .executableTarget(
            name: "FuzzRedirectURL", dependencies: ["FuzzReplay", "ShareManifest"], path: "Fuzz/FuzzRedirectURL"),
        .executableTarget(
            name: "FuzzManifest", dependencies: ["FuzzReplay", "ShareManifest"], path: "Fuzz/FuzzManifest"),
        .executableTarget(name: "FuzzSniffer", dependencies: ["FuzzReplay", "MediaFormats"], path: "Fuzz/FuzzSniffer"),
        .executableTarget(name: "FuzzHEIF", dependencies: ["FuzzReplay", "MediaFormats"], path: "Fuzz/FuzzHEIF"),
        .executableTarget(name: "FuzzRAW", dependencies: ["FuzzReplay", "MediaFormats"], path: "Fuzz/FuzzRAW"),
        .executableTarget(name: "FuzzMoments", dependencies: ["FuzzReplay", "MediaFormats"], path: "Fuzz/FuzzMoments"),
        .executableTarget(
            name: "FuzzPipeline", dependencies: ["FuzzReplay", "ShareIngestCore"], path: "Fuzz/FuzzPipeline"),
        // The parsers of untrusted bytes added since (issue 51): the Takeout JSON
        // reader, the XMP, EXIF, ISO-BMFF and PNG location scanners, the maker-note
        // burst reader, and the sidecars' content sniff. FuzzChecks: what every
        // location scan must answer.
        .target(name: "FuzzChecks", dependencies: ["MediaFormats"], path: "Fuzz/FuzzChecks"),
        .executableTarget(
            name: "FuzzTakeout", dependencies: ["FuzzReplay", "FuzzChecks", "MediaFormats"], path: "Fuzz/FuzzTakeout"),
        .executableTarget(name: "FuzzXMP", dependencies: ["FuzzReplay", "MediaFormats"], path: "Fuzz/FuzzXMP"),
        .executableTarget(
            name: "FuzzEXIF", dependencies: ["FuzzReplay", "FuzzChecks", "MediaFormats"], path: "Fuzz/FuzzEXIF"),
        .executableTarget(
            name: "FuzzISOBMFF", dependencies: ["FuzzReplay", "FuzzChecks", "MediaFormats"], path: "Fuzz/FuzzISOBMFF"),
        .executableTarget(
            name: "FuzzPNG", dependencies: ["FuzzReplay", "FuzzChecks", "MediaFormats"], path: "Fuzz/FuzzPNG"),
        .executableTarget(name: "FuzzBurst", dependencies: ["FuzzReplay", "MediaFormats"], path: "Fuzz/FuzzBurst"),
        .executableTarget(
            name: "FuzzSidecar", dependencies: ["FuzzReplay", "ShareIngestCore"], path: "Fuzz/FuzzSidecar"),

        // A host app's ingest in a process of its own (the library's in-process
        // decoder), for the tests of a process that dies while decoding.
        .executableTarget(
            name: "InProcessIngest", dependencies: ["ShareIngest", "ShareManifest", "SystemCalls"],
            path: "Tests/InProcessIngest"),
        .target(
            name: "TestSupport", dependencies: ["ShareIngest", "ShareIngestCore", "ShareManifest"],
            path: "Tests/TestSupport"),
        .testTarget(name: "MediaKitTests", dependencies: ["MediaKit", "MediaFormats", "TestSupport"]),
        .testTarget(
            name: "ShareIngestTests",
            dependencies: [
                "ShareIngest", "ShareIngestCore", "MediaKit", "ShareManifest", "MediaFormats", "ContentHash",
                "PlaceTimeZones", "TestSupport",
            ],
            exclude: ["Goldens"]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport"]),
        // share watch and share worker as services: metrics, health, systemd, logs (real processes).
        .testTarget(name: "ServiceTests", dependencies: ["TestSupport"]),
        .testTarget(
            name: "DecoderIsolationTests",
            dependencies: [
                "DecoderIsolation", "DecoderHelperKit", "MediaFormats", "MediaKit", "ShareIngest", "ShareIngestCore",
                "TestSupport",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
