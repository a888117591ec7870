import Entitlements
import Glibc
import HTTPServer
import PurchaseVerifier
import ReceiptCrypto
import ReceiptJWS
import ReceiptLedger
import ReceiptModel
import ReceiptVerifier
import StrictJSON
import ZoneInfo

/// The receipt service's request handling, independent of how requests arrive: routing (the table in
/// `Routes.swift`), authentication, the endpoints, metrics and one structured log line per request.
/// ``ReceiptServer`` puts it behind HTTP.
public final class ReceiptService: Sendable {
    let configuration: ServiceConfiguration
    let ledger: any TransactionLedger
    let verifier: ReceiptVerifier
    /// Apple's signed data (notifications, StoreKit 2 transactions), when `apple_notifications` is configured.
    let signedData: JWSVerifier?
    /// Checks the tokens of Apple's server API paths, when `store_api` is configured.
    let apiTokens: APITokenVerifier?
    /// Delivers the outbox, when `store_api` has an app with notification URLs; ``ReceiptServer`` starts and
    /// stops it.
    let notificationSender: NotificationSender?
    let metrics: ServiceMetrics
    /// Receipts signed for `latest_receipt` and restores, by the content they cover.
    let signedReceipts = SignedReceiptCache()
    /// The console's signed-in sessions.
    let consoleSessions = ConsoleSessions()
    /// Verifies whatever the console's inspector is given, against every anchor the service trusts and through its
    /// `intermediates`; nil when the console is off.
    let inspector: PurchaseVerifier?
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
        metrics = ServiceMetrics(droppedLogLines: droppedLogLines, clock: clock)
        if configuration.console != nil && configuration.tokens.isEmpty {
            throw ServiceConfigurationError(
                path: "console.enabled", rule: "is true but no tokens are configured to sign in with")
        }
        do {
            inspector = try configuration.console.map { _ throws(CryptoError) in
                try PurchaseVerifier(
                    trustAnchors: configuration.trustAnchors + (configuration.appleNotifications?.trustAnchors ?? []),
                    intermediates: configuration.intermediates, limits: configuration.verificationLimits)
            }
        } catch {
            throw ServiceConfigurationError(path: "trust", rule: "\(error)")
        }
        do {
            verifier = try ReceiptVerifier(
                trustAnchors: configuration.trustAnchors, limits: configuration.verificationLimits)
        } catch {
            throw ServiceConfigurationError(path: "trust", rule: "\(error)")
        }
        do {
            signedData = try configuration.appleNotifications.map { settings throws(CryptoError) in
                try JWSVerifier(trustAnchors: settings.trustAnchors)
            }
        } catch {
            throw ServiceConfigurationError(path: "apple_notifications.trust", rule: "\(error)")
        }
        do {
            pacificTime = try TimeZoneRules.system(Self.pacificZoneName)
        } catch {
            throw ServiceConfigurationError(
                path: "",
                rule: "verifyReceipt's *_pst dates need the system's time-zone data for \(Self.pacificZoneName) "
                    + "(Debian: apt-get install tzdata): \(error)")
        }
        apiTokens = configuration.storeAPI.map { api in
            APITokenVerifier(keys: api.keys, bundleIDs: Set(api.apps.map(\.bundleID)))
        }
        notificationSender = configuration.storeAPI.flatMap { api in
            guard api.apps.contains(where: { !$0.notificationURLs.isEmpty }) else { return nil }
            return NotificationSender(
                ledger: ledger, retrySeconds: api.notificationRetrySeconds, clock: clock,
                log: { message in log(Self.eventLine(clock(), "notification_delivery", message)) })
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

    /// Answers one request, waiting for any write it makes. Never throws and never traps: every failure is a JSON
    /// error response.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        answer(request).waitForResponse()
    }

    /// Answers one request as ``handle(_:)`` does, but without waiting on the calling thread: a handler that waits
    /// for a commit is answered ``HTTPAnswer/waiting(_:)``, and one that replies after its writes, with a ledger
    /// that completes them in the background (``TransactionLedger/completesWritesInBackground``), is answered
    /// later, on the ledger's thread, its metrics and log line with it.
    public func answer(_ request: HTTPRequest) -> HTTPAnswer {
        let started = Self.monotonicSeconds()
        let (template, found) = route(request)
        switch found {
        case .failure(let error):
            return .response(finish(request, template, .failure(error), started: started))
        case .success((let route, let parameters)) where waits(route):
            return .waiting { self.answer(request, route, parameters, started: started) }
        case .success((let route, let parameters)):
            return answer(request, route, parameters, started: started)
        }
    }

