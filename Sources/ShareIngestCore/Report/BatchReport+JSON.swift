import Foundation

/// A batch report as JSON is the stored report's document (in Report): the
/// report itself (in Core) names no document.
extension BatchReport {
    /// The JSON report document (`--report FILE`, and the report stored beside
    /// each manifest): every input with its status (``BatchReportDocument``).
    /// Held in memory: ``write(to:container:)`` writes one of any size.
    public func json() -> Data {
        BatchReportDocument.header(of: self).joined(
            items: items.map { BatchReportDocument.encode(BatchReportDocument.Item($0)) })
    }
}
