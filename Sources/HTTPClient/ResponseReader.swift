/// Where a ``ResponseReader`` gets its bytes: the connection, or a test's bytes.
protocol ResponseSource {
    /// Between 1 and `maximum` bytes, or none when the peer has closed the connection; throws
    /// ``HTTPClientError/Code/timedOut`` when the deadline passes first, or another error when receiving fails.
    func receive(maximum: Int) throws(HTTPClientError) -> [UInt8]
}

/// Reads one HTTP/1.x response strictly (the framing rules of RFC 9112, ambiguity being an error): interim 1xx
/// responses are skipped, the head is bounded, and the body is read by Content-Length, chunked coding or until the
/// connection closes, keeping at most a bound of it.
struct ResponseReader<Source: ResponseSource> {
    /// The most bytes the status line and header fields (interim responses' included) may take, and, separately,
    /// a chunked body's trailer section.
    static var maximumHeadBytes: Int { 16384 }
    /// The most bytes a chunk-size line (with its extensions) may take.
    static var maximumChunkLineBytes: Int { 1024 }

    private let source: Source
    /// The host and port, for messages.
    private let peer: String
    private let maximumBodyBytes: Int
    private var buffer: [UInt8] = []
    /// Where the bytes not yet consumed start in `buffer`.
    private var position = 0
    private var receivedAny = false

