import DecoderHelperKit
import Foundation
import MediaFormats
import MediaKit
import TestSupport
import Testing

@testable import DecoderIsolation

/// Issue 59: the helpers are their own executable (`share-helper`, which links
/// the decoders), found next to `share` or through `SHARE_HELPER_PATH`.
@Suite struct HelperExecutableTests {
    /// The parent's side cannot ask MediaKit which formats need the
    /// sandbox-only loaders (it links no decoder): its own list must agree.
    @Test func sandboxOnlyFormatsAgreeWithMediaKit() {
        for format in MediaFormat.all {
            #expect(
                HelperKind.needsSandboxOnlyLoaders(format) == InProcessDecoder.needsSandboxOnlyLoaders(format),
                "\(format.id)")
        }
    }

    /// A helper executable that is not there: one error naming its path and how
    /// to name another, and no decoding.
    @Test func aMissingHelperSaysWhereItWasLookedFor() throws {
        let missing = "/nonexistent/share-helper"
        var configuration = ProcessIsolatedDecoder.Configuration(helperExecutable: missing)
        configuration.prestartedHelpers = 0
        let decoder = ProcessIsolatedDecoder(configuration)
        defer { decoder.shutdown() }
        let error = #expect(throws: MediaError.self) { try decoder.checkSandbox() }
        #expect(
            error?.message.contains("the decoder helper \(missing) is missing") == true, "\(String(describing: error))")
        #expect(error?.message.contains(ProcessIsolatedDecoder.helperPathVariable) == true)
    }

    /// By default the helper is `share-helper` beside this executable (for
    /// these tests: in the package's build products, next to the test bundle).
    @Test func theHelperIsFoundBesideThisExecutable() {
        let path = ProcessIsolatedDecoder.Configuration.besideThisExecutable.helperExecutable
        #expect(path.hasSuffix("/share-helper"))
        #expect(FileManager.default.isExecutableFile(atPath: path), "\(path)")
    }
}
