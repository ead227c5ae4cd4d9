import CSystem
import Foundation
import MediaFormats
import SystemCalls

/// A test-only hook: `SHARE_TEST_HELPER_FAULT=FAULT:NAME,FAULT:NAME,…` makes a
/// helper misbehave on the item whose file name is NAME, after it is sandboxed
/// and before it decodes. Unset, it costs one dictionary lookup per item. Debug
/// and test builds only: a release build reads none of these variables
/// (``planned`` is empty, no sandbox step is skipped, and the attacker's code
/// is not compiled in).
///
/// - `segv`, `abort`, `loop`, `alloc`: a write through a null pointer
///   (SIGSEGV), `abort()`, an endless busy loop, a 10 GB allocation. Each must
///   fail that one item with the right reason while the batch goes on.
///   `segv-thumbnail` crashes only while a thumbnail is asked for (a poster that
///   kills the decoder).
/// - `stall`: waits until the helper is killed (a test reads /proc meanwhile).
/// - `attack`: plays a decoder taken over by the file: tries a forbidden
///   action of `shim_attack_run` on the targets in `SHARE_TEST_ATTACK`
///   (`socket=PATH;container=PATH;journal=PATH;root=PATH;copy=PATH;port=N`) and
///   reports it on standard error (keep it with `SHARE_HELPER_STDERR=inherit`),
///   then decodes: the one action named by the file (`attack-NAME.jpg`), or
///   every action in turn for any other name. A forbidden call kills the
///   helper, so one file tries one action.
/// - `forge-facts`, `forge-duration`, `forge-mime`, `forge-jpeg`,
///   `forge-size`, `forge-aspect`: decodes, then lies in its reply (a size over
///   the pixel limit, a negative duration, an unknown MIME type, thumbnail bytes
///   that are no JPEG, a JPEG larger than asked for, one whose shape does not
///   match the facts): the parent must catch each. `forge-video-range` and
///   `forge-identifier` lie in the moment facts (an embedded video that runs
///   past the end of the file, a content identifier with a terminal escape).
///   `forge-compatible` claims a
///   compatible copy twice the photo's size (its JPEG's frame header agreeing),
///   `forge-location` adds an overwrite before the file's first byte to a
///   location request's findings.
package enum TestFault: String {
    case segv, abort, loop, alloc, stall, attack
    case segvThumbnail = "segv-thumbnail"
    case forgeFacts = "forge-facts"
    case forgeDuration = "forge-duration"
    case forgeMIME = "forge-mime"
    case forgeJPEG = "forge-jpeg"
    case forgeSize = "forge-size"
    case forgeAspect = "forge-aspect"
    case forgeVideoRange = "forge-video-range"
    case forgeIdentifier = "forge-identifier"
    case forgeCompatible = "forge-compatible"
    case forgeLocation = "forge-location"

    /// The environment variable.
    package static let variable = "SHARE_TEST_HELPER_FAULT"
    /// The attack's targets.
    package static let attackVariable = "SHARE_TEST_ATTACK"
    /// Test-only: steps of the sandbox a helper leaves out (`landlock`,
    /// `confinement` (the namespace or empty root without Landlock), `seccomp`,
    /// `privileges`, `cpu` (the hard CPU limit), comma-separated), to show that
    /// the parent then refuses the helper (``SandboxRequirement``) and decodes nothing.
    package static let skipVariable = "SHARE_TEST_SANDBOX_SKIP"

    /// The steps ``skipVariable`` names (none in a release build).
    package static var skippedSandboxSteps: Set<String> {
        #if DEBUG
            Set((ProcessEnvironment.value(skipVariable) ?? "").split(separator: ",").map(String.init))
        #else
            []
        #endif
    }

    /// Faults by file name, from the environment (none in a release build).
    package static let planned: [String: TestFault] = {
        #if DEBUG
            return parse(ProcessEnvironment.value(variable))
        #else
            return [:]
        #endif
    }()

    /// `FAULT:NAME,…` by file name.
    private static func parse(_ value: String?) -> [String: TestFault] {
        guard let text = value, !text.isEmpty else { return [:] }
        var faults: [String: TestFault] = [:]
        for entry in text.split(separator: ",") {
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let fault = TestFault(rawValue: String(parts[0])) else { continue }
            faults[String(parts[1])] = fault
        }
        return faults
    }

    /// The fault planned for `request` (matched on the last path component of its label).
    package static func planned(for request: DecodeRequest) -> TestFault? {
        guard !planned.isEmpty,
            let fault = planned[String(request.label.split(separator: "/").last ?? Substring(request.label))]
        else { return nil }
        return fault == .segvThumbnail && request.thumbnail == nil ? nil : fault
    }

    /// What the attack needs to know that the sandbox will hide: the `share`
    /// process (the parent, or for a helper forked from `template` the
    /// template's parent, read from /proc before the sandbox is up) and the
    /// template. Nil unless an attack is planned.
    package static func prepareAttack(template: pid_t) -> AttackTargets? {
        guard planned.values.contains(.attack) else { return nil }
        var owner = Processes.parent
        if template > 0, let stat = try? FileSystem.readWholeFile("/proc/\(template)/stat"),
            let fields = String(decoding: stat, as: UTF8.self).split(separator: ")").last?.split(separator: " "),
            fields.count > 1,
            let parent = Int32(fields[1])
        {
            owner = parent
        }
        var paths: [String: String] = [:]
        for pair in (ProcessEnvironment.value(attackVariable) ?? "").split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { paths[String(parts[0])] = String(parts[1]) }
        }
        return AttackTargets(
            owner: owner, template: template, sibling: sibling(of: template > 0 ? template : owner), paths: paths)
    }

    /// Another helper of the same template (or parent), if one runs: the
    /// target of the attacks on siblings (read from /proc before the sandbox hides it).
    private static func sibling(of parent: pid_t) -> pid_t {
        let me = Processes.current
        for name in FileSystem.names(in: "/proc") {
            guard let pid = pid_t(name), pid != me, pid != parent,
                let stat = try? FileSystem.readWholeFile("/proc/\(pid)/stat"),
                let fields = String(decoding: stat, as: UTF8.self).split(separator: ")").last?.split(separator: " "),
                fields.count > 1,
                pid_t(fields[1]) == parent
            else { continue }
            return pid
        }
        return 0
    }

    /// The lie this fault tells in the reply, if it is a forgery.
    package var forgery: Forgery? {
        switch self {
        case .forgeFacts: .facts
        case .forgeDuration: .duration
        case .forgeMIME: .mime
        case .forgeJPEG: .jpeg
        case .forgeSize: .size
        case .forgeAspect: .aspect
        case .forgeVideoRange: .videoRange
        case .forgeIdentifier: .identifier
        case .forgeCompatible: .compatible
        case .forgeLocation: .location
        default: nil
        }
    }

    /// A lie in a reply.
    package enum Forgery {
        case facts, duration, mime, jpeg, size, aspect, videoRange, identifier, compatible, location

        /// Rewrites `result` and its thumbnail bytes.
        package func apply(to result: inout WireResult, jpeg: inout [UInt8]) {
            switch self {
            case .facts:
                result.facts?.width = 100_000
                result.facts?.height = 100_000
            case .duration:
                result.facts?.durationMilliseconds = -1
            case .mime:
                result.facts?.mimeType = "application/x-share-forged"
            case .jpeg:
                // A PNG signature and padding where the JPEG should be.
                jpeg = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 64)
            case .size:
                // A thumbnail ten times the size asked for: the JPEG's frame header and the reply agree.
                Self.setFrameSize(
                    &jpeg, width: (result.thumbnailWidth ?? 0) * 10, height: (result.thumbnailHeight ?? 0) * 10)
                result.thumbnailWidth = result.thumbnailWidth.map { $0 * 10 }
                result.thumbnailHeight = result.thumbnailHeight.map { $0 * 10 }
            case .videoRange:
                // A video said to run a megabyte past wherever it starts: past the end of a small file.
                var moments = result.moments ?? MomentFacts()
                moments.embeddedVideo = EmbeddedVideo(layout: .appended, offset: 0, length: 1 << 30)
                result.moments = moments
            case .identifier:
                var moments = result.moments ?? MomentFacts()
                moments.contentIdentifier = "\u{1B}]0;owned\u{07}"
                result.moments = moments
            case .aspect:
                // Width and height swapped: a landscape photo with a portrait thumbnail.
                Self.setFrameSize(&jpeg, width: result.thumbnailHeight ?? 0, height: result.thumbnailWidth ?? 0)
                swap(&result.thumbnailWidth, &result.thumbnailHeight)
            case .compatible:
                // A compatible copy said to be twice the photo's size: the JPEG's frame header and the reply agree.
                guard let length = result.compatibleLength, length <= jpeg.count, let width = result.compatibleWidth,
                    let height = result.compatibleHeight
                else { return }
                var copy = Array(jpeg[(jpeg.count - length)...])
                Self.setFrameSize(&copy, width: width * 2, height: height * 2)
                jpeg = Array(jpeg[..<(jpeg.count - length)]) + copy
                result.compatibleWidth = width * 2
                result.compatibleHeight = height * 2
            case .location:
                // Zeros before the file's first byte, among the real findings.
                result.location?.found.append(
                    LocationRecord(
                        name: "EXIF GPS", edits: [MetadataEdit(offset: -4, length: 8, fill: .zeros, step: 0)]))
            }
        }

        /// Writes `width` × `height` into the JPEG's first frame header (SOFn).
        private static func setFrameSize(_ jpeg: inout [UInt8], width: Int, height: Int) {
            guard let frame = JPEGFrameHeader(jpeg[...]) else { return }
            let index = frame.offset
            jpeg[index + 5] = UInt8(height >> 8 & 0xFF)
            jpeg[index + 6] = UInt8(height & 0xFF)
            jpeg[index + 7] = UInt8(width >> 8 & 0xFF)
            jpeg[index + 8] = UInt8(width & 0xFF)
        }
    }

    /// Opaque to the optimiser, so the loop is not removed.
    @inline(never) package static func step() -> UInt64 { UInt64(Processes.current & 1) | 0 }
}

/// The targets of the `attack` fault (see ``TestFault/prepareAttack(template:)``).
package struct AttackTargets {
    package let owner: pid_t
    package let template: pid_t
    package let sibling: pid_t
    package let paths: [String: String]

    /// Runs `shim_attack_run` against the input and these targets: the action
    /// `only`, or all of them. (Nothing in a release build.)
    package func run(input: FileDescriptor, inputPath: String, only: String?) {
        #if DEBUG
            let names: [String] = [
                inputPath, paths["socket"] ?? "/nonexistent", paths["container"] ?? "/nonexistent",
                paths["journal"] ?? "/nonexistent",
                paths["root"] ?? "/root/nonexistent", paths["copy"] ?? "/nonexistent", only ?? "",
            ]
            let strings = names.map { strdup($0) }
            defer { for copy in strings { free(copy) } }
            var targets = shim_attack_targets(
                input: input.raw, input_path: strings[0], owner: owner, template_pid: template, sibling: sibling,
                socket_path: strings[1],
                container: strings[2], journal: strings[3], root_file: strings[4], other_copy: strings[5],
                port: Int32(paths["port"] ?? "") ?? 0)
            shim_attack_run(&targets, only == nil ? nil : strings[6])
        #endif
    }
}
