import Foundation
import Synchronization

/// Counters, gauges and histograms with labels, written in the Prometheus text
/// format (version 0.0.4). Thread-safe: the pipeline's threads add, the
/// listener's thread renders. Every family is declared once, with its help text
/// and its labels' names; samples are kept in the order they first appear.
package final class MetricsRegistry: Sendable {
    /// What a family is.
    package enum Kind: String, Sendable { case counter, gauge, histogram }

    private struct Family {
        let name: String
        let help: String
        let kind: Kind
        let labels: [String]
        let buckets: [Double]
        var order: [String] = []
        var values: [String: Double] = [:]
        var histograms: [String: Histogram] = [:]
    }

    private struct Histogram {
        var counts: [Int]
        var sum: Double = 0
        var count = 0
    }

    private struct State {
        var order: [String] = []
        var families: [String: Family] = [:]
    }

    private let state = Mutex(State())
    /// Values read when rendering (counters kept elsewhere, e.g. a helper pool's).
    private let readers = Mutex<[String: @Sendable () -> Double]>([:])

    package init() {}

    /// Declares a family (counter names end in `_total`; histograms take `buckets`, ascending).
    package func declare(_ name: String, _ kind: Kind, help: String, labels: [String] = [], buckets: [Double] = []) {
        state.withLock { state in
            guard state.families[name] == nil else { return }
            state.order.append(name)
            state.families[name] = Family(name: name, help: help, kind: kind, labels: labels, buckets: buckets)
        }
    }

    /// A label-less family whose value is read by `value` at each render.
    package func declare(_ name: String, _ kind: Kind, help: String, reading value: @escaping @Sendable () -> Double) {
        declare(name, kind, help: help)
        readers.withLock { $0[name] = value }
    }

    /// Adds `amount` to a counter (or gauge) sample.
    package func add(_ name: String, _ labels: [String] = [], _ amount: Double = 1) {
        update(name, labels) { $0 += amount }
    }

    /// Sets a gauge sample.
    package func set(_ name: String, _ labels: [String] = [], to value: Double) {
        update(name, labels) { $0 = value }
    }

    /// Sets a gauge's samples to exactly `values` (label values to value): samples
    /// missing from `values` drop to 0.
    package func replace(_ name: String, with values: [[String]: Double]) {
        state.withLock { state in
            guard var family = state.families[name] else { return }
            for key in family.order { family.values[key] = 0 }
            for (labels, value) in values.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                let key = Self.key(family.labels, labels)
                if family.values[key] == nil { family.order.append(key) }
                family.values[key] = value
            }
            state.families[name] = family
        }
    }

    /// Records one observation in a histogram.
    package func observe(_ name: String, _ labels: [String] = [], _ value: Double) {
        state.withLock { state in
            guard var family = state.families[name], family.kind == .histogram else { return }
            let key = Self.key(family.labels, labels)
            var histogram =
                family.histograms[key]
                ?? {
                    family.order.append(key)
                    return Histogram(counts: Array(repeating: 0, count: family.buckets.count))
                }()
            for (index, bound) in family.buckets.enumerated() where value <= bound { histogram.counts[index] += 1 }
            histogram.sum += value
            histogram.count += 1
            family.histograms[key] = histogram
            state.families[name] = family
        }
    }

    /// A sample's value (0 when it has none yet); for tests and the status line.
    package func value(_ name: String, _ labels: [String] = []) -> Double {
        if let reader = readers.withLock({ $0[name] }) { return reader() }
        return state.withLock { state in
            guard let family = state.families[name] else { return 0 }
            return family.values[Self.key(family.labels, labels)] ?? 0
        }
    }

    private func update(_ name: String, _ labels: [String], _ change: (inout Double) -> Void) {
        state.withLock { state in
            guard var family = state.families[name], family.kind != .histogram else { return }
            let key = Self.key(family.labels, labels)
            var value =
                family.values[key]
                ?? {
                    family.order.append(key)
                    return 0
                }()
            change(&value)
            family.values[key] = value
            state.families[name] = family
        }
    }

    /// Every family in the text format, in the order declared.
    package func render() -> String {
        let read = readers.withLock { $0 }.mapValues { $0() }
        return state.withLock { state in
            var text = ""
            for name in state.order {
                guard let family = state.families[name] else { continue }
                text += "# HELP \(name) \(Self.escapeHelp(family.help))\n# TYPE \(name) \(family.kind.rawValue)\n"
                if let value = read[name] {
                    text += "\(name) \(Self.number(value))\n"
                    continue
                }
                for key in family.order {
                    if family.kind == .histogram, let histogram = family.histograms[key] {
                        for (index, bound) in family.buckets.enumerated() {
                            text +=
                                "\(name)_bucket\(Self.with(key, "le", Self.number(bound))) \(histogram.counts[index])\n"
                        }
                        text += "\(name)_bucket\(Self.with(key, "le", "+Inf")) \(histogram.count)\n"
                        text +=
                            "\(name)_sum\(key) \(Self.number(histogram.sum))\n\(name)_count\(key) \(histogram.count)\n"
                    } else if let value = family.values[key] {
                        text += "\(name)\(key) \(Self.number(value))\n"
                    }
                }
            }
            return text
        }
    }

    /// `{a="x",b="y"}`, or nothing for no labels.
    private static func key(_ names: [String], _ values: [String]) -> String {
        guard !names.isEmpty else { return "" }
        let pairs = zip(names, values + Array(repeating: "", count: max(0, names.count - values.count)))
        return "{" + pairs.map { "\($0)=\"\(escapeLabel($1))\"" }.joined(separator: ",") + "}"
    }

    /// `key` with one more label.
    private static func with(_ key: String, _ name: String, _ value: String) -> String {
        key.isEmpty ? "{\(name)=\"\(value)\"}" : String(key.dropLast()) + ",\(name)=\"\(value)\"}"
    }

    private static func escapeLabel(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Whole numbers without a fraction, others as Swift prints a Double.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
