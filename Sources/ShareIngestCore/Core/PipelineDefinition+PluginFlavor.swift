import ShareManifest

extension PipelineDefinition {
    /// This pipeline writing its manifest as `flavor` does: the same stages and
    /// settings, the flavor's schema and path spelling (legacy flavors cannot carry
    /// text beside files: such text items are reported as skipped).
    ///
    /// Only the manifest's dialect changes. For the whole behaviour of the seed
    /// extension (thumbnails for videos only) start from `try .load("share-extension")`.
    public func simulating(_ flavor: PluginFlavor) -> PipelineDefinition {
        var pipeline = self
        pipeline.manifest.schema = flavor.schema
        pipeline.manifest.pathSpelling = flavor.pathSpelling
        return pipeline
    }
}
