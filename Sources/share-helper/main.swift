import DecoderHelperKit
import SystemCalls

// The decoder helper executable: the only product of this package that links
// libvips, libav, libheif and libtiff. `share` (which links none of them: issue 59)
// starts it once per command as its helpers' template
// (`share-helper decode-helper … --template`), and on its own for the helpers
// with the sandbox-only loaders; see DecoderIsolation's ProcessIsolatedDecoder.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.first == DecoderHelper.command else {
    StandardStream.write(
        Array(
            "share-helper: the decoder helper of share; it is started by share itself (share-helper \(DecoderHelper.command) …)\n"
                .utf8), to: 2)
    Processes.exit(64)
}
Processes.exit(DecoderHelper.main(Array(arguments.dropFirst())))
