import Foundation
import HTTPServer
import ReceiptLedger
import ReceiptModel
import StrictJSON
import Synchronization
import Testing

@testable import ReceiptService

/// Signing in to the console, its sessions, CSRF and origin checks, its pages and the headers on every answer.
@Suite("The console's sessions and pages")
struct ConsoleSessionTests {
    static let securityHeaders = [
        "content-security-policy":
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "x-frame-options": "DENY",
        "cache-control": "no-store",
    ]

    /// A SQLite ledger in a new directory, and the directory to remove afterwards.
    static func ledger() throws -> (SQLiteLedger, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("console-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (try SQLiteLedger(path: directory.appendingPathComponent("ledger.sqlite").path), directory)
    }

    @Test("without console configured every /console path answers 404")
    func consoleOff() throws {
        let fixture = try ServiceFixture()
        for path in ["/console", "/console/", "/console/sign-in", "/console/console.js", "/console/api/session"] {
            #expect(try fixture.send("GET", path, token: nil).status == 404, "\(path)")
        }
        #expect(try fixture.send("POST", "/console/sign-in", body: Array("token=x".utf8), token: nil).status == 404)
    }

    @Test("the console is refused at start when enabled without tokens")
    func needsTokens() throws {
        var configuration = ServiceConfiguration(
            environment: .production, ledgerPath: "", trustAnchors: [ServiceFixture.chain.root])
        configuration.console = ServiceConfiguration.Console()
        let (ledger, directory) = try Self.ledger()
        defer {
            ledger.close()
            try? FileManager.default.removeItem(at: directory)
        }
        #expect(throws: ServiceConfigurationError.self) {
            try ReceiptService(configuration: configuration, ledger: ledger)
        }
    }

    @Test("the configuration file's console is off unless enabled, and session_minutes must be 5 to 1440")
    func configurationFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("console-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(ServiceFixture.chain.root.derEncoded).write(to: directory.appendingPathComponent("root.der"))
        func parse(_ console: String) throws -> ServiceConfiguration {
            let text =
                #"{"environment": "Production", "ledger": "l.sqlite", "trust": ["root.der"], "#
                + #""tokens": ["\#(ServiceFixture.token)"], "console": \#(console)}"#
            return try ServiceConfiguration(json: Array(text.utf8), baseDirectory: directory.path)
        }
        #expect(try parse(#"{"enabled": false}"#).console == nil)
        #expect(try parse(#"{}"#).console == nil)
        #expect(
            try parse(#"{"enabled": true, "secure_cookie": true, "session_minutes": 30}"#).console
                == ServiceConfiguration.Console(secureCookie: true, sessionMinutes: 30))
        #expect(try parse(#"{"enabled": true}"#).console == ServiceConfiguration.Console())
        #expect(throws: ServiceConfigurationError.self) { try parse(#"{"enabled": true, "session_minutes": 4}"#) }
        #expect(throws: ServiceConfigurationError.self) { try parse(#"{"enabled": true, "colour": "red"}"#) }
    }

    @Test("GET /console answers 303 to /console/")
    func slashRedirect() throws {
        let reply = try ConsoleFixture().send("GET", "/console")
        #expect(reply.status == 303)
        #expect(reply.headers["location"] == "/console/")
    }

    @Test("the sign-in page, the script and the style sheet are served as they are, with their types")
    func staticFiles() throws {
        let fixture = try ConsoleFixture()
        for (path, file, type) in [
            ("/console/sign-in", "sign-in.html", "text/html; charset=utf-8"),
            ("/console/console.js", "console.js", "text/javascript; charset=utf-8"),
            ("/console/console.css", "console.css", "text/css; charset=utf-8"),
        ] {
            let reply = try fixture.send("GET", path)
            #expect(reply.status == 200, "\(path)")
            #expect(reply.headers["content-type"] == type, "\(path)")
            #expect(reply.body == (try ConsoleFixture.file(file)), "\(path)")
        }
    }

    @Test("signing in with a configured token answers 303 to /console/ with the session cookie")
    func signIn() throws {
        let reply = try ConsoleFixture().signIn()
        #expect(reply.status == 303)
        #expect(reply.headers["location"] == "/console/")
        let cookie = try #require(reply.headers["set-cookie"])
        let parts = cookie.components(separatedBy: "; ")
        let id = try #require(ConsoleFixture.sessionID(cookie))
        #expect(id.count == 43)
        #expect(id.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(Set(parts.dropFirst()) == ["Path=/console", "HttpOnly", "SameSite=Strict", "Max-Age=28800"])
    }

