import Foundation

/// The check that a delivered file keeps no position, as issue 58 states it:
/// `exiftool -a -G1 -gps:all -xmp-iptcExt:all -location:all -city -sublocation`
/// prints nothing of any file the container delivers.
public enum PositionCheck {
    /// What the check prints of `path` (empty: no position, no place).
    public static func positions(in path: String) throws -> String {
        let arguments = ["-a", "-G1", "-gps:all", "-xmp-iptcExt:all", "-location:all", "-city", "-sublocation", path]
        return try MediaTools.run("/usr/bin/exiftool", arguments).output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Every file delivered into `container` (copies, sidecars, thumbnails,
    /// manifests; not its state, in dot-folders), sorted.
    public static func deliveredFiles(in container: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: container) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            if relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: container + "/" + relative, isDirectory: &isFolder),
                !isFolder.boolValue
            {
                files.append(container + "/" + relative)
            }
        }
        return files.sorted()
    }

    /// What the check prints of each file delivered into `container` that it prints anything of.
    public static func positionsLeft(in container: String) throws -> [String: String] {
        var left: [String: String] = [:]
        for file in deliveredFiles(in: container) {
            let printed = try positions(in: file)
            if !printed.isEmpty { left[file] = printed }
        }
        return left
    }
}
