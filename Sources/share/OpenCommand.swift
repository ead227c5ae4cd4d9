import Foundation
import ShareIngestCore
import ShareManifest
import SystemCalls

/// `share open`: the host side of a redirect. Prints the checked manifest.
enum OpenCommand {
    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let parsed: Arguments
        switch Command.parse(arguments, CommandTable.open) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        let url = parsed.positionals[0]
        let container: ContainerDirectory
        do {
            container = try Command.existingContainer(parsed)
        } catch {
            return Command.failure(error)
        }
        do {
            let share = try RedirectHandler(container: container).open(url, consume: parsed.flag("consume"))
            StandardStream.write(Array(share.manifestJSON), to: STDOUT_FILENO)
            return .success
        } catch {
            // A redirect URL that is no such URL is a usage error; a share that is not there (unknown, consumed, damaged, outside the container) a missing input.
            if case .badURL = error { return Command.failure("\(error)", .usage) }
            return Command.failure("\(error)", .noInput)
        }
    }
}
