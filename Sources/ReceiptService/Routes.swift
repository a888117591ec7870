import HTTPServer

/// Every endpoint of the service in one table: method, path template, who may call it, and the handler. Each
/// endpoint family lives in its own file (`…Endpoint.swift`); authentication is declared here, never re-checked
/// inside a handler.
extension ReceiptService {
    /// Who may call a route.
    enum Access: Sendable {
        /// Only with a configured bearer token.
        case token
        /// Anyone, unless `verify_requires_token` asks for a token.
        case verification
        /// Anyone.
        case open
        /// Apple's server API: a JWT of a configured API key (``APITokenVerifier``), whose `bid` the handler gets as
        /// ``ReceiptService/tokenBundleParameter``; errors are Apple's error bodies.
        case storeAPI
        /// The console's API: a live session cookie, and on a POST the session's `X-CSRF-Token` and an `Origin`
        /// (when sent) of this host; 401 without a session. The handler gets the session id as
        /// ``ReceiptService/consoleSessionParameter``.
        case console
        /// A console page: as ``console``, but without a session the browser is sent to the sign-in page (303).
        case consolePage
        /// Signing in to the console: anyone, on a POST with an `Origin` (when sent) of this host.
        case consoleSignIn
    }

    /// What a route's handler gives back: its response, or a write handed to the ledger and the answer once it
    /// completes.
    enum Reply: Sendable {
        case response(HTTPResponse)
        /// The function starts the write and gives the answer to its argument once the write completes, on
        /// whatever thread the ledger completes it (see ``TransactionLedger/completesWritesInBackground``).
        case afterWrite(@Sendable (@escaping @Sendable (Result<HTTPResponse, ServiceError>) -> Void) -> Void)
    }

    /// One endpoint. Templates name their parameters in braces (`{transaction_id}`); a parameter is one path
    /// segment, percent-decoded strictly into non-empty UTF-8 of at most ``maximumIdentifierLength`` bytes.
    struct Route: Sendable {
        /// The method it answers.
        let method: String
        let template: String
        let access: Access
        let work: Work
        let handle: @Sendable (ReceiptService, HTTPRequest, [String: String]) throws(ServiceError) -> Reply

        /// How a route's handler spends its time, which decides the thread it runs on.
        enum Work: Sendable {
            /// It computes: it runs on the server's thread that read the request.
            case computes
            /// It mostly waits for a durable write to be committed: it runs on a thread of its own
            /// (``HTTPAnswer/waiting(_:)``), and such writes from many connections wait, and are committed,
            /// together.
            case waitsForWrites
            /// It replies once its writes complete (``Reply/afterWrite(_:)``): on the server's thread with a ledger
            /// that completes writes in the background, which never waits; as ``waitsForWrites`` with one that
            /// completes them on the calling thread.
            case repliesAfterWrites
        }

        init(
            _ method: String, _ template: String, _ access: Access, waits: Bool = false,
            _ handle:
                @escaping @Sendable (ReceiptService, HTTPRequest, [String: String]) throws(ServiceError) ->
                HTTPResponse
        ) {
            self.init(method, template, access, work: waits ? .waitsForWrites : .computes) {
                (service, request, parameters) throws(ServiceError) in
                .response(try handle(service, request, parameters))
            }
        }

        /// A route whose handler replies once its writes complete (``Work/repliesAfterWrites``).
        init(
            _ method: String, _ template: String, _ access: Access,
            replying handle:
                @escaping @Sendable (ReceiptService, HTTPRequest, [String: String]) throws(ServiceError) -> Reply
        ) {
            self.init(method, template, access, work: .repliesAfterWrites, handle)
        }

        private init(
            _ method: String, _ template: String, _ access: Access, work: Work,
            _ handle:
                @escaping @Sendable (ReceiptService, HTTPRequest, [String: String]) throws(ServiceError) -> Reply
        ) {
            self.method = method
            self.template = template
            self.access = access
            self.work = work
            self.handle = handle
            segments = ReceiptService.segments(template)
        }

