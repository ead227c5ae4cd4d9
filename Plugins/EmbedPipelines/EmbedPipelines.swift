import Foundation
import PackagePlugin

/// Embeds `pipelines/*.json` in the target as `BuiltinPipelines.json` (name →
/// document), generated at build time: the files are the built-in pipelines,
/// never copied by hand, and `share` needs no file beside it to run.
@main struct EmbedPipelines: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.package.directoryURL.appending(path: "pipelines")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "BuiltinPipelines.swift")
        return [
            .buildCommand(
                displayName: "Embedding pipelines/*.json",
                executable: try context.tool(named: "EmbedPipelinesTool").url,
                arguments: [output.path] + files.map(\.path), inputFiles: files, outputFiles: [output])
        ]
    }
}
