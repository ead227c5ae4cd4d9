import Foundation
import ShareIngest
import ShareManifest
import SystemCalls

/// `share open`: the host side of a redirect. Prints the checked manifest.
enum OpenCommand {
    static let usage = "usage: share open URL [--container DIR] [--consume]"

    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let parsed: Arguments
        switch Command.parse(arguments, options: ["container"], flags: ["consume"], usage: usage) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        guard parsed.positionals.count == 1, let url = parsed.positionals.first else {
            return Command.usageFailure("expected exactly one redirect URL", usage: usage)
        }
        let container: ContainerDirectory
        do {
            container = try Command.container(parsed)
        } catch {
            return Command.failure("\(error)")
        }
        do {
            let share = try RedirectHandler(container: container).open(url, consume: parsed.flag("consume"))
            StandardStream.write(Array(share.manifestJSON), to: STDOUT_FILENO)
            return .success
        } catch {
            Terminal.shared.err("share: \(error)")
            return .partial
        }
    }
}
