import Foundation
import TestSupport
import Testing

/// The HTML report in a real browser: scripts/check-report.sh renders a real
/// batch's page (the sample drop, with previews linked) and opens it in
/// headless Chromium at 1280 and 390 px: every image decodes (the ThumbHash
/// placeholders too), every link to a preview or a copy loads, every fact keeps
/// its label at both widths, no console message (a CSP refusal, a missing
/// file), no sideways scrolling on the phone.
@Suite struct ReportBrowserTests {
    @Test func theSampleDropsPageHoldsUpInHeadlessChromium() throws {
        let work = TemporaryDirectory("report-browser")
        let script = Fixtures.packageRoot.appendingPathComponent("scripts/check-report.sh").path
        let run = try Tool.run("/bin/bash", [script, work.path], environment: ["SHARE": Fixtures.shareBinary])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("the page passed in headless Chromium at 1280 and 390 px"), "\(run.output)")
        let result = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("check-report: {") })
        let views = try #require(
            try JSONSerialization.jsonObject(with: Data(result.dropFirst("check-report: ".count).utf8))
                as? [String: [String: Any]])
        for (name, view) in views {
            #expect(
                (view["images"] as? Int ?? 0) >= 5 && (view["broken"] as? [Any])?.isEmpty == true, "\(name): \(view)")
            #expect(
                (view["links"] as? Int ?? 0) >= 5 && (view["badLinks"] as? [Any])?.isEmpty == true, "\(name): \(view)")
            #expect(
                (view["labels"] as? Int ?? 0) >= 20 && (view["hiddenLabels"] as? [Any])?.isEmpty == true,
                "\(name): \(view)")
        }
        #expect(views["phone"]?["width"] as? Int == 390 && views["phone"]?["overflow"] as? Int == 0, "\(views)")
        for shot in ["report-desktop.png", "report-phone.png"] {
            #expect(
                ((try? FileManager.default.attributesOfItem(atPath: work.file(shot))[.size] as? Int) ?? 0) > 1000,
                "\(shot)")
        }
    }
}
