import Foundation
import TestSupport
import Testing

/// The libraries' public surface is a decision, not an accident: `api/<Module>.api.txt`
/// lists each library product's, and this test fails when a built module differs
/// from its list.
///
/// The list is made from the compiled module by the toolchain's
/// `swift-api-digester -dump-sdk`, then normalised: one declaration per line with
/// its full signature (demangled, so `async`, typed `throws` and `@Sendable` are
/// in it), setters, the parameters that have defaults, and the protocols each type
/// conforms to; module prefixes dropped; sorted. (The digester does not keep the
/// labels of enum case payloads, so `case E.x (String, Int)` lists only the types.) After a deliberate change, run
/// `scripts/api-check.sh --record` (or `RECORD_API=1 swift test --filter PublicAPITests`),
/// review the diff of `api/` and commit it with the change.
/// Recording always fails the test, so it cannot be left on.
@Suite struct PublicAPITests {
    /// The library products a host app or tool can link.
    static let modules = [
        "SystemCalls", "ShareManifest", "MediaFormats", "ShareIngestCore", "ShareIngest", "DecoderIsolation",
        "DecoderHelperKit",
    ]

    static func listPath(_ module: String) -> String {
        Fixtures.packageRoot.appendingPathComponent("api/\(module).api.txt").path
    }

    @Test(arguments: modules) func publicSurfaceMatchesTheCheckedInList(module: String) throws {
        let listPath = Self.listPath(module)
        let actual = try PublicSurface.dump(module: module)
        if ProcessInfo.processInfo.environment["RECORD_API"] == "1" {
            try FileManager.default.createDirectory(
                atPath: (listPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(actual.utf8).write(to: URL(fileURLWithPath: listPath))
            Issue.record("recorded \(listPath); review `git diff api/`, unset RECORD_API and run again")
            return
        }
        guard let expected = try? String(contentsOfFile: listPath, encoding: .utf8) else {
            Issue.record("no API list at \(listPath); run scripts/api-check.sh --record")
            return
        }
        let expectedLines = Set(expected.split(separator: "\n").map(String.init))
        let actualLines = Set(actual.split(separator: "\n").map(String.init))
        let removed = expectedLines.subtracting(actualLines).sorted()
        let added = actualLines.subtracting(expectedLines).sorted()
        #expect(
            removed.isEmpty && added.isEmpty,
            """
            The public API of \(module) changed. If that is intended, run scripts/api-check.sh --record \
            and commit api/\(module).api.txt with the change.
            removed:
            \(removed.map { "  - " + $0 }.joined(separator: "\n"))
            added:
            \(added.map { "  + " + $0 }.joined(separator: "\n"))
            """)
    }

    @Test(arguments: modules) func everyPublicDeclarationIsDocumented(module: String) throws {
        let sources = Fixtures.packageRoot.appendingPathComponent("Sources/\(module)")
        var undocumented: [String] = []
        let files =
            FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }
            ?? []
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            let relative = String(file.path.dropFirst(Fixtures.packageRoot.path.count + 1))
            undocumented += DocumentationCheck.undocumented(in: text).map { "\(relative):\($0.line): \($0.text)" }
        }
        if !undocumented.isEmpty {
            Issue.record("public declarations without a /// comment:\n\(undocumented.sorted().joined(separator: "\n"))")
        }
    }

    /// The README's and docs' examples (docs/library.md since issue 60) are the
    /// example package's files, which `scripts/test.sh` compiles and runs: each
    /// ```swift block after `<!-- readme-example: PATH -->` must be PATH's content.
    @Test func readmeExamplesAreTheExamplePackagesCode() throws {
        let marker = "<!-- readme-example: "
        let blocks = try ProjectDocs.pages().flatMap { page in
            page.text.components(separatedBy: marker).dropFirst().map { (page: page.path, block: $0) }
        }
        #expect(!blocks.isEmpty, "neither README.md nor a page of docs/ has readme-example blocks")
        for (page, block) in blocks {
            guard let end = block.range(of: " -->\n```swift\n"),
                let close = block.range(of: "\n```\n", range: end.upperBound..<block.endIndex)
            else {
                Issue.record("a readme-example marker is not followed by a ```swift block")
                continue
            }
            let path = String(block[..<end.lowerBound])
            let code = String(block[end.upperBound..<close.lowerBound]) + "\n"
            let file = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent(path), encoding: .utf8)
            #expect(code == file, "\(page)'s example differs from \(path); copy the file into \(page)")
        }
    }
}

