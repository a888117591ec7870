/// A request's head (request line and header fields) as read straight from the socket by ``ConnectionGate``,
/// before libmicrohttpd sees any of it, held to ``RequestRules``: lines end in CRLF and nothing else, no NUL or
/// other control character anywhere, no whitespace before a field's colon, no folded lines.
struct RequestHead {
    var method: [UInt8]
    var target: [UInt8]
    var version: [UInt8]
    /// Names as sent, values without the whitespace around them.
    var fields: [(name: [UInt8], value: [UInt8])]
    /// How many bytes the head takes, from the first byte received to the empty line's LF.
    var length: Int

    /// What the bytes received so far make of the head.
    enum Reading {
        /// Acceptable so far; more bytes are needed.
        case incomplete
        case complete(RequestHead)
        case rejected(RequestRejection)
    }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
    private static let space = UInt8(ascii: " ")

    /// Reads the head at the start of `bytes` (everything the client has sent so far). It is rejected as soon as
    /// one of its complete lines breaks a rule, or when it grows past ``RequestRules/maximumHeadBytes`` without
    /// ending.
    static func read(_ bytes: [UInt8], maximumBodyBytes: Int) -> Reading {
        do throws(RequestRejection) {
            return try parse(bytes, maximumBodyBytes: maximumBodyBytes)
        } catch {
            return .rejected(error)
        }
    }

    private static func parse(_ bytes: [UInt8], maximumBodyBytes: Int) throws(RequestRejection) -> Reading {
        var index = 0
        // RFC 9112 §2.2: empty lines before the request line are ignored.
        while index + 1 < bytes.count, bytes[index] == cr, bytes[index + 1] == lf {
            index += 2
        }
        var requestLine: (method: [UInt8], target: [UInt8], version: [UInt8])?
        var fields: [(name: [UInt8], value: [UInt8])] = []
        while let end = try lineEnd(in: bytes, from: index) {
            let line = bytes[index..<end]
            index = end + 2
            guard index <= RequestRules.maximumHeadBytes else {
                throw tooLarge(inRequestLine: requestLine == nil)
            }
            guard let request = requestLine else {
                requestLine = try parseRequestLine(line)
                continue
            }
            if line.isEmpty {
                try RequestRules.checkFraming(
                    version: request.version, fields: fields, maximumBodyBytes: maximumBodyBytes)
                return .complete(
                    RequestHead(
                        method: request.method, target: request.target, version: request.version, fields: fields,
                        length: index))
            }
            fields.append(try parseField(line))
            guard fields.count <= RequestRules.maximumFieldCount else {
                throw RequestRejection(
                    431, "headers_too_large",
                    "the request has more than \(RequestRules.maximumFieldCount) header fields")
            }
        }
        guard bytes.count <= RequestRules.maximumHeadBytes else {
            throw tooLarge(inRequestLine: requestLine == nil)
        }
        return .incomplete
    }

    /// The index of the CR ending the line that starts at `start`, or nil when the line is not complete yet;
    /// throws at a CR not followed by LF or an LF not preceded by CR.
    private static func lineEnd(in bytes: [UInt8], from start: Int) throws(RequestRejection) -> Int? {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case cr:
                guard index + 1 < bytes.count else { return nil }
                guard bytes[index + 1] == lf else {
                    throw RequestRejection(400, "invalid_header", "the request has a CR not followed by LF")
                }
                return index
            case lf:
                throw RequestRejection(400, "invalid_header", "the request has a line ending in LF without CR")
            default:
                index += 1
            }
        }
        return nil
    }

    /// `method SP request-target SP HTTP-version`, one space each.
    private static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(RequestRejection)
        -> (method: [UInt8], target: [UInt8], version: [UInt8])
    {
        let parts = line.split(separator: space, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw RequestRejection(
                400, "invalid_request_line", "the request line must be a method, a target and a version")
        }
        let version = Array(parts[2])
        try RequestRules.checkRequestLine(method: parts[0], target: parts[1], version: version)
        return (Array(parts[0]), Array(parts[1]), version)
    }

    /// `field-name ":" OWS field-value OWS`; a line starting with whitespace (obsolete folding) is refused.
    private static func parseField(_ line: ArraySlice<UInt8>) throws(RequestRejection) -> (
        name: [UInt8], value: [UInt8]
    ) {
        guard let first = line.first, !RequestRules.isWhitespace(first) else {
            throw RequestRejection(400, "invalid_header", "a header field line starts with whitespace (folding)")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw RequestRejection(400, "invalid_header", "a header field line has no colon")
        }
        let name = line[..<colon]
        let value = line[(colon + 1)...]
        try RequestRules.checkField(name: name, value: value)
        return (Array(name), Array(RequestRules.trimmed(value)))
    }

    private static func tooLarge(inRequestLine: Bool) -> RequestRejection {
        inRequestLine
            ? RequestRejection(
                414, "uri_too_long", "the request target exceeds \(RequestRules.maximumTargetBytes) bytes")
            : RequestRejection(
                431, "headers_too_large", "the request head exceeds \(RequestRules.maximumHeadBytes) bytes")
    }
}
