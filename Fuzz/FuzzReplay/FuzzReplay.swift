import Foundation

/// The non-fuzzing entry of every fuzz target: runs its check on each file named
/// on the command line (a folder: each file in it), so the seed corpus and every
/// crash ever found are replayed by an ordinary build, in the test suite.
/// `scripts/fuzz.sh` builds the same targets with `-sanitize=fuzzer` and
/// `-DFUZZING`, where libFuzzer's own `main` drives `LLVMFuzzerTestOneInput`.
public enum FuzzReplay {
    /// Replays every input named in `arguments` through `check`; prints how many.
    public static func run(_ check: (Data) -> Void, arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        var count = 0
        for argument in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("fuzz replay: \(argument): no such file or folder\n".utf8))
                exit(2)
            }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []).sorted().map {
                    argument + "/" + $0
                }
                : [argument]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                check(data)
                count += 1
            }
        }
        print("replayed \(count) inputs")
    }
}