/// Dumps and normalises a module's public API with the toolchain's `swift-api-digester`.
enum PublicSurface {
    struct ToolError: Error, CustomStringConvertible {
        let description: String
    }

    static func dump(module: String) throws -> String {
        let products = try buildProducts(module: module)
        let digester = try tool("swift-api-digester")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("api-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        var arguments = [
            "-dump-sdk", "-module", module, "-o", output, "-abort-on-module-fail", "-I", products + "/Modules",
        ]
        arguments += try clangArguments(products: products)
        let digest = try run(digester, arguments)
        guard let data = FileManager.default.contents(atPath: output), !data.isEmpty else {
            throw ToolError(description: "swift-api-digester wrote nothing:\n\(digest)")
        }
        guard let root = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["ABIRoot"] as? [String: Any]
        else {
            throw ToolError(description: "unexpected swift-api-digester output")
        }
        var declarations: [[String: Any]] = []
        collect(root, module: module, into: &declarations)
        let mangled = declarations.compactMap { $0["mangledName"] as? String }
        let demangled = try run(try tool("swift-demangle"), ["--compact"] + mangled).split(separator: "\n").map(
            String.init)
        guard demangled.count == declarations.count else {
            throw ToolError(description: "swift-demangle gave \(demangled.count) names for \(declarations.count)")
        }
        let lines = zip(declarations, demangled).map { declaration, name in
            var text = line(for: declaration, signature: shorten(name, module: module))
            // `func static X.f` reads better as `static func X.f`.
            if let range = text.range(of: #"^\w+ static "#, options: .regularExpression) {
                text = "static " + text[range].dropLast(" static ".count) + " " + text[range.upperBound...]
            }
            return text
        }
        return Set(lines).sorted().joined(separator: "\n") + "\n"
    }

    /// Public, written (not synthesised) declarations of `module`, nested types included.
    private static func collect(_ node: [String: Any], module: String, into declarations: inout [[String: Any]]) {
        for child in node["children"] as? [[String: Any]] ?? [] {
            let kind = child["kind"] as? String ?? ""
            // `package` declarations are in the module file too, marked internal:
            // they are not part of the public surface.
            guard ["TypeDecl", "Function", "Constructor", "Var", "TypeAlias", "Subscript"].contains(kind),
                child["moduleName"] as? String == module, child["mangledName"] != nil,
                child["isInternal"] as? Bool != true
            else { continue }
            if child["implicit"] as? Bool != true { declarations.append(child) }
            if kind == "TypeDecl" { collect(child, module: module, into: &declarations) }
        }
    }