    @Test("the cookie is Secure when secure_cookie is configured")
    func secureCookie() throws {
        let cookie = try #require(try ConsoleFixture(secureCookie: true).signIn().headers["set-cookie"])
        #expect(cookie.hasSuffix("; Secure"))
        #expect(cookie.components(separatedBy: "; ").count == 6)
    }

    @Test("a wrong token is sent back to the form with failed=1, no cookie, and counted")
    func wrongToken() throws {
        let fixture = try ConsoleFixture()
        let reply = try fixture.signIn(token: "not-the-token-0123456789abcdef0123456789")
        #expect(reply.status == 303)
        #expect(reply.headers["location"] == "/console/sign-in?failed=1")
        #expect(reply.headers["set-cookie"] == nil)
        let missing = try fixture.send("POST", "/console/sign-in", body: Array("other=1".utf8))
        #expect(missing.headers["location"] == "/console/sign-in?failed=1")
        let metrics = try fixture.service.send("GET", "/metrics", token: nil).text
        #expect(metrics.contains("receipt_console_failed_sign_ins_total 2\n"))
    }

    @Test("every /console/api path and sign-out answer 401 without a session")
    func apiNeedsSession() throws {
        let fixture = try ConsoleFixture()
        for (method, path) in ReceiptService.routes.filter({ $0.access == .console }).map({ ($0.method, $0.template) })
        {
            let reply = try fixture.send(method, path)
            #expect(reply.status == 401, "\(method) \(path)")
            #expect(
                try reply.json()
                    == .object(
                        JSONObject([
                            "error": .object(
                                JSONObject([
                                    "code": .string("unauthorized"), "message": .string("sign in to the console"),
                                ]))
                        ])), "\(method) \(path)")
        }
    }

    @Test("GET /console/ without a session answers 303 to the sign-in page, with one the console page")
    func consolePage() throws {
        let fixture = try ConsoleFixture()
        for path in ["/console/", "/console/index.html"] {
            let signedOut = try fixture.send("GET", path)
            #expect(signedOut.status == 303, "\(path)")
            #expect(signedOut.headers["location"] == "/console/sign-in", "\(path)")
        }
        let page = try fixture.send("GET", "/console/", session: fixture.session())
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.body == (try ConsoleFixture.file("index.html")))
    }

    @Test("GET /console/api/session answers the CSRF token, unlike the session id, and when it ends")
    func sessionInfo() throws {
        let fixture = try ConsoleFixture()
        let before = ReceiptService.systemTime()
        let session = try fixture.session()
        let info = try fixture.send("GET", "/console/api/session", session: session).json()
        #expect(session.csrfToken.count == 43 && session.csrfToken != session.id)
        guard case .string(let text)? = info["expires"], let expires = ReceiptDate(rfc3339: text) else {
            Issue.record("no expires: \(info)")
            return
        }
        let lifetime = expires.secondsSince1970 - before.secondsSince1970
        #expect((28_799...28_801).contains(lifetime))
    }

    @Test("a POST without the session's X-CSRF-Token, or with a wrong one, answers 403 csrf")
    func csrf() throws {
        let fixture = try ConsoleFixture()
        let session = try fixture.session()
        let cookie = ["Cookie": "\(ConsoleFixture.cookieName)=\(session.id)"]
        let without = try fixture.send("POST", "/console/sign-out", headers: cookie)
        #expect(without.status == 403)
        #expect(without.errorCode == "csrf")
        let wrong = try fixture.send(
            "POST", "/console/sign-out", headers: cookie.merging(["X-CSRF-Token": session.id]) { $1 })
        #expect(wrong.status == 403)
        #expect(wrong.errorCode == "csrf")
        #expect(try fixture.send("GET", "/console/api/session", session: session).status == 200)
    }

    @Test("a POST whose Origin is not this host answers 403, one from this host is taken")
    func foreignOrigin() throws {
        let fixture = try ConsoleFixture()
        let foreign = try fixture.signIn(headers: ["Origin": "https://evil.example"])
        #expect(foreign.status == 403)
        #expect(foreign.errorCode == "foreign_origin")
        #expect(foreign.headers["set-cookie"] == nil)
        let session = try fixture.session()
        let signOut = try fixture.send(
            "POST", "/console/sign-out", session: session, headers: ["Origin": "http://127.0.0.1:1"])
        #expect(signOut.status == 403)
        let own = try fixture.signIn(headers: ["Origin": "http://127.0.0.1:\(fixture.service.server.port)"])
        #expect(own.status == 303)
        #expect(own.headers["set-cookie"] != nil)
    }

    @Test("signing out ends the session and clears the cookie; the old cookie then answers 401")
    func signOut() throws {
        let fixture = try ConsoleFixture()
        let session = try fixture.session()
        let reply = try fixture.send("POST", "/console/sign-out", session: session)
        #expect(reply.status == 303)
        #expect(reply.headers["location"] == "/console/sign-in")
        #expect(reply.headers["set-cookie"] == "receipt_console=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0")
        #expect(try fixture.send("GET", "/console/api/session", session: session).status == 401)
    }

    @Test("a session past its end answers 401")
    func expiry() throws {
        let now = Mutex(ReceiptDate(millisecondsSince1970: 1_717_200_000_000))
        var configuration = ServiceConfiguration(
            environment: .production, ledgerPath: "", trustAnchors: [ServiceFixture.chain.root],
            tokens: [ServiceFixture.token])
        configuration.console = ServiceConfiguration.Console(sessionMinutes: 5)
        let (ledger, directory) = try Self.ledger()
        defer {
            ledger.close()
            try? FileManager.default.removeItem(at: directory)
        }
        let service = try ReceiptService(
            configuration: configuration, ledger: ledger, clock: { now.withLock { $0 } })
        let signIn = service.handle(
            HTTPRequest(
                method: "POST", path: "/console/sign-in", body: Array("token=\(ServiceFixture.token)".utf8)))
        let cookie = try #require(signIn.headers.first { $0.name == "Set-Cookie" }?.value)
        let request = HTTPRequest(
            method: "GET", path: "/console/api/session",
            headers: [("cookie", cookie.components(separatedBy: ";")[0])])
        now.withLock { $0 = ReceiptDate(millisecondsSince1970: $0.millisecondsSince1970 + 299_999) }
        #expect(service.handle(request).status == 200)
        now.withLock { $0 = ReceiptDate(millisecondsSince1970: $0.millisecondsSince1970 + 1) }
        #expect(service.handle(request).status == 401)
    }

    @Test("every /console answer carries the security headers: pages, files, API, redirects and errors")
    func securityHeaders() throws {
        let fixture = try ConsoleFixture()
        let session = try fixture.session()
        let replies = [
            try fixture.send("GET", "/console/sign-in"), try fixture.send("GET", "/console/console.js"),
            try fixture.send("GET", "/console/"), try fixture.send("GET", "/console/", session: session),
            try fixture.send("GET", "/console/api/session", session: session),
            try fixture.send("GET", "/console/api/session"), try fixture.send("GET", "/console/nowhere"),
            try fixture.send("DELETE", "/console/sign-in"), try fixture.signIn(),
        ]
        for reply in replies {
            for (name, value) in Self.securityHeaders {
                #expect(reply.headers[name] == value, "\(reply.status) \(name)")
            }
        }
    }

    @Test("the request log holds neither the token nor the session id")
    func logs() throws {
        let fixture = try ConsoleFixture()
        let session = try fixture.session()
        _ = try fixture.send("POST", "/console/sign-out", session: session)
        let lines = fixture.service.logs.all
        #expect(lines.count == 3)
        for line in lines {
            #expect(!line.contains(ServiceFixture.token))
            #expect(!line.contains(session.id))
            #expect(!line.contains(session.csrfToken))
        }
    }

    @Test("the session store holds at most its capacity, dropping expired sessions first, then the first to end")
    func bounded() throws {
        let sessions = ConsoleSessions()
        let start = ReceiptDate(millisecondsSince1970: 1_717_200_000_000)
        let expired = try sessions.create(now: start, minutes: 5)
        let first = try sessions.create(now: ReceiptDate(millisecondsSince1970: 1_717_200_600_000), minutes: 5)
        let later = ReceiptDate(millisecondsSince1970: 1_717_200_700_000)
        for _ in 2..<ConsoleSessions.capacity { _ = try sessions.create(now: later, minutes: 60) }
        #expect(sessions.count == ConsoleSessions.capacity)
        let next = try sessions.create(now: later, minutes: 60)
        #expect(sessions.count == ConsoleSessions.capacity)
        #expect(sessions.session(expired.id, now: start) == nil)
        #expect(sessions.session(first.id, now: later) != nil)
        _ = try sessions.create(now: later, minutes: 60)
        #expect(sessions.count == ConsoleSessions.capacity)
        #expect(sessions.session(first.id, now: later) == nil)
        #expect(sessions.session(next.id, now: later) != nil)
    }
}