    init(source: Source, peer: String, maximumBodyBytes: Int) {
        self.source = source
        self.peer = peer
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// The response, or ``HTTPClientError/Code/noResponse``, ``HTTPClientError/Code/prematureClose`` or
    /// ``HTTPClientError/Code/invalidResponse`` (or what the source throws).
    mutating func read() throws(HTTPClientError) -> HTTPClientResponse {
        var headBudget = Budget(what: "the response head", limit: Self.maximumHeadBytes)
        var (status, headers) = try readHead(within: &headBudget)
        while status < 200 {
            guard status != 101 else {
                throw invalid("101 Switching Protocols answers an upgrade that was not asked for")
            }
            (status, headers) = try readHead(within: &headBudget)
        }
        var body = BodyBuffer(limit: maximumBodyBytes)
        switch try Self.framing(status: status, headers: headers) {
        case .empty:
            break
        case .length(let length):
            _ = try readBody(count: length, into: &body, during: "the body (Content-Length \(length))")
        case .chunked:
            try readChunks(into: &body)
        case .untilClose:
            try readUntilClose(into: &body)
        }
        return HTTPClientResponse(status: status, headers: headers, body: body.bytes, isBodyTruncated: body.isTruncated)
    }

    // MARK: The head

    private mutating func readHead(within budget: inout Budget) throws(HTTPClientError)
        -> (Int, [(name: String, value: String)])
    {
        let status = try parseStatusLine(readLine(within: &budget, startingWith: Array("HTTP/1.".utf8)))
        return (status, try readFields(within: &budget))
    }

    /// Header or trailer fields up to the empty line that ends them.
    private mutating func readFields(within budget: inout Budget) throws(HTTPClientError)
        -> [(name: String, value: String)]
    {
        var fields: [(name: String, value: String)] = []
        while true {
            let line = try readLine(within: &budget)
            guard !line.isEmpty else {
                return fields
            }
            fields.append(try parseField(line))
        }
    }

    /// `HTTP/1.x SP 3DIGIT [SP reason-phrase]`, the status in 100...599.
    private func parseStatusLine(_ line: ArraySlice<UInt8>) throws(HTTPClientError) -> Int {
        let text = String(decoding: line, as: UTF8.self)
        let bytes = Array(line)
        guard bytes.count >= 12, bytes[7] == UInt8(ascii: "0") || bytes[7] == UInt8(ascii: "1"),
            bytes[8] == UInt8(ascii: " "), bytes[9..<12].allSatisfy(isDigit),
            bytes.count == 12 || bytes[12] == UInt8(ascii: " "),
            bytes.dropFirst(12).allSatisfy(isFieldValueByte),
            let status = Int(String(decoding: bytes[9..<12], as: UTF8.self)), (100...599).contains(status)
        else {
            throw invalid("the status line \"\(text)\" is not \"HTTP/1.x NNN reason\" with a status from 100 to 599")
        }
        return status
    }

    /// `field-name ":" OWS field-value OWS`; obsolete line folding is refused.
    private func parseField(_ line: ArraySlice<UInt8>) throws(HTTPClientError) -> (name: String, value: String) {
        guard line.first != UInt8(ascii: " ") && line.first != UInt8(ascii: "\t") else {
            throw invalid("a header line starts with white space (obsolete line folding is not accepted)")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw invalid("the header line \"\(String(decoding: line, as: UTF8.self))\" has no colon")
        }
        let name = String(decoding: line[..<colon], as: UTF8.self)
        guard colon > line.startIndex, line[..<colon].allSatisfy(isTokenByte) else {
            throw invalid("\"\(name)\" is not a valid header name")
        }
        let value = line[(colon + 1)...].trimmingWhiteSpace()
        guard value.allSatisfy(isFieldValueByte) else {
            throw invalid("the value of the header \(name) contains a control character")
        }
        return (name, String(decoding: value, as: UTF8.self))
    }

    // MARK: Framing

    private enum Framing {
        case empty
        case length(Int)
        case chunked
        case untilClose
    }

    /// RFC 9112 section 6.3, with both headers together, unequal lengths, and codings other than `chunked` refused.
    private static func framing(status: Int, headers: [(name: String, value: String)]) throws(HTTPClientError)
        -> Framing
    {
        if status == 204 || status == 304 {
            return .empty
        }
        let codings = headers.filter { $0.name.lowercased() == "transfer-encoding" }.map(\.value)
        let lengths = Set(headers.filter { $0.name.lowercased() == "content-length" }.map(\.value))
        if !codings.isEmpty {
            guard lengths.isEmpty else {
                throw HTTPClientError(.invalidResponse, "the response has both Transfer-Encoding and Content-Length")
            }
            let joined = codings.joined(separator: ", ")
            guard joined.lowercased() == "chunked" else {
                throw HTTPClientError(
                    .invalidResponse, "the Transfer-Encoding \"\(joined)\" is not supported (only chunked is)")
            }
            return .chunked
        }
        guard let length = lengths.first else {
            return .untilClose
        }
        guard lengths.count == 1, (1...18).contains(length.utf8.count), length.utf8.allSatisfy(isDigit),
            let value = Int(length)
        else {
            throw HTTPClientError(
                .invalidResponse, "the Content-Length \(lengths.sorted()) is not one decimal number")
        }
        return .length(value)
    }

    // MARK: The body

    /// Reads `count` bytes into `body`; false when `body` filled up first (the rest is left unread).
    private mutating func readBody(count: Int, into body: inout BodyBuffer, during what: String)
        throws(HTTPClientError) -> Bool
    {
        var left = count
        while left > 0 {
            if position == buffer.count {
                guard try receiveMore() else {
                    throw closed(during: what)
                }
            }
            let taken = min(left, buffer.count - position)
            let kept = body.append(buffer[position..<(position + taken)])
            position += taken
            left -= taken
            guard kept else {
                return false
            }
        }
        return true
    }

    /// `*(chunk-size [chunk-ext] CRLF chunk-data CRLF) "0" [chunk-ext] CRLF trailer-section CRLF`.
    private mutating func readChunks(into body: inout BodyBuffer) throws(HTTPClientError) {
        while true {
            var lineBudget = Budget(what: "a chunk-size line", limit: Self.maximumChunkLineBytes)
            let line = try readLine(within: &lineBudget)
            let digits = line.prefix { $0 != UInt8(ascii: ";") }.trimmingWhiteSpace()
            guard (1...15).contains(digits.count), let size = Int(String(decoding: digits, as: UTF8.self), radix: 16),
                digits.allSatisfy(isHexDigit),
                line.allSatisfy(isFieldValueByte)
            else {
                throw invalid("the chunk-size line \"\(String(decoding: line, as: UTF8.self))\" is not valid")
            }
            if size == 0 {
                var trailerBudget = Budget(what: "the trailer section", limit: Self.maximumHeadBytes)
                _ = try readFields(within: &trailerBudget)
                return
            }
            guard try readBody(count: size, into: &body, during: "a chunk of \(size) bytes") else {
                return
            }
            guard try readBytes(2, during: "the end of a chunk").elementsEqual("\r\n".utf8) else {
                throw invalid("a chunk's data is not followed by CRLF (it is longer than its size line says)")
            }
        }
    }

    private mutating func readUntilClose(into body: inout BodyBuffer) throws(HTTPClientError) {
        var open = true
        while open {
            let kept = body.append(buffer[position...])
            position = buffer.count
            guard kept else {
                return
            }
            open = try receiveMore()
        }
    }

    // MARK: Bytes

    /// What a line or section may still take, for the bound on it.
    private struct Budget {
        let what: String
        let limit: Int
        var remaining: Int

        init(what: String, limit: Int) {
            self.what = what
            self.limit = limit
            remaining = limit
        }
    }

    /// The next line without its CRLF, which must come within `budget` (and is charged to it); when `prefix` is
    /// given, the line must start with it, checked as bytes arrive so that garbage is refused at once.
    private mutating func readLine(within budget: inout Budget, startingWith prefix: [UInt8] = [])
        throws(HTTPClientError) -> ArraySlice<UInt8>
    {
        var searched = 0
        while true {
            let unread = buffer[position...]
            guard unread.prefix(prefix.count).elementsEqual(prefix.prefix(unread.count)) else {
                throw invalid("the response does not start with \"HTTP/1.\"")
            }
            if let newline = unread.dropFirst(searched).firstIndex(of: UInt8(ascii: "\n")) {
                let length = newline + 1 - position
                guard length <= budget.remaining else {
                    throw invalid("\(budget.what) is longer than \(budget.limit) bytes")
                }
                guard newline > position && buffer[newline - 1] == UInt8(ascii: "\r") else {
                    throw invalid("a line in \(budget.what) ends with a bare LF instead of CRLF")
                }
                budget.remaining -= length
                position = newline + 1
                return buffer[(newline + 1 - length)..<(newline - 1)]
            }
            guard unread.count <= budget.remaining else {
                throw invalid("\(budget.what) is longer than \(budget.limit) bytes")
            }
            searched = unread.count
            guard try receiveMore() else {
                throw closed(during: budget.what)
            }
        }
    }

    /// The next `count` bytes.
    private mutating func readBytes(_ count: Int, during what: String) throws(HTTPClientError) -> ArraySlice<UInt8> {
        while buffer.count - position < count {
            guard try receiveMore() else {
                throw closed(during: what)
            }
        }
        position += count
        return buffer[(position - count)..<position]
    }

    /// Receives more bytes after the unread ones (dropping those consumed); false when the peer has closed.
    private mutating func receiveMore() throws(HTTPClientError) -> Bool {
        buffer.removeSubrange(..<position)
        position = 0
        let bytes = try source.receive(maximum: 16384)
        receivedAny = receivedAny || !bytes.isEmpty
        buffer.append(contentsOf: bytes)
        return !bytes.isEmpty
    }

    // MARK: Errors

    private func closed(during what: String) -> HTTPClientError {
        receivedAny
            ? HTTPClientError(.prematureClose, "\(peer) closed the connection in the middle of \(what)")
            : HTTPClientError(.noResponse, "\(peer) closed the connection without sending a response")
    }

    private func invalid(_ rule: String) -> HTTPClientError {
        HTTPClientError(.invalidResponse, "invalid response from \(peer): \(rule)")
    }
}

/// A body kept up to a limit, remembering whether more was offered.
private struct BodyBuffer {
    let limit: Int
    var bytes: [UInt8] = []
    var isTruncated = false

    /// Keeps as much of `more` as fits; false (and truncated) when some of it did not.
    mutating func append(_ more: ArraySlice<UInt8>) -> Bool {
        let room = limit - bytes.count
        bytes.append(contentsOf: more.prefix(room))
        isTruncated = more.count > room
        return !isTruncated
    }
}
