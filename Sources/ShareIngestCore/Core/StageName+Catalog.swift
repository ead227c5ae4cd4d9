/// Which stage names exist, and in which order their stages run, is the
/// ``StageCatalog``'s: the name itself (in Model) knows no catalog.
extension StageName {
    /// The built-in stage of this name, if there is one.
    public init?(rawValue: String) {
        guard StageCatalog.builtin.definition(named: rawValue) != nil else { return nil }
        self.rawValue = rawValue
    }

    /// The built-in stages, in the order they run: `sniff`, `copy`, `location`,
    /// `probe`, `thumbnail`, `motion`, `compatible`, `manifest`.
    public static var allCases: [StageName] { StageCatalog.builtin.names }
}
