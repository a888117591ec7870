import Foundation
import ReceiptService

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A service with the console on, and requests sent as a browser sends them: no bearer token, the session's cookie
/// when given, redirects not followed.
struct ConsoleFixture {
    /// What signing in gave: the cookie's value and the session's CSRF token.
    struct Session {
        let id: String
        let csrfToken: String
    }

    let service: ServiceFixture

    /// The service with `console` configured (`secureCookie` as given); `adjust` changes the configuration last.
    init(secureCookie: Bool = false, adjust: (inout ServiceConfiguration) -> Void = { _ in }) throws {
        service = try ServiceFixture { configuration in
            configuration.console = ServiceConfiguration.Console(secureCookie: secureCookie)
            adjust(&configuration)
        }
    }

    /// Requests to `service`, which has the console configured.
    init(service: ServiceFixture) {
        self.service = service
    }

    /// One request, with the session's cookie and (on a POST) its CSRF token when `session` is given.
    func send(
        _ method: String, _ path: String, body: [UInt8]? = nil, session: Session? = nil,
        headers: [String: String] = [:]
    ) throws -> HTTPReply {
        guard let url = URL(string: service.baseURL + path) else { throw FixtureError("bad URL \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body.map { Data($0) }
        if let session {
            request.setValue("\(Self.cookieName)=\(session.id)", forHTTPHeaderField: "Cookie")
            if method == "POST" { request.setValue(session.csrfToken, forHTTPHeaderField: "X-CSRF-Token") }
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try HTTPReply.fetch(request, followingRedirects: false)
    }

    /// `POST /console/sign-in` with `token=…` as the sign-in form sends it.
    func signIn(token: String = ServiceFixture.token, headers: [String: String] = [:]) throws -> HTTPReply {
        let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token
        return try send(
            "POST", "/console/sign-in", body: Array("token=\(encoded)".utf8),
            headers: ["Content-Type": "application/x-www-form-urlencoded"].merging(headers) { $1 })
    }

    /// Signs in and reads the session's CSRF token.
    func session() throws -> Session {
        let reply = try signIn()
        guard let cookie = reply.headers["set-cookie"], let id = Self.sessionID(cookie) else {
            throw FixtureError("sign-in set no cookie: \(reply.status) \(reply.headers)")
        }
        let info = try send("GET", "/console/api/session", session: Session(id: id, csrfToken: ""))
        guard case .string(let csrf)? = try info.json()["csrf_token"] else {
            throw FixtureError("no csrf_token: \(info.status) \(info.text)")
        }
        return Session(id: id, csrfToken: csrf)
    }

    static let cookieName = "receipt_console"

    /// The session id a `Set-Cookie` value sets.
    static func sessionID(_ setCookie: String) -> String? {
        guard setCookie.hasPrefix("\(cookieName)=") else { return nil }
        return setCookie.dropFirst(cookieName.count + 1).split(separator: ";").first.map(String.init)
    }

    /// A console file as it is in the source tree.
    static func file(_ name: String) throws -> [UInt8] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return [UInt8](try Data(contentsOf: root.appendingPathComponent("Sources/ReceiptService/Console/\(name)")))
    }
}
