import CReceiptThreadPlacement
import HTTPServer
import Testing
import ThreadScheduling
import Threads

/// A request head the server must refuse, and how.
struct RefusedHead: CustomTestStringConvertible, Sendable {
    let name: String
    let head: String
    let status: Int
    /// The JSON error code of the answer on a new connection.
    let code: String
    /// Whether, after a first request on a kept-alive connection, the answer is still the server's JSON rather
    /// than libmicrohttpd's own (an HTML page, still one response and a close): libmicrohttpd refuses these while
    /// reading the head, at a point where the server cannot tell that connection from its idle ones.
    let answeredByServerWhenFollowingAnother: Bool

    init(
        _ name: String, _ head: String, _ status: Int, _ code: String, answeredByServerWhenFollowingAnother: Bool = true
    ) {
        self.name = name
        self.head = head
        self.status = status
        self.code = code
        self.answeredByServerWhenFollowingAnother = answeredByServerWhenFollowingAnother
    }

    var testDescription: String { name }
}

/// A scheduling call that failed, with its error number.
struct SchedulingError: Error {
    let number: Int32
}

/// How many status lines `bytes` holds: `HTTP/1.` at the start or right after a CRLF (a JSON body of this server
/// never has a line break).
func statusLineCount(_ bytes: [UInt8]) -> Int {
    var count = bytes.starts(with: Array("HTTP/1.".utf8)) ? 1 : 0
    var rest = bytes[...]
    while let range = rest.firstRange(of: Array("\r\nHTTP/1.".utf8)) {
        count += 1
        rest = rest[range.upperBound...]
    }
    return count
}

@Suite("Strict framing: a request that could hide another is refused, answered once, and its connection closed")
struct FramingTests {
    /// What a proxy might forward and the server must not read as one request with another behind it.
    static let smuggling: [RefusedHead] = [
        RefusedHead(
            "Content-Length and Transfer-Encoding",
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            400, "conflicting_framing"),
        RefusedHead(
            "two equal Content-Length",
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            400, "conflicting_framing"),
        RefusedHead(
            "two different Content-Length",
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400,
            "conflicting_framing"),
        RefusedHead(
            "two Transfer-Encoding",
            "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            400, "conflicting_framing"),
        RefusedHead(
            "gzip, chunked", "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            501,
            "unsupported_transfer_encoding"),
        RefusedHead(
            "identity", "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: identity\r\n\r\n", 501,
            "unsupported_transfer_encoding"),
        RefusedHead(
            "chunked, chunked",
            "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n",
            501, "unsupported_transfer_encoding"),
        RefusedHead(
            "Transfer-Encoding in HTTP/1.0", "POST /upload HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            400,
            "conflicting_framing"),
        RefusedHead(
            "whitespace between a field name and its colon", "GET / HTTP/1.1\r\nHost: t\r\nX-Thing : v\r\n\r\n", 400,
            "invalid_header", answeredByServerWhenFollowingAnother: false),
        RefusedHead(
            "a NUL in a field value", "GET / HTTP/1.1\r\nHost: t\r\nX-Thing: a\u{0}b\r\n\r\n", 400, "invalid_header"),
        RefusedHead(
            "a CR in a field value", "GET / HTTP/1.1\r\nHost: t\r\nX-Thing: a\rb\r\n\r\n", 400, "invalid_header"),
        RefusedHead(
            "an LF in a field value", "GET / HTTP/1.1\r\nHost: t\r\nX-Thing: a\nX-Other: b\r\n\r\n", 400,
            "invalid_header"),
        RefusedHead(
            "a folded field line", "GET / HTTP/1.1\r\nHost: t\r\nX-Thing: a\r\n b\r\n\r\n", 400, "invalid_header"),
        RefusedHead("a NUL in the target", "GET /a\u{0}b HTTP/1.1\r\nHost: t\r\n\r\n", 400, "invalid_request_line"),
        RefusedHead(
            "two Authorization",
            "GET / HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer first\r\nAuthorization: Bearer second\r\n\r\n", 400,
            "duplicate_header"),
        RefusedHead("two Host", "GET / HTTP/1.1\r\nHost: t\r\nHost: u\r\n\r\n", 400, "duplicate_header"),
        RefusedHead("no Host in HTTP/1.1", "GET / HTTP/1.1\r\nX-Thing: v\r\n\r\n", 400, "missing_host"),
    ]

    /// `Content-Length` values libmicrohttpd 0.9.75 refuses by writing its status line and headers twice, when it
    /// reads the head itself.
    static let malformedLengths: [RefusedHead] =
        ["-1", "+2", "0x2", "2, 2", "", "2 2"].map { value in
            RefusedHead(
                "Content-Length: \(value)", "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: \(value)\r\n\r\nab",
                400, "invalid_content_length")
        } + [
            RefusedHead(
                "a Content-Length past 64 bits",
                "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 184467440737095516160\r\n\r\n", 413,
                "body_too_large")
        ]

    /// Sizes over the limits of ``RequestRules``.
    static let oversized: [RefusedHead] = [
        RefusedHead(
            "a target over 8 KiB", "GET /\(String(repeating: "a", count: 8192)) HTTP/1.1\r\nHost: t\r\n\r\n", 414,
            "uri_too_long"),
        RefusedHead(
            "a head over 16 KiB",
            "GET / HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "b", count: 16 << 10))\r\n\r\n", 431,
            "headers_too_large"),
        RefusedHead(
            "101 header fields",
            "GET / HTTP/1.1\r\nHost: t\r\n" + (1...100).map { "X-F\($0): v\r\n" }.joined() + "\r\n", 431,
            "headers_too_large"),
        RefusedHead(
            "HTTP/2.0 as text", "GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505, "http_version_not_supported",
            answeredByServerWhenFollowingAnother: false),
    ]

    /// A request smuggled behind the refused one; the handler must never see it.
    static let smuggled = "GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n"

    @Test(
        "On a new connection: exactly one answer with Connection: close, then the server closes",
        arguments: smuggling + malformedLengths + oversized)
    func refusedOnNewConnection(_ refused: RefusedHead) throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)

