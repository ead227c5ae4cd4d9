// swift-tools-version:6.0
// An example of a host app's test suite using share-ingest: a tiny "host app"
// (HostApp: what the app does when the share extension opens it) and its tests,
// which produce real shares with the ShareIngest library and run the app on them.
import Foundation
import PackageDescription

let package = Package(
    name: "HostAppTests",
    dependencies: [
        // In an app: .package(name: "share-ingest", path: "../share-ingest") or
        // .package(url: "https://…/share-ingest.git", branch: "main") (no release is tagged yet)
        .package(path: "../..")
    ],
    targets: [
        // The app reads shares: only the C-free ShareManifest.
        .target(
            name: "HostApp",
            dependencies: [.product(name: "ShareManifest", package: shareIngestPackage)]),
        // Its tests make real shares with the pipeline.
        .testTarget(
            name: "HostAppTests",
            dependencies: [
                "HostApp", .product(name: "ShareIngest", package: shareIngestPackage),
                .product(name: "ShareManifest", package: shareIngestPackage),
            ],
            exclude: ["Goldens"]),
    ],
    swiftLanguageModes: [.v6]
)

/// A package added by path is known by its folder's name (a clone may be called
/// anything), so the name is taken from where this file sits: two folders up.
var shareIngestPackage: String {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    return url.lastPathComponent.lowercased()
}