    /// The answer of `route`'s handler to `request`, started at `started`.
    private func answer(
        _ request: HTTPRequest, _ route: Route, _ parameters: [String: String], started: Double
    ) -> HTTPAnswer {
        switch reply(route, request, parameters) {
        case .success(.response(let response)):
            return .response(finish(request, route.template, .success(response), started: started))
        case .failure(let error):
            return .response(finish(request, route.template, .failure(error), started: started))
        case .success(.afterWrite(let start)):
            return .later { responder in
                start { result in
                    responder.respond { self.finish(request, route.template, result, started: started) }
                }
            }
        }
    }

    /// Room for a request's log line (about 150 bytes) before it has to grow.
    private static let logLineCapacity = 256

    /// The response to send for `outcome`, once its metrics and log line are recorded.
    private func finish(
        _ request: HTTPRequest, _ route: String, _ outcome: Result<HTTPResponse, ServiceError>, started: Double
    ) -> HTTPResponse {
        var response: HTTPResponse
        switch outcome {
        case .success(let answer): response = answer
        case .failure(let error): response = error.response
        }
        if Self.isConsolePath(request.path) { response.headers += Self.consoleHeaders }
        let seconds = Self.monotonicSeconds() - started
        metrics.recordRequest(route: route, status: response.status, seconds: seconds)
        var line: [UInt8] = []
        line.reserveCapacity(Self.logLineCapacity)
        JSONObjectWriter.write(to: &line) { line in
            line.add(LogKeys.time, rfc3339: clock())
            line.add(LogKeys.method, string: request.method)
            line.add(LogKeys.route, string: route)
            line.add(LogKeys.status, integer: Int64(response.status))
            line.add(LogKeys.duration, .fixedPoint(Int64((seconds * 1_000_000).rounded()), places: 3))
            line.add(LogKeys.requestBytes, integer: Int64(request.body.count))
            line.add(LogKeys.responseBytes, integer: Int64(response.body.count))
            if case .failure(let error) = outcome { line.add(LogKeys.error, string: error.code) }
        }
        log(String(decoding: line, as: UTF8.self))
        return response
    }

    /// Requires `Authorization: Bearer TOKEN` with a configured token, compared in constant time. The scheme's
    /// name is case-insensitive (RFC 9110 §11.1: `bearer`, `BEARER`); one or more spaces separate it from the token.
    func authenticate(_ request: HTTPRequest) throws(ServiceError) {
        let challenge = [("WWW-Authenticate", "Bearer")]
        guard let token = Self.bearerToken(request) else {
            throw ServiceError(
                status: 401, code: "unauthorized", message: "this endpoint requires Authorization: Bearer TOKEN",
                headers: challenge)
        }
        guard isConfiguredToken(token) else {
            throw ServiceError(
                status: 401, code: "unauthorized", message: "the bearer token is not valid", headers: challenge)
        }
    }

    /// Whether `token` is one of the configured tokens, compared in constant time: the SHA-256 of what is
    /// presented against each token's, every one of them compared.
    func isConfiguredToken(_ token: [UInt8]) -> Bool {
        let presented = DigestAlgorithm.sha256.hash(token[...])
        var matched = false
        for digest in tokenDigests where constantTimeEquals(digest, presented) { matched = true }
        return matched
    }

    /// The token of `Authorization: Bearer TOKEN` (the scheme's name in any case, one or more spaces after it), or
    /// nil when the request has none.
    static func bearerToken(_ request: HTTPRequest) -> [UInt8]? {
        let header = Array((request.header("authorization") ?? "").utf8)
        let schemeEnd = header.firstIndex(of: UInt8(ascii: " ")) ?? header.endIndex
        let token = header[schemeEnd...].drop { $0 == UInt8(ascii: " ") }
        guard String(decoding: header[..<schemeEnd], as: UTF8.self).lowercased() == "bearer", !token.isEmpty else {
            return nil
        }
        return Array(token)
    }

    /// The keys of a request's log line, made once: every request writes them.
    private enum LogKeys {
        static let time = JSONKey("time")
        static let method = JSONKey("method")
        static let route = JSONKey("route")
        static let status = JSONKey("status")
        static let duration = JSONKey("duration_ms")
        static let requestBytes = JSONKey("request_bytes")
        static let responseBytes = JSONKey("response_bytes")
        static let error = JSONKey("error")
    }

    /// A log line for something that is not a request: `{"time", "event", "message"}`.
    static func eventLine(_ time: ReceiptDate, _ event: String, _ message: String) -> String {
        var line: [UInt8] = []
        JSONObjectWriter.write(to: &line) { line in
            line.add("time", string: time.rfc3339)
            line.add("event", string: event)
            line.add("message", string: message)
        }
        return String(decoding: line, as: UTF8.self)
    }

    private static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