        try connection.send(refused.head + Self.smuggled)
        let (bytes, closed) = connection.readUntilClose()
        let answer = try #require(try? RawHTTPConnection.parse(bytes))

        #expect(statusLineCount(bytes) == 1, "\(String(decoding: bytes, as: UTF8.self))")
        #expect(answer.status == refused.status)
        #expect(answer.header("Connection") == "close")
        #expect(String(decoding: answer.body, as: UTF8.self).contains(#""code":"\#(refused.code)""#))
        #expect(closed)
        #expect(recorder.count == 0)
    }

    @Test(
        "After a first request on a kept-alive connection: the first is answered, the refused one exactly once, then close",
        arguments: smuggling + oversized)
    func refusedAfterAnotherRequest(_ refused: RefusedHead) throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)

        try connection.send("GET /first HTTP/1.1\r\nHost: t\r\n\r\n" + refused.head + Self.smuggled)
        let (bytes, closed) = connection.readUntilClose()
        let text = String(decoding: bytes, as: UTF8.self)

        // libmicrohttpd reads a kept-alive connection's later heads itself; what it refuses there is still
        // answered once (malformedLengthAfterAnotherRequest covers the lengths it would answer twice over).
        #expect(statusLineCount(bytes) == 2, "\(text)")
        #expect(text.hasPrefix("HTTP/1.1 200 "))
        #expect(text.contains("HTTP/1.1 \(refused.status) "))
        if refused.answeredByServerWhenFollowingAnother {
            // The code may name another rule than on a new connection.
            #expect(text.contains(#"{"error":{"code":""#))
            #expect(!text.contains("<html>"))
        }
        #expect(closed)
        #expect(recorder.count == 1)
        #expect(recorder.last?.path == "/first")
    }

    @Test(
        "A malformed Content-Length after a first request gets the answer it gets on a new connection, then the end",
        arguments: malformedLengths)
    func malformedLengthAfterAnotherRequest(_ refused: RefusedHead) throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)

        try connection.send("GET /first HTTP/1.1\r\nHost: t\r\n\r\n" + refused.head + Self.smuggled)
        #expect(try connection.readResponse().status == 200)
        let answer = try connection.readResponse()
        let (rest, closed) = connection.readUntilClose()

        #expect(answer.status == refused.status)
        #expect(String(decoding: answer.body, as: UTF8.self).contains(#""code":"\#(refused.code)""#))
        #expect(rest.isEmpty, "\(String(decoding: rest, as: UTF8.self))")
        #expect(closed)
        #expect(recorder.count == 1)
    }

    @Test("A server stopped as soon as a kept-alive connection's malformed Content-Length is answered stops cleanly")
    func stoppedRightAfterARefusal() throws {
        // libmicrohttpd 0.9.75 goes on building its own answer after the server's is sent; stopped meanwhile, it
        // queued none, then read the one it had not queued, and crashed. Here the server's threads share the test's
        // one CPU in the idle class, so the test's thread, woken by the answer, stops the server before the daemon's
        // thread goes on: without the stop's closing of the connections first, every run of 20 stops crashed.
        var allowed = cpu_set_t()
        try #require(thread_scheduling_keep_to_current_cpu(&allowed) == 0)
        defer { receipt_thread_allow(&allowed) }
        for _ in 0..<50 {
            // Started from a thread of its own in the idle class, whose threads the server's inherit.
            let started = ThreadResult { () -> Result<HTTPServer, any Error> in
                let idle = thread_scheduling_become_idle()
                guard idle == 0 else { return .failure(SchedulingError(number: idle)) }
                return Result { try startServer(HTTPServerConfiguration(threads: 1)) }
            }
            let server = try started.value.get()
            let connection = try RawHTTPConnection(port: server.port)
            try connection.send(
                "GET /first HTTP/1.1\r\nHost: t\r\n\r\nPOST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n")
            #expect(try connection.readResponse().status == 200)
            #expect(try connection.readResponse().status == 400)
            server.stop()
            #expect(connection.readUntilClose().closed)
        }
    }

    @Test(
        "The refused connection is the one answered: on one daemon thread, idle, half-read and mid-body neighbours go on"
    )
    func refusalAmongNeighbours() throws {
        let recorder = Recorder()
        let server = try startServer(HTTPServerConfiguration(threads: 1), recorder: recorder)
        defer { server.stop() }
        let idle = try RawHTTPConnection(port: server.port)
        try idle.send("GET /idle HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try idle.readResponse().status == 200)
        let halfHead = try RawHTTPConnection(port: server.port)
        try halfHead.send("GET /half HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try halfHead.readResponse().status == 200)
        try halfHead.send("POST /half HTTP/1.1\r\nHost: t\r\nContent-Le")
        let midBody = try RawHTTPConnection(port: server.port)
        try midBody.send("GET /body HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try midBody.readResponse().status == 200)
        try midBody.send("POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nhello")
        let refused = try RawHTTPConnection(port: server.port)

        try refused.send(
            "GET /first HTTP/1.1\r\nHost: t\r\n\r\nPOST /x HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n")
        #expect(try refused.readResponse().status == 200)
        let answer = try refused.readResponse()
        let (rest, closed) = refused.readUntilClose()
        #expect(answer.status == 400)
        #expect(String(decoding: answer.body, as: UTF8.self).contains(#""code":"invalid_content_length""#))
        #expect(rest.isEmpty && closed)

        try midBody.send("world")
        let completed = try midBody.readResponse()
        #expect(completed.status == 200)
        #expect(completed.body == Array("helloworld".utf8))
        try halfHead.send("ngth: 2\r\n\r\nok")
        #expect(try halfHead.readResponse().body == Array("ok".utf8))
        try idle.send("GET /idle-again HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try idle.readResponse().status == 200)
        #expect(
            recorder.all.map(\.path).sorted() == ["/body", "/body", "/first", "/half", "/half", "/idle", "/idle-again"])
    }

    @Test(
        "300 malformed Content-Length refusals after a first request, on 4 connections at a time, leave the server up")
    func refusalsInARow() async throws {
        let server = try startServer()
        defer { server.stop() }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var answered = 0
                    for _ in 0..<75 {
                        let connection = try RawHTTPConnection(port: server.port)
                        try connection.send(
                            "GET /first HTTP/1.1\r\nHost: t\r\n\r\n"
                                + "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\nab")
                        if try connection.readResponse().status == 200, try connection.readResponse().status == 400 {
                            answered += 1
                        }
                    }
                    return answered
                }
            }
            var answered = 0
            for try await count in group { answered += count }
            #expect(answered == 300)
        }
        let last = try RawHTTPConnection(port: server.port)
        try last.send("GET /still-up HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try last.readResponse().status == 200)
    }

    @Test("A request with 600 query arguments is answered, first or after another, with every argument in order")
    func sixHundredQueryArguments() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let query = (0..<600).map { "a\($0)=\($0)" }.joined(separator: "&")
        let request = "GET /many?\(query) HTTP/1.1\r\nHost: t\r\n\r\n"
        let connection = try RawHTTPConnection(port: server.port)

        try connection.send(request)
        #expect(try connection.readResponse().status == 200)
        #expect(recorder.last?.query.count == 600)
        try connection.send(request + "GET /last HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(try connection.readResponse().status == 200)
        #expect(try connection.readResponse().status == 200)

        let requests = recorder.all
        #expect(requests.map(\.path) == ["/many", "/many", "/last"])
        #expect(requests[1].query.map(\.name) == (0..<600).map { "a\($0)" })
        #expect(requests[1].query.map(\.value) == (0..<600).map { "\($0)" })
    }

    @Test(
        "Query arguments are decoded strictly: a malformed escape or invalid UTF-8 is a 400, never U+FFFD",
        arguments: ["a=%zz", "a=%", "a=%4", "%ff=b", "a=%C3", "a=%E2%82", "a=%C0%AF"])
    func malformedQueryIsRefused(_ query: String) throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)

        try connection.send("GET /search?\(query) HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try connection.readResponse()

        #expect(response.status == 400)
        #expect(String(decoding: response.body, as: UTF8.self).contains(#""code":"invalid_query""#))
        #expect(response.header("Connection") == "close")
        #expect(recorder.count == 0)
    }

    @Test("Well-formed queries decode as forms do: + is a space, %2B a plus, empty pieces are skipped")
    func wellFormedQueryDecodes() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)

        try connection.send("GET /search?q=J%C3%BCrgen+M&plus=%2B&&flag&empty=&=v HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try connection.readResponse().status == 200)

        let request = try #require(recorder.last)
        #expect(request.path == "/search")
        #expect(request.query.map(\.name) == ["q", "plus", "flag", "empty", ""])
        #expect(request.query.map(\.value) == ["Jürgen M", "+", "", "", "v"])
    }

    @Test(
        "A header name is a token: each of RFC 9110's tchars passes, first or later on a connection; any other visible byte is refused with 400"
    )
    func headerNameBytes() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let tchars = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        let kept = try RawHTTPConnection(port: server.port)
        // A colon ends the name: "X:Y: v" is the lawful field X with the value "Y: v".
        for byte in UInt8(0x21)...0x7E where byte != UInt8(ascii: ":") {
            let head = "GET /t HTTP/1.1\r\nHost: t\r\nX\(Character(Unicode.Scalar(byte)))Y: v\r\n\r\n"
            let connection = try RawHTTPConnection(port: server.port)
            try connection.send(head)
            let expected = tchars.contains(byte) ? 200 : 400
            #expect(try connection.readResponse().status == expected, "byte \(byte)")
            if tchars.contains(byte) {
                try kept.send(head)
                #expect(try kept.readResponse().status == 200, "byte \(byte) on a kept-alive connection")
            }
        }
        #expect(recorder.count == 2 * tchars.count)
    }

    @Test("Lawful heads pass on every request of a kept-alive connection: tabs, empty values, cookies, 100 fields")
    func lawfulHeadsPass() throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)
        let heads = [
            "GET /a HTTP/1.1\r\nHost: t\r\nX-Tab:\tvalue\t\r\nX-Empty:\r\nX-Spaces:   \r\nCookie: a=1; b=2\r\n\r\n",
            "POST /b HTTP/1.1\r\nhost: t\r\ncontent-length: 5\r\n\r\nhello",
            "POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            "\r\nGET /d HTTP/1.1\r\nHost: t\r\n" + (1...99).map { "X-F\($0): v\($0)\r\n" }.joined() + "\r\n",
            "GET /e?x=1 HTTP/1.0\r\n\r\n",
        ]

        for head in heads {
            try connection.send(head)
            #expect(try connection.readResponse().status == 200)
        }

        let requests = recorder.all
        #expect(requests.map(\.path) == ["/a", "/b", "/c", "/d", "/e"])
        #expect(requests[0].header("x-tab") == "value")
        #expect(requests[0].header("x-empty") == "")
        #expect(requests[0].header("x-spaces") == "")
        #expect(requests[0].header("cookie") == "a=1; b=2")
        #expect(requests[1].body == Array("hello".utf8))
        #expect(requests[2].body == Array("abc".utf8))
        #expect(requests[3].headers.count == 100)
        #expect(requests[4].query.first?.value == "1")
    }
}
