/// The built-in stages are registered here, beside them: the catalog itself
/// (in Core) names no stage.
extension StageCatalog {
    /// share-ingest's stages: sniff, copy, location, probe, thumbnail, motion,
    /// compatible, and the manifest's fan-in.
    static let builtin = try! StageCatalog([
        SniffStage.definition, CopyStage.definition, LocationStage.definition, ProbeStage.definition,
        ThumbnailStage.definition,
        MotionStage.definition, CompatibleStage.definition, ManifestStage.definition,
    ])
}
