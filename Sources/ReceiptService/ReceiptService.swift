import Entitlements
import Glibc
import HTTPServer
import ReceiptCrypto
import ReceiptLedger
import ReceiptModel
import ReceiptVerifier
import StrictJSON
import ZoneInfo

/// The receipt service's request handling, independent of how requests arrive: routing, authentication, the
/// endpoints, metrics and one structured log line per request. ``ReceiptServer`` puts it behind HTTP.
///
/// | route | auth | does |
/// |---|---|---|
/// | `POST /verifyReceipt` | optional | Apple's verifyReceipt, same request and response |
/// | `POST /v1/transactions` | token | records a completed transaction (idempotent) |
/// | `POST /v1/transactions/{id}/cancellation` | token | records a refund |
/// | `GET /v1/customers/{customer}/receipt?bundle_id=` | token | a freshly signed receipt of all their purchases |
/// | `POST /v1/entitlements` | optional | what verified receipts unlock now |
/// | `GET /healthz`, `GET /metrics` | none | liveness, Prometheus metrics |
public final class ReceiptService: Sendable {
    let configuration: ServiceConfiguration
    let ledger: any TransactionLedger
    let verifier: ReceiptVerifier
    let metrics: ServiceMetrics
    private let tokenDigests: [[UInt8]]
    private let log: @Sendable (String) -> Void
    let clock: @Sendable () -> ReceiptDate
    /// America/Los_Angeles from the system's time-zone database: the zone of Apple's `*_pst` dates.
    let pacificTime: TimeZoneRules

    /// A service over `ledger`; `log` receives one JSON line per request (no receipt contents, no secrets) on the
    /// thread serving it, so it must not block (``LogLineQueue/append(_:)`` does not), `droppedLogLines` tells how
    /// many lines that log has dropped (for `/metrics`), and `clock` tells the time (the system's by default).
    public init(
        configuration: ServiceConfiguration,
        ledger: any TransactionLedger,
        log: @escaping @Sendable (String) -> Void = { _ in },
        droppedLogLines: @escaping @Sendable () -> Int = { 0 },
        clock: @escaping @Sendable () -> ReceiptDate = ReceiptService.systemTime
    ) throws(ServiceConfigurationError) {
        self.configuration = configuration
        self.ledger = ledger
        metrics = ServiceMetrics(droppedLogLines: droppedLogLines)
        do {
            verifier = try ReceiptVerifier(
                trustAnchors: configuration.trustAnchors, limits: configuration.verificationLimits)
        } catch {
            throw ServiceConfigurationError(path: "trust", rule: "\(error)")
        }
        do {
            pacificTime = try TimeZoneRules.system(Self.pacificZoneName)
        } catch {
            throw ServiceConfigurationError(
                path: "",
                rule: "verifyReceipt's *_pst dates need the system's time-zone data for \(Self.pacificZoneName) "
                    + "(Debian: apt-get install tzdata): \(error)")
        }
        tokenDigests = configuration.tokens.map { DigestAlgorithm.sha256.hash(Array($0.utf8)[...]) }
        self.log = log
        self.clock = clock
    }

    /// The zone of the `*_pst` twins in Apple's verifyReceipt answers, with its daylight-saving rules.
    public static let pacificZoneName = "America/Los_Angeles"

    /// The current time, to the millisecond.
    public static let systemTime: @Sendable () -> ReceiptDate = {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return ReceiptDate(millisecondsSince1970: Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000)
    }

