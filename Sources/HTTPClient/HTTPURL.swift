/// An `http://host[:port]/path?query` URL, the only shape ``HTTPClient`` sends to, checked strictly: what is not
/// understood is refused rather than guessed.
struct HTTPURL {
    /// The host as ``ClientSocket/connect(host:port:deadline:)`` resolves it: a name, an IPv4 literal, or an IPv6
    /// literal without its brackets.
    var host: String
    /// The port, 80 when the URL names none.
    var port: UInt16
    /// The request target: the path (`/` when empty) and `?query` when there is one.
    var target: String
    /// The value of the `Host` header: the host as written (brackets kept), with `:port` when it is not 80.
    var hostHeader: String

    /// Parses `text`, or throws ``HTTPClientError/Code/unsupportedURL`` naming the rule broken.
    init(_ text: String) throws(HTTPClientError) {
        func refuse(_ reason: String) -> HTTPClientError {
            HTTPClientError(.unsupportedURL, "\(reason): \(text)")
        }
        guard let schemeEnd = text.firstRange(of: "://") else {
            throw refuse("the URL has no scheme (http:// is required)")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" else {
            throw refuse(
                scheme == "https"
                    ? "https is not supported (plain http only)" : "the scheme \"\(scheme)\" is not supported")
        }
        guard !text.contains("#") else {
            throw refuse("a fragment (#) is not allowed")
        }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@") else {
            throw refuse("user information (user@host) is not supported")
        }
        let (host, hostHeader, portText) = try Self.split(authority, refuse)
        port = try Self.port(portText, refuse)
        self.host = host
        self.hostHeader = port == 80 ? hostHeader : "\(hostHeader):\(port)"
        let target = rest[authorityEnd...]
        self.target = target.hasPrefix("/") ? String(target) : "/" + target
        try Self.checkTarget(self.target, refuse)
    }

    /// The host (without brackets), the host as written, and the port's digits (nil when there is no `:`).
    private static func split(_ authority: Substring, _ refuse: (String) -> HTTPClientError) throws(HTTPClientError)
        -> (String, String, Substring?)
    {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw refuse("the IPv6 literal has no closing bracket")
            }
            let literal = authority[authority.index(after: authority.startIndex)..<close]
            guard !literal.contains("%") else {
                throw refuse("IPv6 zone identifiers are not supported")
            }
            guard ClientSocket.isIPv6Literal(String(literal)) else {
                throw refuse("\"\(literal)\" is not an IPv6 address")
            }
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else {
                throw refuse("only a port may follow the IPv6 literal")
            }
            return (String(literal), String(authority[...close]), after.isEmpty ? nil : after.dropFirst())
        }
        let colon = authority.firstIndex(of: ":")
        let host = authority[..<(colon ?? authority.endIndex)]
        guard !host.isEmpty else {
            throw refuse("the host is empty")
        }
        if let invalid = host.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0))) }) {
            throw refuse("the host contains \"\(invalid)\" (only letters, digits, '-', '.' and '_' are allowed)")
        }
        if host.allSatisfy({ $0.isNumber || $0 == "." }) && !isIPv4Literal(host) {
            throw refuse("\"\(host)\" is not an IPv4 address (four decimal numbers 0-255 without leading zeros)")
        }
        return (String(host), String(host), colon.map { authority[authority.index(after: $0)...] })
    }

    /// Dotted-decimal with four parts, each 0-255 without leading zeros (which resolvers would read as octal).
    private static func isIPv4Literal(_ host: Substring) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                (1...3).contains(part.count) && (part == "0" || !part.hasPrefix("0"))
                    && Int(part).map { $0 <= 255 } == true
            }
    }

    private static func port(_ digits: Substring?, _ refuse: (String) -> HTTPClientError) throws(HTTPClientError)
        -> UInt16
    {
        guard let digits else {
            return 80
        }
        guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = UInt16(digits), port > 0
        else {
            throw refuse("the port \"\(digits)\" is not a number from 1 to 65535")
        }
        return port
    }

    /// RFC 3986 path and query characters only (unreserved, sub-delims, `:@/?`, and `%` with two hex digits):
    /// anything else, spaces and non-ASCII included, must be percent-encoded by the caller.
    private static func checkTarget(_ target: String, _ refuse: (String) -> HTTPClientError) throws(HTTPClientError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/?%".utf8)
        let bytes = Array(target.utf8)
        for (offset, byte) in bytes.enumerated() {
            guard allowed.contains(byte) else {
                throw refuse(
                    "the path or query contains a byte 0x\(String(byte, radix: 16)) that must be percent-encoded")
            }
            if byte == UInt8(ascii: "%") {
                let digits = bytes.dropFirst(offset + 1).prefix(2)
                guard digits.count == 2, digits.allSatisfy(isHexDigit) else {
                    throw refuse("a '%' in the path or query is not followed by two hex digits")
                }
            }
        }
    }
}
