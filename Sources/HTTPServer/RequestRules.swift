/// Why a request is refused before it reaches the handler: the status and the JSON error's code and message.
/// Every refusal closes the connection after its answer, so nothing the client sent after the refused request
/// can be read as another request.
struct RequestRejection: Error, Equatable {
    var status: Int
    var code: String
    /// A fixed sentence (never echoing the request), so that it needs no JSON escaping.
    var message: String

    init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }
}

/// The rules every request head must follow, whether it is read by ``ConnectionGate`` from the socket or by
/// libmicrohttpd on a kept-alive connection: RFC 9112's grammar without its tolerances, and framing that can be
/// read only one way (RFC 9112 §6.1 and §6.3), because a proxy in front may read an ambiguous request differently
/// and hide a second request inside the first.
enum RequestRules {
    /// The longest request target accepted; longer ones get 414.
    static let maximumTargetBytes = 8 << 10
    /// The longest head (request line, header fields and the empty line) accepted; longer ones get 431.
    static let maximumHeadBytes = 16 << 10
    /// The most header fields accepted; more get 431.
    static let maximumFieldCount = 100

    /// Checks the request line's parts: a token method, a target of visible ASCII within the length limit, and
    /// HTTP/1.0 or HTTP/1.1.
    static func checkRequestLine(method: some Collection<UInt8>, target: some Collection<UInt8>, version: [UInt8])
        throws(RequestRejection)
    {
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else {
            throw RequestRejection(400, "invalid_request_line", "the request method is not a token")
        }
        guard target.count <= maximumTargetBytes else {
            throw RequestRejection(414, "uri_too_long", "the request target exceeds \(maximumTargetBytes) bytes")
        }
        guard !target.isEmpty, target.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw RequestRejection(
                400, "invalid_request_line", "the request target must be visible ASCII, percent-encoded")
        }
        guard version.elementsEqual("HTTP/1.1".utf8) || version.elementsEqual("HTTP/1.0".utf8) else {
            let isVersion =
                version.count == 8 && version.starts(with: "HTTP/".utf8)
                && isDigit(version[5]) && version[6] == UInt8(ascii: ".") && isDigit(version[7])
            guard isVersion else {
                throw RequestRejection(400, "invalid_request_line", "the request line does not end in an HTTP version")
            }
            throw RequestRejection(505, "http_version_not_supported", "this server speaks HTTP/1.0 and HTTP/1.1")
        }
    }

    /// Checks one field's name (a token: no whitespace before the colon) and value (no control characters but
    /// horizontal tab: no NUL, CR or LF inside it).
    static func checkField(name: some Collection<UInt8>, value: some Collection<UInt8>) throws(RequestRejection) {
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            throw RequestRejection(400, "invalid_header", "a header field name is not a token")
        }
        guard value.allSatisfy(isFieldValueByte) else {
            throw RequestRejection(400, "invalid_header", "a header field value holds a control character")
        }
    }

    /// Checks how the body is delimited, and the fields that must not be repeated, over the whole head. The values
    /// are without surrounding whitespace.
    ///
    /// - both `Content-Length` and `Transfer-Encoding`, or either of them twice: 400;
    /// - a `Transfer-Encoding` other than `chunked` alone: 501; in an HTTP/1.0 request: 400;
    /// - a `Content-Length` that is not digits: 400; one over `maximumBodyBytes`: 413;
    /// - `Host` missing from an HTTP/1.1 request, or twice; `Authorization` twice: 400.
    static func checkFraming<Name: Collection<UInt8>, Value: Collection<UInt8>>(
        version: [UInt8], fields: [(name: Name, value: Value)], maximumBodyBytes: Int
    ) throws(RequestRejection) {
        guard fields.count <= maximumFieldCount else {
            throw RequestRejection(
                431, "headers_too_large", "the request has more than \(maximumFieldCount) header fields")
        }
        // One pass over the fields, nothing copied: how often each framing field appears, and the first value.
        var lengths = 0
        var codings = 0
        var hosts = 0
        var authorizations = 0
        var length: Value?
        var coding: Value?
        for field in fields {
            if nameMatches(field.name, lowercaseName: "content-length".utf8) {
                lengths += 1
                length = length ?? field.value
            } else if nameMatches(field.name, lowercaseName: "transfer-encoding".utf8) {
                codings += 1
                coding = coding ?? field.value
            } else if nameMatches(field.name, lowercaseName: "host".utf8) {
                hosts += 1
            } else if nameMatches(field.name, lowercaseName: "authorization".utf8) {
                authorizations += 1
            }
        }
        guard lengths <= 1 else {
            throw RequestRejection(400, "conflicting_framing", "the request has more than one Content-Length")
        }
        guard codings <= 1 else {
            throw RequestRejection(400, "conflicting_framing", "the request has more than one Transfer-Encoding")
        }
        let isHTTP11 = version.elementsEqual("HTTP/1.1".utf8)
        if let coding {
            guard length == nil else {
                throw RequestRejection(
                    400, "conflicting_framing", "the request has both Content-Length and Transfer-Encoding")
            }
            guard isHTTP11 else {
                throw RequestRejection(400, "conflicting_framing", "an HTTP/1.0 request cannot use Transfer-Encoding")
            }
            guard nameMatches(coding, lowercaseName: "chunked".utf8) else {
                throw RequestRejection(
                    501, "unsupported_transfer_encoding", "the only transfer coding accepted is chunked, alone")
            }
        }
        if let length {
            guard !length.isEmpty, length.allSatisfy(isDigit) else {
                throw RequestRejection(400, "invalid_content_length", "the Content-Length is not a decimal number")
            }
            // Leading zeros are allowed; past 18 significant digits a length is over any limit (and over what
            // libmicrohttpd can read, which it answers with its 413 written twice).
            let digits = length.drop { $0 == UInt8(ascii: "0") }
            let value = digits.count > 18 ? Int.max : digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard value <= maximumBodyBytes else {
                throw bodyTooLarge(limit: maximumBodyBytes)
            }
        }
        guard hosts <= 1 else {
            throw RequestRejection(400, "duplicate_header", "the request has more than one Host")
        }
        guard hosts == 1 || !isHTTP11 else {
            throw RequestRejection(400, "missing_host", "an HTTP/1.1 request must have a Host")
        }
        guard authorizations <= 1 else {
            throw RequestRejection(400, "duplicate_header", "the request has more than one Authorization")
        }
    }

    /// RFC 9110 §5.6.2: `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// RFC 9110 §5.5: `field-vchar`, space or horizontal tab.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80
    }

    /// Space or horizontal tab (`OWS`).
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09
    }

    /// `bytes` without the optional whitespace around a field value.
    static func trimmed<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start != end && isWhitespace(bytes[start]) { start = bytes.index(after: start) }
        while start != end && isWhitespace(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return bytes[start..<end]
    }

    /// Whether `text` is `lowercaseName` (a name in lower case) but for the case of ASCII letters, compared without
    /// making a string.
    static func nameMatches(_ text: String, lowercaseName: String) -> Bool {
        nameMatches(text.utf8, lowercaseName: lowercaseName.utf8)
    }

    /// ``nameMatches(_:lowercaseName:)`` on the names' bytes.
    static func nameMatches(_ name: some Collection<UInt8>, lowercaseName: some Collection<UInt8>) -> Bool {
        name.count == lowercaseName.count && zip(name, lowercaseName).allSatisfy { lowercased($0) == $1 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}
