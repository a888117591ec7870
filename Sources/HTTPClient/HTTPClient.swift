/// A small blocking HTTP/1.1 client for plain `http://` URLs: one connection per request, closed after it
/// (`Connection: close`), every step (resolution aside) bounded by one deadline for the whole request.
///
/// The calling thread blocks until the response is complete, the deadline passes, or the request fails; a
/// receiver that accepts and never answers, or that sends without end, is cut at the deadline. A closed connection
/// never raises SIGPIPE. Host names are resolved with `getaddrinfo`, which cannot be interrupted: a slow name server
/// holds the call for as long as the system resolver's own timeouts allow.
public struct HTTPClient: Sendable {
    /// The `User-Agent` header sent with every request.
    public var userAgent: String
    /// The most body bytes a response keeps (a negative bound keeps none); beyond them the connection is closed and
    /// ``HTTPClientResponse/isBodyTruncated`` is set.
    public var maximumBodyBytes: Int

    /// The header names the client writes itself, which a caller may not pass.
    private static let reservedHeaders: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "user-agent",
    ]

    /// Creates a client; it holds no connections or other resources.
    public init(userAgent: String = "openreceipt", maximumBodyBytes: Int = 65536) {
        self.userAgent = userAgent
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Throws ``HTTPClientError/Code/unsupportedURL``, naming the rule, when ``post(_:body:headers:timeout:)``
    /// would refuse `url` before sending anything: for checking configured URLs before they are used.
    public static func checkURL(_ url: String) throws(HTTPClientError) {
        _ = try HTTPURL(url)
    }

    /// Sends `POST` with `body` to `url` (`http://host[:port]/path?query`, the host a name, an IPv4 literal or a
    /// bracketed IPv6 literal) and returns the response, whatever its status, once it is complete.
    ///
    /// The request carries `Host`, `User-Agent`, `Content-Length` and `Connection: close`, then `headers` in the
    /// order given. Each address the host resolves to is tried in turn, each with a share of the time left.
    ///
    /// - Parameter timeout: the time allowed for the whole request: connecting, sending and reading the response.
    /// - Throws: ``HTTPClientError``; its ``HTTPClientError/code`` says which step failed and how.
    public func post(_ url: String, body: [UInt8], headers: [(String, String)] = [], timeout: Duration)
        throws(HTTPClientError) -> HTTPClientResponse
    {
        let deadline = Deadline(after: timeout)
        let target = try HTTPURL(url)
        let request = try requestHead(target, bodyCount: body.count, headers: headers) + body
        let socket = try ClientSocket.connect(host: target.host, port: target.port, deadline: deadline)
        try socket.send(request)
        var reader = ResponseReader(source: socket, peer: socket.peer, maximumBodyBytes: max(0, maximumBodyBytes))
        return try reader.read()
    }

    /// The request line and header section, or ``HTTPClientError/Code/invalidRequest`` when a header cannot be
    /// written.
    private func requestHead(_ url: HTTPURL, bodyCount: Int, headers: [(String, String)]) throws(HTTPClientError)
        -> [UInt8]
    {
        var fields = [("Host", url.hostHeader), ("User-Agent", userAgent), ("Content-Length", String(bodyCount))]
        fields.append(("Connection", "close"))
        for (name, value) in headers {
            guard !Self.reservedHeaders.contains(name.lowercased()) else {
                throw HTTPClientError(.invalidRequest, "the header \(name) is written by the client itself")
            }
            fields.append((name, value))
        }
        var head = "POST \(url.target) HTTP/1.1\r\n"
        for (name, value) in fields {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                throw HTTPClientError(.invalidRequest, "\"\(name)\" is not a valid header name")
            }
            guard value.utf8.allSatisfy(isFieldValueByte),
                value.first != " ", value.last != " "
            else {
                throw HTTPClientError(
                    .invalidRequest, "the value of the header \(name) has a control character or surrounding spaces")
            }
            head += "\(name): \(value)\r\n"
        }
        return Array((head + "\r\n").utf8)
    }
}