    private static func line(for node: [String: Any], signature: String) -> String {
        let kind = node["kind"] as? String ?? ""
        let declKind = node["declKind"] as? String ?? ""
        switch (kind, declKind) {
        case ("TypeDecl", _):
            let ignored: Set<String> = ["Copyable", "Escapable", "SendableMetatype", "BitwiseCopyable"]
            let conformances = (node["conformances"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                .filter { !ignored.contains($0) }
            let keyword = declKind == "TypeAlias" ? "typealias" : declKind.lowercased()
            return "\(keyword) \(signature)"
                + (conformances.isEmpty ? "" : ": " + Set(conformances).sorted().joined(separator: ", "))
        case ("Var", "EnumElement"):
            // `E.name(E.Type) -> (Payload) -> E` is shown as `case E.name(label:…) (Payload)`.
            let pattern = try! NSRegularExpression(pattern: #"^(.*)\.\w+\(\1\.Type\) -> (?:(\(.*\)) -> )?\1$"#)
            guard let match = pattern.firstMatch(in: signature, range: NSRange(signature.startIndex..., in: signature)),
                let owner = Range(match.range(at: 1), in: signature)
            else { return "case \(signature)" }
            let payload = Range(match.range(at: 2), in: signature).map { " " + signature[$0] } ?? ""
            return "case \(signature[owner]).\(node["printedName"] as? String ?? "?")\(payload)"
        case ("Var", _):
            let accessors = (node["accessors"] as? [[String: Any]] ?? []).compactMap { $0["accessorKind"] as? String }
            let mutable = accessors.contains("set") || accessors.contains("modify")
            return "\(node["isLet"] as? Bool == true ? "let" : "var") \(signature)"
                + (mutable ? " { get set }" : " { get }")
        case ("TypeAlias", _):
            let target = (node["children"] as? [[String: Any]])?.first?["printedName"] as? String ?? "?"
            return "typealias \(signature) = \(shorten(target, module: "ShareIngest"))"
        default:
            return "\(declKind == "Constructor" ? "init" : declKind.lowercased()) \(signature)" + defaults(node)
        }
    }

    /// ` [defaults: key, message]`: the parameters (by label, or `#n`) that may be omitted.
    private static func defaults(_ node: [String: Any]) -> String {
        let name = node["printedName"] as? String ?? ""
        guard let open = name.firstIndex(of: "(") else { return "" }
        let labels = name[name.index(after: open)...].dropLast().split(separator: ":", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
        let parameters = (node["children"] as? [[String: Any]] ?? []).dropFirst()
        let withDefaults = zip(labels.indices, parameters).compactMap { index, parameter in
            parameter["hasDefaultArg"] as? Bool == true ? (labels[index] == "_" ? "#\(index + 1)" : labels[index]) : nil
        }
        return withDefaults.isEmpty ? "" : " [defaults: \(withDefaults.joined(separator: ", "))]"
    }

    private static func shorten(_ text: String, module: String) -> String {
        var result = text
        for prefix in [
            "\(module).", "Swift.", "FoundationEssentials.", "Foundation.", "ShareManifest.", "MediaFormats.",
            "MediaKit.", "_Concurrency.",
        ] {
            result = result.replacingOccurrences(of: prefix, with: "")
        }
        return result
    }

    /// The folder holding `Modules/<module>.swiftmodule` of the build the tests run from.
    private static func buildProducts(module: String) throws -> String {
        let candidates = [Bundle.main.bundleURL.path, Fixtures.packageRoot.appendingPathComponent(".build/debug").path]
        guard
            let found = candidates.first(where: {
                FileManager.default.fileExists(atPath: "\($0)/Modules/\(module).swiftmodule")
            })
        else {
            throw ToolError(
                description: "no built \(module).swiftmodule in \(candidates); run swift build --build-tests")
        }
        return found
    }

    /// Where the C modules' headers are: the system-library targets' module maps,
    /// the shim target's generated one, and pkg-config's flags for every library
    /// Package.swift names.
    private static func clangArguments(products: String) throws -> [String] {
        let files = FileManager.default
        let root = Fixtures.packageRoot.path
        var arguments: [String] = []
        for target in (try? files.contentsOfDirectory(atPath: root + "/Sources"))?.sorted() ?? []
        where files.fileExists(atPath: "\(root)/Sources/\(target)/module.modulemap") {
            arguments += ["-I", "\(root)/Sources/\(target)"]
        }
        for build in (try? files.contentsOfDirectory(atPath: products))?.sorted() ?? []
        where build.hasSuffix(".build") && files.fileExists(atPath: "\(products)/\(build)/module.modulemap") {
            arguments += ["-Xcc", "-fmodule-map-file=\(products)/\(build)/module.modulemap"]
        }
        let manifest = try String(contentsOfFile: root + "/Package.swift", encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"pkgConfig:\s*"([^"]+)""#)
        let names = pattern.matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)).compactMap {
            match in
            Range(match.range(at: 1), in: manifest).map { String(manifest[$0]) }
        }
        if !names.isEmpty {
            let flags = try run("/usr/bin/env", ["pkg-config", "--cflags"] + names)
            arguments += flags.split(whereSeparator: \.isWhitespace).flatMap { ["-Xcc", String($0)] }
        }
        return arguments
    }

    /// A toolchain program: `$SWIFT_TOOLCHAIN_BIN/<name>`, else beside the `swift` on `PATH`.
    private static func tool(_ name: String) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        var folders: [String] = []
        if let explicit = environment["SWIFT_TOOLCHAIN_BIN"] { folders.append(explicit) }
        for folder in (environment["PATH"] ?? "").split(separator: ":").map(String.init) {
            let swift = folder + "/swift"
            guard FileManager.default.isExecutableFile(atPath: swift) else { continue }
            folders.append(folder)
            if let real = realpath(swift, nil) {
                folders.append((String(cString: real) as NSString).deletingLastPathComponent)
                free(real)
            }
        }
        folders.append("/opt/swift/usr/bin")
        guard let found = folders.map({ "\($0)/\(name)" }).first(where: FileManager.default.isExecutableFile(atPath:))
        else {
            throw ToolError(description: "\(name) not found beside swift on PATH (set SWIFT_TOOLCHAIN_BIN)")
        }
        return found
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw ToolError(
                description:
                    "\(executable) \(arguments.prefix(6).joined(separator: " ")) … failed (\(process.terminationStatus)):\n\(output)"
            )
        }
        return output
    }
}

/// Finds public declarations without a `///` comment in Swift source: lines that
/// declare something `public` (or `open`), and the cases of public enums.
enum DocumentationCheck {
    static func undocumented(in source: String) -> [(line: Int, text: String)] {
        let lines = source.components(separatedBy: "\n")
        var result: [(Int, String)] = []
        var depth = 0
        // Depths at which a public enum's body is open (its cases sit at depth + 1).
        var publicEnumBodies: [Int] = []
        var inMultilineString = false
        for (index, raw) in lines.enumerated() {
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            if inMultilineString {
                if trimmed.hasPrefix("\"\"\"") { inMultilineString = false }
                continue
            }
            if trimmed.hasSuffix("\"\"\"") || trimmed.hasSuffix("#\"\"\"") {
                inMultilineString = true
            }
            let code = stripped(trimmed)
            let declaration = code.replacingOccurrences(
                of: #"^(@\w+(\([^)]*\))?\s+)*"#, with: "", options: .regularExpression)
            let isPublic = declaration.hasPrefix("public ") || declaration.hasPrefix("open ")
            let isPublicExtension = declaration.hasPrefix("public extension ")
            let isEnumCase = declaration.hasPrefix("case ") && publicEnumBodies.last == depth - 1
            if (isPublic && !isPublicExtension) || isEnumCase {
                if !isDocumented(lines, before: index) { result.append((index + 1, trimmed)) }
            }
            let opens = code.filter { $0 == "{" }.count
            let closes = code.filter { $0 == "}" }.count
            if isPublic, declaration.range(of: #"\benum\b"#, options: .regularExpression) != nil, opens > closes {
                publicEnumBodies.append(depth)
            }
            depth += opens - closes
            while let last = publicEnumBodies.last, depth <= last { publicEnumBodies.removeLast() }
        }
        return result
    }

    /// The line without string literals and `//` comments (so braces in them do not count).
    private static func stripped(_ line: String) -> String {
        var out = ""
        var inString = false
        var previous: Character = " "
        var iterator = line.makeIterator()
        while let c = iterator.next() {
            if inString {
                if c == "\"" && previous != "\\" { inString = false }
            } else if c == "\"" {
                inString = true
            } else if c == "/" && previous == "/" {
                out.removeLast()
                break
            } else {
                out.append(c)
            }
            previous = (previous == "\\" && c == "\\") ? " " : c
        }
        return out
    }

    /// True when the declaration at `index` follows a `///` line (attributes on
    /// their own lines in between are allowed).
    private static func isDocumented(_ lines: [String], before index: Int) -> Bool {
        var i = index - 1
        while i >= 0 {
            let previous = lines[i].trimmingCharacters(in: .whitespaces)
            if previous.hasPrefix("@") {
                i -= 1
                continue
            }
            return previous.hasPrefix("///")
        }
        return false
    }
}

/// The products' shape: what a host app links must not drag in a C library.
@Suite struct PackageShapeTests {
    /// `swift package describe`: every target with its kind and dependencies, every product.
    static func describe() throws -> (
        targets: [String: (type: String, dependencies: [String])], products: [String: [String]]
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Its own scratch folder: the running `swift test` holds .build's lock.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("describe-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        process.arguments = [
            "swift", "package", "--package-path", Fixtures.packageRoot.path, "--scratch-path", scratch, "describe",
            "--type", "json",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var targets: [String: (String, [String])] = [:]
        for target in root["targets"] as? [[String: Any]] ?? [] {
            targets[target["name"] as? String ?? ""] = (
                target["module_type"] as? String ?? "", target["target_dependencies"] as? [String] ?? []
            )
        }
        var products: [String: [String]] = [:]
        for product in root["products"] as? [[String: Any]] ?? [] {
            products[product["name"] as? String ?? ""] = product["targets"] as? [String] ?? []
        }
        return (targets, products)
    }

    /// The targets `product` is built from, its dependencies included.
    static func closure(
        of product: String,
        in package: (targets: [String: (type: String, dependencies: [String])], products: [String: [String]])
    ) throws -> Set<String> {
        var closure: Set<String> = []
        var pending = try #require(package.products[product])
        while let name = pending.popLast() {
            if closure.insert(name).inserted { pending += package.targets[name]?.dependencies ?? [] }
        }
        return closure
    }

    /// What a host app links uses no C library, and no C of ours but the
    /// system-call funnel's (CSystem), which is empty outside Linux.
    @Test(arguments: ["ShareManifest", "MediaFormats"]) func productDependsOnNoCLibrary(product: String) throws {
        let package = try Self.describe()
        let closure = try Self.closure(of: product, in: package)
        let cTargets = closure.filter { package.targets[$0]?.type != "SwiftTarget" && $0 != "CSystem" }
        #expect(!closure.isEmpty)
        #expect(cTargets.isEmpty, "\(product) depends on C targets: \(cTargets.sorted())")
        if closure.contains("CSystem") {
            let sources = Fixtures.packageRoot.appendingPathComponent("Sources/CSystem")
            let files =
                FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }
                ?? []
            for file in files where file.pathExtension == "c" {
                let text = try String(contentsOf: file, encoding: .utf8)
                #expect(text.contains("#ifdef __linux__"), "\(file.lastPathComponent) is not limited to Linux")
            }
        }
    }

    /// ShareManifest and the funnel it uses are for host apps on any platform: no
    /// Linux-only module imported unconditionally.
    @Test(arguments: ["ShareManifest", "SystemCalls"]) func importsNothingLinuxOnlyUnconditionally(module: String)
        throws
    {
        let sources = Fixtures.packageRoot.appendingPathComponent("Sources/\(module)")
        let files =
            FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }
            ?? []
        #expect(!files.isEmpty)
        for file in files where file.pathExtension == "swift" {
            let lines = try String(contentsOf: file, encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false)
            // The conditions of the `#if` blocks around each line.
            var conditions: [String] = []
            for (index, line) in lines.enumerated() {
                if line.hasPrefix("#if ") { conditions.append(String(line)) }
                if line.hasPrefix("#elseif ") { conditions[conditions.count - 1] = String(line) }
                if line.hasPrefix("#endif") { conditions.removeLast() }
                guard
                    line.hasPrefix("import Glibc") || line.hasPrefix("import CShims")
                        || line.hasPrefix("import CSystem")
                else { continue }
                #expect(
                    conditions.contains { $0.contains("canImport(") || $0.contains("os(Linux)") },
                    "\(file.lastPathComponent):\(index + 1) imports \(line) unconditionally")
            }
        }
    }

    /// The design tree (docs/design.md since issue 60) names every target under
    /// `Sources/`, every folder of `ShareIngestCore` and every file in each (its
    /// `files:` lines), and nothing that does not exist: the map a new reader
    /// opens first stays true.
    @Test func theReadmeDesignTreeMatchesThePackage() throws {
        let page = try ProjectDocs.page(containing: "\n## Design\n")
        let design = try #require(page.text.components(separatedBy: "\n## Design\n").dropFirst().first)
        let tree = try #require(design.components(separatedBy: "```").dropFirst().first)
        // Lines "  Name" (targets, possibly several per line), "    Folder/" (ShareIngestCore's
        // folders) and, in the description column, "files: A, B" (the Swift files of the
        // folder above, continued on the next lines until a line without a comma at its end).
        var targets: Set<String> = []
        var folders: Set<String> = []
        var listed: [String: Set<String>] = [:]
        var folder = ""
        var continuing = false
        for line in tree.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if let files = text.components(separatedBy: "files: ").dropFirst().first ?? (continuing ? text : nil) {
                let names = files.components(separatedBy: " (").first ?? files
                for name in names.split(separator: ",") where !name.trimmingCharacters(in: .whitespaces).isEmpty {
                    listed[folder, default: []].insert(name.trimmingCharacters(in: .whitespaces))
                }
                continuing = files.hasSuffix(",")
            }
            guard line.hasPrefix("  "), !line.hasPrefix("      ") else { continue }
            let names = text.components(separatedBy: "  ").first ?? ""
            if line.hasPrefix("    ") {
                if names.hasSuffix("/") {
                    folders.insert(String(names.dropLast()))
                    folder = String(names.dropLast())
                }
            } else {
                for name in names.split(separator: ",") { targets.insert(name.trimmingCharacters(in: .whitespaces)) }
                folder = ""
            }
        }
        targets.remove("")
        let package = try Self.describe()
        let sources = Fixtures.packageRoot.appendingPathComponent("Sources").path
        let inSources = Set(try FileManager.default.contentsOfDirectory(atPath: sources)).intersection(
            package.targets.keys)
        #expect(
            targets == inSources,
            "\(page.path) lists \(targets.subtracting(inSources).sorted()), misses \(inSources.subtracting(targets).sorted())"
        )
        let shareIngest = sources + "/ShareIngestCore"
        let actual = Set(
            try FileManager.default.contentsOfDirectory(atPath: shareIngest).filter { name in
                var isFolder: ObjCBool = false
                return FileManager.default.fileExists(atPath: shareIngest + "/" + name, isDirectory: &isFolder)
                    && isFolder.boolValue
            })
        #expect(
            folders == actual,
            "\(page.path) lists \(folders.subtracting(actual).sorted()), misses \(actual.subtracting(folders).sorted())"
        )
        for folder in actual.union([""]) {
            let path = folder.isEmpty ? shareIngest : shareIngest + "/" + folder
            let files = Set(
                try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".swift") }.map {
                    String($0.dropLast(6))
                })
            let names = listed[folder] ?? []
            #expect(
                names == files,
                "\(page.path)'s files of ShareIngestCore/\(folder): lists \(names.subtracting(files).sorted()), misses \(files.subtracting(names).sorted())"
            )
        }
        // The library products the README counts.
        let readme = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let manifest = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let libraries = manifest.components(separatedBy: ".library(name:").count - 1
        let spelled = ["One", "Two", "Three", "Four", "Five", "Six"]
        #expect(
            libraries <= spelled.count && readme.contains("\(spelled[libraries - 1]) library products:"),
            "\(libraries) library products")
    }
}
