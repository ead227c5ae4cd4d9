import Foundation
import Glibc
import SystemCalls
import Testing

@testable import ShareIngestCore

/// The fan-in's decisions that ``BatchLifecycle`` takes for both modes alike
/// (the fan-in is the same code in both): which carried sidecars fail with
/// their media, and which steps are cheap to redo. Each situation is a row.
extension LifecycleSituationTests {
    /// A carried sidecar as the fan-in finds it.
    enum SidecarAs: String, Sendable, CaseIterable {
        case attached, released, borrowed, failedAlready
    }

    /// Why the fan-in fails an item's sidecars.
    enum SidecarCause: String, Sendable, CaseIterable {
        case mediaOutsideDateRange, manifestUnwritten
    }

    /// One situation of a carried sidecar at the fan-in: whether it fails, and with which reason.
    struct SidecarRow: Sendable, CustomTestStringConvertible {
        let cause: SidecarCause
        let sidecar: SidecarAs
        /// Nil: it does not fail (or keeps its own failure).
        let fails: ItemFailure.Reason?
        var testDescription: String { "\(cause) \(sidecar)" }
    }

    static let diskFull = SystemError("write", path: "/container/manifest.json", code: ENOSPC)

    static let sidecarRows: [SidecarRow] = [
        SidecarRow(cause: .mediaOutsideDateRange, sidecar: .attached, fails: .outsideDateRange),
        SidecarRow(cause: .mediaOutsideDateRange, sidecar: .released, fails: .outsideDateRange),
        // An edited copy's share of its original's Takeout JSON: its original decides.
        SidecarRow(cause: .mediaOutsideDateRange, sidecar: .borrowed, fails: nil),
        SidecarRow(cause: .mediaOutsideDateRange, sidecar: .failedAlready, fails: nil),
        SidecarRow(
            cause: .manifestUnwritten, sidecar: .attached,
            fails: ItemFailure(.manifest, writing: diskFull, "").reason),
        SidecarRow(
            cause: .manifestUnwritten, sidecar: .released,
            fails: ItemFailure(.manifest, writing: diskFull, "").reason),
        SidecarRow(
            cause: .manifestUnwritten, sidecar: .borrowed,
            fails: ItemFailure(.manifest, writing: diskFull, "").reason),
        SidecarRow(cause: .manifestUnwritten, sidecar: .failedAlready, fails: nil),
    ]

    /// Every row, the only place the fan-in fails a carried sidecar with its
    /// media: whether it fails, and why; one already failed keeps its own failure.
    @Test(arguments: sidecarRows)
    func carriedSidecarFailure(_ row: SidecarRow) {
        #expect(
            Set(Self.sidecarRows.map(\.testDescription)).count == SidecarAs.allCases.count * SidecarCause.allCases.count
        )
        var sidecar = CarriedSidecar(index: 1, name: "IMG_0001.JPG.json", ownPath: nil, ownLabel: nil, size: 10)
        let own = ItemFailure(.copy, .unreadable, "IMG_0001.JPG.json: could not be read")
        switch row.sidecar {
        case .attached: break
        case .released: sidecar.release()
        case .borrowed: sidecar.borrowed = true
        case .failedAlready: BatchLifecycle.fail(&sidecar, own)
        }
        var item = ItemState(index: 0, id: UUID(), source: .text("photo"), label: "IMG_0001.JPG")
        item.carriedSidecars = [sidecar]
        let cause: BatchLifecycle.SidecarsFail =
            row.cause == .manifestUnwritten ? .manifestUnwritten(Self.diskFull) : .mediaOutsideDateRange
        #expect(BatchLifecycle.fails(sidecar, cause) == (row.fails != nil))
        BatchLifecycle.failCarriedSidecars(of: &item, cause)
        let failure = item.carriedSidecars[0].failure
        if let reason = row.fails {
            #expect(failure?.reason == reason && failure?.stage == .manifest, "\(String(describing: failure))")
        } else {
            #expect(failure == sidecar.failure, "\(String(describing: failure))")
        }
    }

    /// One step as it ends: whether it is cheap to redo after a crash (its
    /// record may then wait for the next, when its holder keeps the item).
    struct CheapRow: Sendable, CustomTestStringConvertible {
        let name: String
        let outcome: StageOutcome
        let decodes: Bool
        let unchanged: Bool
        let cheap: Bool
        var testDescription: String { name }
    }

    static let cheapRows: [CheapRow] = [
        CheapRow(name: "a sniff or a copy", outcome: .completed(.copy), decodes: false, unchanged: false, cheap: true),
        CheapRow(
            name: "a decode that changed nothing", outcome: .completed(.probe), decodes: true, unchanged: true,
            cheap: true),
        CheapRow(
            name: "a decode that changed the item", outcome: .completed(.probe), decodes: true, unchanged: false,
            cheap: false),
        CheapRow(
            name: "a stage that failed", outcome: .failed(ItemFailure(.copy, .unreadable, "unreadable")),
            decodes: false, unchanged: true, cheap: false),
        CheapRow(
            name: "a lost attempt", outcome: .lost(at: .probe, reason: "died", .died(alone: true, decoding: true)),
            decodes: true, unchanged: true, cheap: false),
    ]

    /// Every row of "cheap to redo", decided by ``BatchLifecycle/cheapToRedo(_:of:decodes:unchanged:)``.
    @Test(arguments: cheapRows)
    func cheapToRedo(_ row: CheapRow) {
        let stage: StageName = if case .completed(let stage) = row.outcome { stage } else { .probe }
        #expect(
            BatchLifecycle.cheapToRedo(row.outcome, of: stage, decodes: row.decodes, unchanged: row.unchanged)
                == row.cheap)
    }
}
