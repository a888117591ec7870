import Glibc
import ReceiptModel
import Synchronization

/// Counters and latency histograms of one running service, written in Prometheus' text format (version 0.0.4).
/// Labels are bounded: routes are templates (`/v1/customers/{customer_id}/receipt`), never raw paths. The last
/// hour is also counted minute by minute (``lastHour()``), for the console's overview.
final class ServiceMetrics: Sendable {
    /// Minutes kept by ``lastHour()``.
    static let minutesKept = 60

    /// What happened in one minute: answers, those with a status of 400 or more, and verifications by outcome.
    struct Minute: Equatable, Sendable {
        /// The minute, counted from 1970 (its start is `minute * 60` seconds).
        var minute: Int64
        var requests = 0
        var errors = 0
        var verifications: [String: Int] = [:]

        mutating func add(_ other: Minute) {
            requests += other.requests
            errors += other.errors
            verifications.merge(other.verifications, uniquingKeysWith: +)
        }
    }

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
        /// The last ``minutesKept`` minutes, each in the slot its number modulo ``minutesKept`` picks.
        var minutes = (0..<ServiceMetrics.minutesKept).map { _ in Minute(minute: -1) }

        /// The slot of `minute`, emptied first when it holds an older minute.
        mutating func withMinute(_ minute: Int64, _ count: (inout Minute) -> Void) {
            let kept = Int64(ServiceMetrics.minutesKept)
            let slot = Int((minute % kept + kept) % kept)
            if minutes[slot].minute != minute { minutes[slot] = Minute(minute: minute) }
            count(&minutes[slot])
        }

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
    /// Sign-ins to the console refused for a wrong or missing token.
    private let failedSignIns = Atomic<Int>(0)
    /// The service's clock, which places each count in its minute.
    private let clock: @Sendable () -> ReceiptDate

    init(droppedLogLines: @escaping @Sendable () -> Int = { 0 }, clock: @escaping @Sendable () -> ReceiptDate) {
        self.droppedLogLines = droppedLogLines
        self.clock = clock
    }

    /// Counts one answered request and its latency.
    func recordRequest(route: String, status: Int, seconds: Double) {
        let bucket = Self.latencyBuckets.firstIndex { seconds <= $0 }
        let minute = currentMinute()
        shard().state.withLock { state in
            state.requests[RequestKey(route: route, status: status), default: 0] += 1
            state.latency[route, default: Histogram()].add(seconds, bucket: bucket)
            state.withMinute(minute) { counts in
                counts.requests += 1
                if status >= 400 { counts.errors += 1 }
            }
        }
    }

    /// Counts one receipt verified: `valid` or the error code.
    func recordVerification(outcome: String) {
        let minute = currentMinute()
        shard().state.withLock { state in
            state.verifications[outcome, default: 0] += 1
            state.withMinute(minute) { $0.verifications[outcome, default: 0] += 1 }
        }
    }

    /// Counts one console sign-in refused.
    func recordFailedSignIn() {
        failedSignIns.add(1, ordering: .relaxed)
    }

    /// The last ``minutesKept`` minutes, the current one last; minutes with nothing counted are there with zeros.
    func lastHour() -> [Minute] {
        let now = currentMinute()
        var hour = (0..<Int64(Self.minutesKept)).map { Minute(minute: now - Int64(Self.minutesKept) + 1 + $0) }
        for shard in shards {
            let minutes = shard.state.withLock { $0.minutes }
            for counts in minutes where counts.minute > now - Int64(Self.minutesKept) && counts.minute <= now {
                hour[Int(counts.minute - hour[0].minute)].add(counts)
            }
        }
        return hour
    }

    private func currentMinute() -> Int64 {
        let milliseconds = clock().millisecondsSince1970
        return milliseconds >= 0 ? milliseconds / 60_000 : (milliseconds - 59_999) / 60_000
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
            "# HELP receipt_console_failed_sign_ins_total Console sign-ins refused for a wrong or missing token.",
            "# TYPE receipt_console_failed_sign_ins_total counter",
            "receipt_console_failed_sign_ins_total \(failedSignIns.load(ordering: .relaxed))",
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
