import HTTPServer
import ReceiptCrypto
import StrictJSON

/// The console's pages and its sessions: `GET /console/sign-in` and `POST /console/sign-in` (a configured token
/// in a form: a session cookie and `/console/`, or back to `/console/sign-in?failed=1`), `POST /console/sign-out`,
/// `GET /console/` (the console itself), its script and style sheet, and `GET /console/api/session` (the CSRF
/// token the page sends back). Every `/console` answer carries ``consoleHeaders``; without `console` configured
/// every `/console` path answers 404.
extension ReceiptService {
    /// The cookie that holds a session id.
    static let consoleCookie = "receipt_console"
    /// The route parameter under which the session id of a request with ``Access/console`` or
    /// ``Access/consolePage`` reaches the handler.
    static let consoleSessionParameter = "@console_session"

    /// What every `/console` answer carries: a policy that allows only the console's own script, style, images
    /// and requests and no framing, no sniffing, no referrer, no caching.
    static let consoleHeaders: [(name: String, value: String)] = [
        (
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Cache-Control", "no-store"),
    ]

    /// The answer for every `/console` path while the console is not configured.
    static let consoleOff = ServiceError(status: 404, code: "not_found", message: "no endpoint at this path")

    /// Whether `path` is the console's: `/console` or anything under `/console/`.
    static func isConsolePath(_ path: String) -> Bool {
        path == "/console" || path.hasPrefix("/console/")
    }

    /// A static file of the console, as compiled in.
    static func consoleFile(_ body: [UInt8], type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", type)], body: body)
    }

    /// `303 See Other` to `location`, with `headers` besides.
    static func seeOther(_ location: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: 303, headers: [("Location", location)] + headers)
    }

    /// The console's checks before a handler runs. Every POST needs an `Origin`, when it has one, of this very
    /// host (`http://` or `https://` and the `Host` header), else 403. ``Access/consoleSignIn`` needs nothing more;
    /// the others need a live session cookie (else 401, or for ``Access/consolePage`` 303 to the sign-in page),
    /// and a POST its `X-CSRF-Token`, compared in constant time (else 403). The session when there is one.
    func authenticateConsole(_ request: HTTPRequest, _ access: Access) throws(ServiceError) -> ConsoleSession? {
        let posts = request.method == "POST"
        if posts, let origin = request.header("origin") {
            let host = request.header("host") ?? ""
            guard !host.isEmpty, origin == "http://\(host)" || origin == "https://\(host)" else {
                throw ServiceError(
                    status: 403, code: "foreign_origin", message: "the console takes POSTs from its own origin only")
            }
        }
        guard access != .consoleSignIn else { return nil }
        guard let id = Self.consoleCookieValue(request), let session = consoleSessions.session(id, now: clock())
        else {
            guard access != .consolePage else {
                throw ServiceError(
                    status: 303, code: "sign_in_required", message: "sign in to the console",
                    headers: [("Location", "/console/sign-in")])
            }
            throw ServiceError(status: 401, code: "unauthorized", message: "sign in to the console")
        }
        if posts {
            guard let presented = request.header("x-csrf-token"),
                constantTimeEquals(Array(presented.utf8), Array(session.csrfToken.utf8))
            else {
                throw ServiceError(
                    status: 403, code: "csrf", message: "this request needs the session's X-CSRF-Token header")
            }
        }
        return session
    }

    /// The value of the ``consoleCookie`` in the request's `Cookie` headers, if any.
    private static func consoleCookieValue(_ request: HTTPRequest) -> String? {
        for header in request.headers where header.name == "cookie" {
            // RFC 6265 §4.2.1: `name=value` pairs separated by "; ".
            for pair in header.value.split(separator: ";") {
                let parts = pair.drop { $0 == " " }.split(
                    separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                if parts.count == 2, parts[0] == consoleCookie { return String(parts[1]) }
            }
        }
        return nil
    }

    /// `POST /console/sign-in`: `token=…` (`application/x-www-form-urlencoded`). A configured token (compared as
    /// ``authenticate(_:)`` compares bearer tokens) opens a session: 303 to `/console/` with its cookie. Anything
    /// else is counted as a failed sign-in and sent back to the form with `?failed=1`, with no cookie.
    func consoleSignIn(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        guard let console = configuration.console else { throw Self.consoleOff }
        guard let token = Self.formValue("token", in: request.body), isConfiguredToken(Array(token.utf8)) else {
            metrics.recordFailedSignIn()
            return Self.seeOther("/console/sign-in?failed=1")
        }
        let session: ConsoleSession
        do {
            session = try consoleSessions.create(now: clock(), minutes: console.sessionMinutes)
        } catch {
            throw ServiceError(status: 500, code: "internal_error", message: "no session could be opened: \(error)")
        }
        var cookie =
            "\(Self.consoleCookie)=\(session.id); Path=/console; HttpOnly; SameSite=Strict; Max-Age="
            + String(console.sessionMinutes * 60)
        if console.secureCookie { cookie += "; Secure" }
        return Self.seeOther("/console/", headers: [("Set-Cookie", cookie)])
    }

    /// `POST /console/sign-out`: the session ends, its cookie is cleared, and the browser goes to the sign-in page.
    func consoleSignOut(sessionID: String) -> HTTPResponse {
        consoleSessions.remove(sessionID)
        return Self.seeOther(
            "/console/sign-in",
            headers: [("Set-Cookie", "\(Self.consoleCookie)=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0")])
    }

    /// `GET /console/api/session`: `{"csrf_token", "expires"}` of the request's session.
    func consoleSessionInfo(sessionID: String) throws(ServiceError) -> HTTPResponse {
        guard let session = consoleSessions.session(sessionID, now: clock()) else {
            throw ServiceError(status: 401, code: "unauthorized", message: "sign in to the console")
        }
        return .json(
            JSONObject(["csrf_token": .string(session.csrfToken), "expires": .string(session.expires.rfc3339)]))
    }

    /// The value of the field `name` in a form body (`a=1&b=2`, `+` for a space), if it is there and decodes.
    private static func formValue(_ name: String, in body: [UInt8]) -> String? {
        for field in body.split(separator: UInt8(ascii: "&")) {
            let parts = field.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, PercentDecoding.decode(bytes: parts[0], plusIsSpace: true) == name else {
                continue
            }
            return PercentDecoding.decode(bytes: parts[1], plusIsSpace: true)
        }
        return nil
    }
}