    /// Answers one request. Never throws and never traps: every failure is a JSON error response.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let started = Self.monotonicSeconds()
        let (route, outcome) = route(request)
        let response: HTTPResponse
        switch outcome {
        case .success(let answer): response = answer
        case .failure(let error): response = error.response
        }
        let seconds = Self.monotonicSeconds() - started
        metrics.recordRequest(route: route, status: response.status, seconds: seconds)
        var line = JSONObject([
            "time": .string(clock().rfc3339), "method": .string(request.method), "route": .string(route),
            "status": .integer(response.status), "duration_ms": .number(String(format3(seconds * 1000))),
            "request_bytes": .integer(request.body.count), "response_bytes": .integer(response.body.count),
        ])
        if case .failure(let error) = outcome { line["error"] = .string(error.code) }
        log(JSONValue.object(line).serialized())
        return response
    }

    /// The route template (for metrics and logs) and the endpoint's answer.
    private func route(_ request: HTTPRequest) -> (String, Result<HTTPResponse, ServiceError>) {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        let method = request.method
        func answer(
            _ route: String, _ allowed: String, auth: Bool,
            _ body: () throws(ServiceError) -> HTTPResponse
        ) -> (String, Result<HTTPResponse, ServiceError>) {
            guard method == allowed else {
                return (
                    route,
                    .failure(
                        ServiceError(
                            status: 405, code: "method_not_allowed", message: "\(route) accepts \(allowed) only",
                            headers: [("Allow", allowed)]))
                )
            }
            do throws(ServiceError) {
                if auth { try authenticate(request) }
                return (route, .success(try body()))
            } catch {
                return (route, .failure(error))
            }
        }
        switch segments {
        case ["verifyReceipt"]:
            // Apple answers a request that is not a POST with status 21000 rather than an HTTP error.
            guard method == "POST" else { return ("/verifyReceipt", .success(verifyReceiptStatus(21000))) }
            return answer("/verifyReceipt", "POST", auth: configuration.verifyRequiresToken) {
                () throws(ServiceError) in
                try verifyReceipt(request)
            }
        case ["v1", "transactions"]:
            return answer("/v1/transactions", "POST", auth: true) { () throws(ServiceError) in
                try recordTransaction(request)
            }
        case let path
        where path.count == 4 && path[0] == "v1" && path[1] == "transactions" && path[3] == "cancellation":
            return answer("/v1/transactions/{id}/cancellation", "POST", auth: true) { () throws(ServiceError) in
                try recordCancellation(request, transactionID: try Self.percentDecoded(path[2], name: "transaction id"))
            }
        case let path where path.count == 4 && path[0] == "v1" && path[1] == "customers" && path[3] == "receipt":
            return answer("/v1/customers/{customer}/receipt", "GET", auth: true) { () throws(ServiceError) in
                try customerReceipt(request, customerID: try Self.percentDecoded(path[2], name: "customer id"))
            }
        case ["v1", "entitlements"]:
            return answer("/v1/entitlements", "POST", auth: configuration.verifyRequiresToken) {
                () throws(ServiceError) in
                try entitlements(request)
            }
        case ["healthz"]:
            return answer("/healthz", "GET", auth: false) { () throws(ServiceError) in try health() }
        case ["metrics"]:
            return answer("/metrics", "GET", auth: false) { () throws(ServiceError) in
                HTTPResponse(
                    status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
                    body: Array(metrics.prometheusText(ledgerTransactions: try? ledger.count()).utf8))
            }
        default:
            return (
                "other",
                .failure(ServiceError(status: 404, code: "not_found", message: "no endpoint at \(request.path)"))
            )
        }
    }

    /// Requires `Authorization: Bearer TOKEN` with a configured token, compared in constant time. The scheme's
    /// name is case-insensitive (RFC 9110 §11.1: `bearer`, `BEARER`); one or more spaces separate it from the token.
    private func authenticate(_ request: HTTPRequest) throws(ServiceError) {
        let challenge = [("WWW-Authenticate", "Bearer")]
        let header = Array((request.header("authorization") ?? "").utf8)
        let schemeEnd = header.firstIndex(of: UInt8(ascii: " ")) ?? header.endIndex
        let token = header[schemeEnd...].drop { $0 == UInt8(ascii: " ") }
        guard String(decoding: header[..<schemeEnd], as: UTF8.self).lowercased() == "bearer", !token.isEmpty else {
            throw ServiceError(
                status: 401, code: "unauthorized", message: "this endpoint requires Authorization: Bearer TOKEN",
                headers: challenge)
        }
        let presented = DigestAlgorithm.sha256.hash(Array(token)[...])
        var matched = false
        for digest in tokenDigests where constantTimeEquals(digest, presented) { matched = true }
        guard matched else {
            throw ServiceError(
                status: 401, code: "unauthorized", message: "the bearer token is not valid", headers: challenge)
        }
    }

    private func health() throws(ServiceError) -> HTTPResponse {
        do {
            let count = try ledger.count()
            return .json(JSONObject(["status": .string("ok"), "ledger_transactions": .integer(count)]))
        } catch {
            throw ServiceError(status: 503, code: "ledger_unavailable", message: "\(error)")
        }
    }

    /// A path segment with its percent-escapes decoded; malformed escapes or invalid UTF-8 are refused.
    static func percentDecoded(_ segment: String, name: String) throws(ServiceError) -> String {
        var bytes: [UInt8] = []
        var iterator = segment.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw .badRequest("the \(name) in the path has a malformed percent-escape")
            }
            bytes.append(high << 4 | low)
        }
        guard let text = String(validating: bytes, as: UTF8.self), !text.isEmpty else {
            throw .badRequest("the \(name) in the path must be non-empty UTF-8")
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// `value` with three decimals, as JSON number text.
private func format3(_ value: Double) -> String {
    let thousandths = Int64((value * 1000).rounded())
    let whole = thousandths / 1000
    let fraction = String(thousandths % 1000)
    return "\(whole).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
}