        /// The template's path segments, split once.
        let segments: [Substring]
    }

    /// Longest identifier accepted anywhere (product, transaction, bundle, customer ids), as Apple's are.
    static let maximumIdentifierLength = 255

    static let routes: [Route] = [
        Route("POST", "/verifyReceipt", .verification) { (service, request, _) throws(ServiceError) in
            try service.verifyReceipt(request)
        },
        // Apple answers a GET with status 21000 rather than an HTTP error.
        Route("GET", "/verifyReceipt", .open) { (service, _, _) throws(ServiceError) in
            service.verifyReceiptStatus(21000)
        },
        Route(
            "POST", "/v1/transactions", .token,
            replying: { (service, request, _) throws(ServiceError) in
                try service.recordTransaction(request)
            }),
        Route(
            "POST", "/v1/transactions/{transaction_id}/cancellation", .token,
            replying: { (service, request, parameters) throws(ServiceError) in
                try service.recordCancellation(request, transactionID: parameters["transaction_id"] ?? "")
            }),
        Route("GET", "/v1/customers/{customer_id}/receipt", .token) {
            (service, request, parameters) throws(ServiceError) in
            try service.customerReceipt(request, customerID: parameters["customer_id"] ?? "")
        },
        Route("GET", "/v1/customers/{customer_id}/entitlements", .token) {
            (service, request, parameters) throws(ServiceError) in
            try service.customerEntitlements(request, customerID: parameters["customer_id"] ?? "")
        },
        Route("POST", "/v1/receipts", .token, waits: true) { (service, request, _) throws(ServiceError) in
            try service.recordReceipt(request)
        },
        // Apple sends no token: trust comes from the notification's signature.
        Route("POST", "/v1/notifications/apple", .open, waits: true) { (service, request, _) throws(ServiceError) in
            try service.receiveNotification(request)
        },
        Route("GET", "/v1/notifications", .token) { (service, request, _) throws(ServiceError) in
            try service.listNotifications(request)
        },
        Route("POST", "/v1/entitlements", .verification) { (service, request, _) throws(ServiceError) in
            try service.entitlements(request)
        },
        Route("GET", "/inApps/v1/transactions/{transactionId}", .storeAPI) {
            (service, _, parameters) throws(ServiceError) in
            try service.storeTransactionInfo(
                bundleID: parameters[tokenBundleParameter] ?? "", transactionID: parameters["transactionId"] ?? "")
        },
        Route("GET", "/inApps/v2/history/{transactionId}", .storeAPI) {
            (service, request, parameters) throws(ServiceError) in
            try service.storeTransactionHistory(
                request, bundleID: parameters[tokenBundleParameter] ?? "",
                transactionID: parameters["transactionId"] ?? "")
        },
        // Version 1 of Get Transaction History, still the default of Apple's libraries, answers as version 2.
        Route("GET", "/inApps/v1/history/{transactionId}", .storeAPI) {
            (service, request, parameters) throws(ServiceError) in
            try service.storeTransactionHistory(
                request, bundleID: parameters[tokenBundleParameter] ?? "",
                transactionID: parameters["transactionId"] ?? "")
        },
        Route("GET", "/inApps/v2/refund/lookup/{transactionId}", .storeAPI) {
            (service, request, parameters) throws(ServiceError) in
            try service.storeRefundHistory(
                request, bundleID: parameters[tokenBundleParameter] ?? "",
                transactionID: parameters["transactionId"] ?? "")
        },
        Route("GET", "/inApps/v1/subscriptions/{transactionId}", .storeAPI) {
            (service, request, parameters) throws(ServiceError) in
            try service.storeSubscriptionStatuses(
                request, bundleID: parameters[tokenBundleParameter] ?? "",
                transactionID: parameters["transactionId"] ?? "")
        },
        Route("POST", "/inApps/v1/notifications/test", .storeAPI, waits: true) {
            (service, _, parameters) throws(ServiceError) in
            try service.requestTestNotification(bundleID: parameters[tokenBundleParameter] ?? "")
        },
        Route("GET", "/inApps/v1/notifications/test/{testNotificationToken}", .storeAPI) {
            (service, _, parameters) throws(ServiceError) in
            try service.testNotificationStatus(
                bundleID: parameters[tokenBundleParameter] ?? "", token: parameters["testNotificationToken"] ?? "")
        },
        Route("POST", "/inApps/v1/notifications/history", .storeAPI) {
            (service, request, parameters) throws(ServiceError) in
            try service.notificationHistory(request, bundleID: parameters[tokenBundleParameter] ?? "")
        },
        Route("GET", "/console", .open) { (_, _, _) throws(ServiceError) in seeOther("/console/") },
        Route("GET", "/console/sign-in", .open) { (_, _, _) throws(ServiceError) in
            consoleFile(PackageResources.sign_in_html, type: "text/html; charset=utf-8")
        },
        Route("POST", "/console/sign-in", .consoleSignIn) { (service, request, _) throws(ServiceError) in
            try service.consoleSignIn(request)
        },
        Route("POST", "/console/sign-out", .console) { (service, _, parameters) throws(ServiceError) in
            service.consoleSignOut(sessionID: parameters[consoleSessionParameter] ?? "")
        },
        Route("GET", "/console/", .consolePage) { (_, _, _) throws(ServiceError) in
            consoleFile(PackageResources.index_html, type: "text/html; charset=utf-8")
        },
        Route("GET", "/console/index.html", .consolePage) { (_, _, _) throws(ServiceError) in
            consoleFile(PackageResources.index_html, type: "text/html; charset=utf-8")
        },
        Route("GET", "/console/console.js", .open) { (_, _, _) throws(ServiceError) in
            consoleFile(PackageResources.console_js, type: "text/javascript; charset=utf-8")
        },
        Route("GET", "/console/console.css", .open) { (_, _, _) throws(ServiceError) in
            consoleFile(PackageResources.console_css, type: "text/css; charset=utf-8")
        },
        Route("GET", "/console/api/session", .console) { (service, _, parameters) throws(ServiceError) in
            try service.consoleSessionInfo(sessionID: parameters[consoleSessionParameter] ?? "")
        },
        Route("POST", "/console/api/inspect", .console) { (service, request, _) throws(ServiceError) in
            try service.consoleInspect(request)
        },
        Route("GET", "/console/api/customer", .console) { (service, request, _) throws(ServiceError) in
            try service.consoleCustomer(request)
        },
        Route("GET", "/console/api/notifications", .console) { (service, request, _) throws(ServiceError) in
            try service.consoleNotifications(request)
        },
        Route("GET", "/console/api/overview", .console) { (service, _, _) throws(ServiceError) in
            service.consoleOverview()
        },
        Route("GET", "/healthz", .open) { (service, _, _) throws(ServiceError) in try service.health() },
        Route("GET", "/metrics", .open) { (service, _, _) throws(ServiceError) in service.metricsText() },
        Route("GET", "/openapi.json", .open) { (_, _, _) throws(ServiceError) in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: openAPIDocument)
        },
    ]

    /// This service's interface as an OpenAPI 3.1 document (`Sources/ReceiptService/openapi.json`, compiled in).
    public static let openAPIDocument: [UInt8] = PackageResources.openapi_json

    /// Whether `route`'s handler runs on a thread of its own (``HTTPAnswer/waiting(_:)``) with this ledger.
    func waits(_ route: Route) -> Bool {
        switch route.work {
        case .computes: false
        case .waitsForWrites: true
        case .repliesAfterWrites: !ledger.completesWritesInBackground
        }
    }

    /// The path's segments after its leading `/` (`/v1/transactions` is `v1`, `transactions`), as templates are
    /// split: at every `/` byte (RFC 3986 §3.3), not at whole characters. One array, sized at once (a segment
    /// follows each `/`).
    private static func segments(_ path: String) -> [Substring] {
        let utf8 = path.utf8
        let slash = UInt8(ascii: "/")
        var segments: [Substring] = []
        segments.reserveCapacity(utf8.count(where: { $0 == slash }))
        var start: String.Index?
        for index in utf8.indices where utf8[index] == slash {
            if let start { segments.append(Substring(utf8[start..<index])) }
            start = utf8.index(after: index)
        }
        if let start { segments.append(Substring(utf8[start...])) }
        return segments
    }

    /// The route template (for metrics and logs) and the route `request` goes to with its raw parameters, or the
    /// error to answer: 404 for a path no route has, 405 with `Allow` for a method the path does not take.
    func route(_ request: HTTPRequest) -> (String, Result<(Route, [String: String]), ServiceError>) {
        if configuration.console == nil && Self.isConsolePath(request.path) {
            return ("other", .failure(Self.consoleOff))
        }
        let path = Self.segments(request.path)
        var allowed: [String] = []
        var template: String?
        for route in Self.routes where route.segments.count == path.count {
            guard let parameters = Self.match(route.segments, path) else { continue }
            template = route.template
            guard route.method == request.method else {
                allowed.append(route.method)
                continue
            }
            return (route.template, .success((route, parameters)))
        }
        guard let template else {
            return (
                "other", .failure(ServiceError(status: 404, code: "not_found", message: "no endpoint at this path"))
            )
        }
        let methods = allowed.joined(separator: ", ")
        return (
            template,
            .failure(
                ServiceError(
                    status: 405, code: "method_not_allowed", message: "\(template) accepts \(methods) only",
                    headers: [("Allow", methods)]))
        )
    }

    /// What `route`'s handler replies to `request`, after the route's access is checked and its parameters decoded.
    func reply(_ route: Route, _ request: HTTPRequest, _ parameters: [String: String]) -> Result<
        Reply, ServiceError
    > {
        do throws(ServiceError) {
            var decoded: [String: String] = [:]
            switch route.access {
            case .token: try authenticate(request)
            case .verification where configuration.verifyRequiresToken: try authenticate(request)
            case .verification, .open: break
            case .storeAPI: decoded[Self.tokenBundleParameter] = try authenticateStoreAPI(request)
            case .console, .consolePage, .consoleSignIn:
                decoded[Self.consoleSessionParameter] = try authenticateConsole(request, route.access)?.id
            }
            for (name, segment) in parameters {
                do throws(ServiceError) {
                    decoded[name] = try Self.identifier(percentDecoding: segment, name: name)
                } catch  where route.access == .storeAPI {
                    throw Self.invalidStoreAPIParameter(name, error.message)
                }
            }
            switch try route.handle(self, request, decoded) {
            case .response(let response): return .success(.response(response))
            case .afterWrite(let start) where route.access == .storeAPI:
                return .success(.afterWrite { reply in start { reply($0.mapError(\.inAppleShape)) } })
            case .afterWrite(let start): return .success(.afterWrite(start))
            }
        } catch {
            return .failure(route.access == .storeAPI ? error.inAppleShape : error)
        }
    }

    /// The raw parameter segments when `path` fits the template `segments`, else nil.
    private static func match(_ segments: [Substring], _ path: [Substring]) -> [String: String]? {
        guard segments.count == path.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, given) in zip(segments, path) {
            if segment.hasPrefix("{") && segment.hasSuffix("}") {
                parameters[String(segment.dropFirst().dropLast())] = String(given)
            } else if segment != given {
                return nil
            }
        }
        return parameters
    }

    /// A path segment with its percent-escapes decoded (``PercentDecoding``); malformed escapes, invalid UTF-8, an
    /// empty value or one longer than ``maximumIdentifierLength`` bytes are refused naming the parameter.
    static func identifier(percentDecoding segment: String, name: String) throws(ServiceError) -> String {
        guard let text = PercentDecoding.decode(segment) else {
            throw .badRequest("\(name) in the path is not percent-encoded UTF-8")
        }
        guard !text.isEmpty else { throw .badRequest("\(name) in the path must not be empty") }
        guard text.utf8.count <= maximumIdentifierLength else {
            throw .badRequest("\(name) in the path must be at most \(maximumIdentifierLength) bytes")
        }
        return text
    }
}
