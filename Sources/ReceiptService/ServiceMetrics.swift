import Glibc
import Synchronization

/// Counters and latency histograms of one running service, written in Prometheus' text format (version 0.0.4).
/// Labels are bounded: routes are templates (`/v1/customers/{customer_id}/receipt`), never raw paths.
final class ServiceMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds.
    static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct RequestKey: Hashable {
        let route: String
        let status: Int
    }

    private struct Histogram {
        var counts = [Int](repeating: 0, count: ServiceMetrics.latencyBuckets.count)
        var sum = 0.0
        var count = 0

        mutating func add(_ seconds: Double, bucket: Int?) {
            if let bucket { counts[bucket] += 1 }
            sum += seconds
            count += 1
        }
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var latency: [String: Histogram] = [:]
        var verifications: [String: Int] = [:]

        mutating func add(_ other: State) {
            requests.merge(other.requests, uniquingKeysWith: +)
            verifications.merge(other.verifications, uniquingKeysWith: +)
            for (route, histogram) in other.latency {
                var merged = latency[route] ?? Histogram()
                merged.counts = zip(merged.counts, histogram.counts).map(+)
                merged.sum += histogram.sum
                merged.count += histogram.count
                latency[route] = merged
            }
        }
    }

    /// One part of the counts, behind its own lock.
    private final class Shard: Sendable {
        let state = Mutex(State())
    }

    /// The counts in parts, each thread counting into the one its identity picks, so that threads answering at
    /// once seldom wait for each other's lock; ``prometheusText(ledgerTransactions:)`` adds them up.
    private let shards = (0..<16).map { _ in Shard() }
    /// How many request log lines were dropped because the log's reader fell behind (``LogLineQueue``).
    private let droppedLogLines: @Sendable () -> Int

    init(droppedLogLines: @escaping @Sendable () -> Int = { 0 }) {
        self.droppedLogLines = droppedLogLines
    }

    /// Counts one answered request and its latency.
    func recordRequest(route: String, status: Int, seconds: Double) {
        let bucket = Self.latencyBuckets.firstIndex { seconds <= $0 }
        shard().state.withLock { state in
            state.requests[RequestKey(route: route, status: status), default: 0] += 1
            state.latency[route, default: Histogram()].add(seconds, bucket: bucket)
        }
    }

    /// Counts one receipt verified: `valid` or the error code.
    func recordVerification(outcome: String) {
        shard().state.withLock { $0.verifications[outcome, default: 0] += 1 }
    }

    private func shard() -> Shard {
        var hasher = Hasher()
        hasher.combine(pthread_self())
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
    }

    /// Everything, with the ledger's size when it could be read.
    func prometheusText(ledgerTransactions: Int?) -> String {
        var state = State()
        for shard in shards {
            state.add(shard.state.withLock { $0 })
        }
        var lines: [String] = [
            "# HELP receipt_http_requests_total HTTP requests answered, by route and status.",
            "# TYPE receipt_http_requests_total counter",
        ]
        for (key, count) in state.requests.sorted(by: { ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status) })
        {
            lines.append("receipt_http_requests_total{route=\"\(key.route)\",status=\"\(key.status)\"} \(count)")
        }
        lines += [
            "# HELP receipt_http_request_duration_seconds Time from a complete request to its response, by route.",
            "# TYPE receipt_http_request_duration_seconds histogram",
        ]
        for (route, histogram) in state.latency.sorted(by: { $0.key < $1.key }) {
            var cumulative = 0
            for (bound, count) in zip(Self.latencyBuckets, histogram.counts) {
                cumulative += count
                lines.append(
                    "receipt_http_request_duration_seconds_bucket{route=\"\(route)\",le=\"\(bound)\"} \(cumulative)")
            }
            lines += [
                "receipt_http_request_duration_seconds_bucket{route=\"\(route)\",le=\"+Inf\"} \(histogram.count)",
                "receipt_http_request_duration_seconds_sum{route=\"\(route)\"} \(histogram.sum)",
                "receipt_http_request_duration_seconds_count{route=\"\(route)\"} \(histogram.count)",
            ]
        }
        lines += [
            "# HELP receipt_verifications_total Receipts verified, by outcome: valid or the error code.",
            "# TYPE receipt_verifications_total counter",
        ]
        for (outcome, count) in state.verifications.sorted(by: { $0.key < $1.key }) {
            lines.append("receipt_verifications_total{outcome=\"\(outcome)\"} \(count)")
        }
        lines += [
            "# HELP receipt_log_lines_dropped_total Request log lines dropped because the log's reader fell behind.",
            "# TYPE receipt_log_lines_dropped_total counter",
            "receipt_log_lines_dropped_total \(droppedLogLines())",
        ]
        if let ledgerTransactions {
            lines += [
                "# HELP receipt_ledger_transactions Transactions recorded in the ledger.",
                "# TYPE receipt_ledger_transactions gauge",
                "receipt_ledger_transactions \(ledgerTransactions)",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
