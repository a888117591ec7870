import Dispatch
import Foundation
import Glibc
import HTTPServer
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Remembers what the handler saw, for the tests to inspect from another thread.
final class Recorder: Sendable {
    private let requests = Mutex<[HTTPRequest]>([])

    func record(_ request: HTTPRequest) {
        requests.withLock { $0.append(request) }
    }

    var count: Int { requests.withLock { $0.count } }
    var last: HTTPRequest? { requests.withLock { $0.last } }
    var all: [HTTPRequest] { requests.withLock { $0 } }
}

/// Starts a server on 127.0.0.1, port 0, with `handler`, recording every request it receives.
func startServer(
    _ configuration: HTTPServerConfiguration = HTTPServerConfiguration(threads: 4),
    recorder: Recorder = Recorder(),
    handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { HTTPResponse(status: 200, body: $0.body) }
) throws -> HTTPServer {
    let server = HTTPServer(configuration: configuration) { request in
        recorder.record(request)
        return handler(request)
    }
    try server.start()
    return server
}

/// Fetches through URLSession (libcurl underneath), as a real client would.
func fetch(
    _ server: HTTPServer, _ target: String, method: String = "GET", headers: [String: String] = [:],
    body: [UInt8]? = nil
) async throws -> (status: Int, body: [UInt8], response: HTTPURLResponse) {
    let url = try #require(URL(string: "http://127.0.0.1:\(server.port)\(target)"))
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.timeoutInterval = 30
    for (name, value) in headers {
        request.setValue(value, forHTTPHeaderField: name)
    }
    request.httpBody = body.map { Data($0) }
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    let (data, response) = try await session.data(for: request)
    let httpResponse = try #require(response as? HTTPURLResponse)
    return (httpResponse.statusCode, Array(data), httpResponse)
}

/// Waits, a few milliseconds at a time and for at most ten seconds, until `condition` holds.
func eventually(_ condition: () -> Bool) async throws -> Bool {
    for _ in 0..<1000 {
        if condition() {
            return true
        }
        try await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// A server's ``HTTPServer/stop()`` running on a thread of its own: a stop blocking one of the few threads Swift's
/// tasks run on could hold up the test's own sleeps (and other tests' tasks) until it returns.
final class Stopping: Sendable {
    private let done = Mutex(false)

    init(_ server: HTTPServer) {
        Thread.detachNewThread { [self] in
            server.stop()
            done.withLock { $0 = true }
        }
    }

    /// Whether the stop has returned.
    var returned: Bool { done.withLock { $0 } }
}

@Suite("HTTPServer over libmicrohttpd", .serialized)
struct HTTPServerTests {
    @Test("A GET reaches the handler with its path as sent, decoded query arguments in order and lowercased headers")
    func getRequestReachesHandlerIntact() async throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder) { _ in
            HTTPResponse(status: 200, headers: [(name: "X-Answer", value: "42")], body: Array("hello".utf8))
        }
        defer { server.stop() }

        let result = try await fetch(
            server, "/v1/customers/c%201/receipt?name=J%C3%BCrgen&tag=a+b&tag=c%26d%3D&empty=",
            headers: ["X-Custom-Header": "Some Value"]
        )

        #expect(result.status == 200)
        #expect(result.body == Array("hello".utf8))
        #expect(result.response.value(forHTTPHeaderField: "X-Answer") == "42")
        let request = try #require(recorder.last)
        #expect(request.method == "GET")
        #expect(request.path == "/v1/customers/c%201/receipt")
        #expect(request.query.map(\.name) == ["name", "tag", "tag", "empty"])
        #expect(request.query.map(\.value) == ["Jürgen", "a b", "c&d=", ""])
        #expect(request.header("x-custom-header") == "Some Value")
        #expect(request.headers.contains { $0.name == "x-custom-header" })
        #expect(request.headers.allSatisfy { $0.name == $0.name.lowercased() })
        #expect(request.body.isEmpty)
    }

    @Test(
        "A response's headers go out in order; a handler's Content-Length gives way to the body's, and a closing connection's answer says Connection: close once"
    )
    func responseHeaders() throws {
        let server = try startServer { request in
            let headers = [
                (name: "X-First", value: "1"), (name: "Content-Length", value: "999"), (name: "X-Second", value: "2"),
            ]
            return request.path == "/own-connection"
                ? HTTPResponse(status: 200, headers: headers + [("Connection", "close")], body: Array("hello".utf8))
                : HTTPResponse(status: 200, headers: headers, body: Array("hello".utf8))
        }
        defer { server.stop() }
        for path in ["/kept", "/closing", "/own-connection"] {
            let connection = try RawHTTPConnection(port: server.port)
            let closing = path == "/kept" ? "" : "Connection: close\r\n"
            try connection.send("GET \(path) HTTP/1.1\r\nHost: t\r\n\(closing)\r\n")
            let response = try connection.readResponse()
            let names = response.headers.map { $0.name.lowercased() }
            #expect(response.body == Array("hello".utf8), "\(path)")
            #expect(names.filter { $0 == "content-length" }.count == 1, "\(path)")
            #expect(response.header("Content-Length") == "5", "\(path)")
            let first = try #require(names.firstIndex(of: "x-first"))
            let second = try #require(names.firstIndex(of: "x-second"))
            #expect(first < second, "\(path)")
            #expect(names.filter { $0 == "connection" }.count == (path == "/kept" ? 0 : 1), "\(path)")
            if path != "/kept" { #expect(response.header("Connection")?.lowercased() == "close", "\(path)") }
        }
    }

    @Test("A 500 KB POST body arrives byte for byte and can be echoed back")
    func largePostBodyArrivesIntact() async throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let body = (0..<500_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }

        let result = try await fetch(server, "/upload", method: "POST", body: body)

        #expect(result.status == 200)
        #expect(result.body == body)
        #expect(recorder.last?.body == body)
        #expect(recorder.last?.method == "POST")
    }

    @Test("A Content-Length over the limit is answered 413 with a JSON error before any body is read")
    func declaredBodyOverLimitIsRejected() throws {
        let recorder = Recorder()
        let server = try startServer(HTTPServerConfiguration(threads: 2, maximumBodyBytes: 1000), recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)

        try connection.send("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 5000000\r\n\r\n")
        let response = try connection.readResponse()

        #expect(response.status == 413)
        #expect(response.header("Content-Type") == "application/json")
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.hasPrefix(#"{"error":{"code":"body_too_large","message":"#))
        #expect(text.contains("1000 bytes"))
        #expect(recorder.count == 0)
    }

    @Test("A chunked body over the limit is answered 413 and never given to the handler")
    func chunkedBodyOverLimitIsRejected() throws {
        let recorder = Recorder()
        let server = try startServer(HTTPServerConfiguration(threads: 2, maximumBodyBytes: 1000), recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)
        let chunk = "258\r\n" + String(repeating: "x", count: 600) + "\r\n"

        try connection.send("POST /upload HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        try connection.send(chunk + chunk + chunk + "0\r\n\r\n")
        let response = try connection.readResponse()

        #expect(response.status == 413)
        #expect(String(decoding: response.body, as: UTF8.self).contains("body_too_large"))
        #expect(recorder.count == 0)
    }

    @Test("A chunked body far over the limit is cut off by closing the connection, without buffering it")
    func endlessChunkedBodyIsCutOff() throws {
        let recorder = Recorder()
        let server = try startServer(HTTPServerConfiguration(threads: 2, maximumBodyBytes: 1000), recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)
        let chunk = "4000\r\n" + String(repeating: "x", count: 16384) + "\r\n"

        try connection.send("POST /upload HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in 0..<64 {
            guard (try? connection.send(chunk)) != nil else {
                break
            }
        }

        #expect(connection.waitForClose())
        #expect(recorder.count == 0)
    }

    @Test("A chunked body within the limit reaches the handler whole")
    func chunkedBodyWithinLimitArrives() throws {
        let recorder = Recorder()
        let server = try startServer(HTTPServerConfiguration(threads: 2, maximumBodyBytes: 1000), recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)

        try connection.send("POST /upload HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        try connection.send("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        let response = try connection.readResponse()

        #expect(response.status == 200)
        #expect(response.body == Array("hello world".utf8))
        #expect(recorder.last?.body == Array("hello world".utf8))
    }

    @Test("Port 0 binds an ephemeral port, reported while running and 0 once stopped")
    func ephemeralPortIsReported() async throws {
        let server = try startServer()
        let port = server.port

        #expect(port != 0)
        #expect(try await fetch(server, "/").status == 200)
        server.stop()
        #expect(server.port == 0)
    }

    @Test("Starting on a port already in use fails with bindFailed and the system's reason")
    func busyPortFailsWithBindFailed() throws {
        let first = try startServer()
        defer { first.stop() }
        let second = HTTPServer(configuration: HTTPServerConfiguration(port: first.port)) { _ in
            HTTPResponse(status: 200)
        }

        let error = try #require(throws: HTTPServerError.self) { try second.start() }

        #expect(error.code == .bindFailed)
        #expect(error.message.contains("Address already in use"))
        #expect(second.port == 0)
    }

    @Test("Starting a running server fails with alreadyStarted; a stopped server starts again")
    func startTwiceFailsAndRestartWorks() async throws {
        let server = try startServer()

        let error = try #require(throws: HTTPServerError.self) { try server.start() }
        #expect(error.code == .alreadyStarted)
        server.stop()
        server.stop()
        try server.start()
        defer { server.stop() }
        #expect(try await fetch(server, "/again").status == 200)
    }

    @Test(
        "stop() lets a request already in the handler finish with its response (Connection: close), then refuses new connections"
    )
    func stopDrainsInFlightRequests() async throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder) { request in
            if request.path == "/slow" {
                usleep(300_000)
            }
            return HTTPResponse(status: 200, body: Array("done".utf8))
        }
        let port = server.port
        let slowRequest = Task { try await fetch(server, "/slow") }
        #expect(try await eventually { recorder.count == 1 })

        server.stop()
        let result = try await slowRequest.value

        #expect(result.status == 200)
        #expect(result.body == Array("done".utf8))
        // Answered while the server drains: the client is told the connection ends with it.
        #expect(result.response.value(forHTTPHeaderField: "Connection")?.lowercased() == "close")
        #expect(throws: RawConnectionError.connectFailed(errno: ECONNREFUSED)) {
            _ = try RawHTTPConnection(port: port)
        }
    }

    @Test("stop() does not wait for a client that abandoned its request halfway through the body")
    func abandonedRequestDoesNotHoldStop() throws {
        let server = try startServer(HTTPServerConfiguration(threads: 2, shutdownGracePeriodSeconds: 60))
        do {
            let connection = try RawHTTPConnection(port: server.port)
            try connection.send(
                "POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n"
            )
            #expect(try connection.readResponse().status == 100)
            try connection.send("0123456789")
        }
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            server.stop()
            stopped.signal()
        }

        #expect(stopped.wait(timeout: .now() + 20) == .success)
    }

    @Test("Eight threads sending fifty requests each all get their own response")
    func concurrentRequestsAllSucceed() throws {
        let server = try startServer(HTTPServerConfiguration(threads: 4)) { request in
            HTTPResponse(status: 200, body: Array("reply to \(request.path)".utf8))
        }
        defer { server.stop() }
        let port = server.port
        let failures = Mutex<[String]>([])
        let finished = DispatchGroup()

        for thread in 0..<8 {
            finished.enter()
            Thread {
                defer { finished.leave() }
                for index in 0..<50 {
                    let path = "/thread/\(thread)/request/\(index)"
                    do {
                        let connection = try RawHTTPConnection(port: port)
                        try connection.send("GET \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                        let response = try connection.readResponse()
                        if response.status != 200 || response.body != Array("reply to \(path)".utf8) {
                            failures.withLock { $0.append("\(path): \(response.status)") }
                        }
                    } catch {
                        failures.withLock { $0.append("\(path): \(error)") }
                    }
                }
            }.start()
        }

        #expect(finished.wait(timeout: .now() + 120) == .success)
        #expect(failures.withLock { $0 } == [])
    }

    @Test(
        "Requests sent on eight kept-alive connections to one daemon thread before any answer is read are all answered")
    func requestsReadInOneTurnAreAllAnswered() throws {
        let server = try startServer(HTTPServerConfiguration(threads: 1)) { request in
            HTTPResponse(status: 200, body: Array("reply to \(request.path)".utf8))
        }
        defer { server.stop() }
        var connections: [RawHTTPConnection] = []
        for _ in 0..<8 {
            connections.append(try RawHTTPConnection(port: server.port))
        }

        for round in 0..<20 {
            for (index, connection) in connections.enumerated() {
                try connection.send("GET /\(round)/\(index) HTTP/1.1\r\nHost: test\r\n\r\n")
            }
            for (index, connection) in connections.enumerated() {
                let response = try connection.readResponse()
                #expect(response.status == 200)
                #expect(response.body == Array("reply to /\(round)/\(index)".utf8))
            }
        }
    }

    @Test("Requests sent in one piece on a kept-alive connection are each answered, in the order sent")
    func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try startServer { request in
            HTTPResponse(status: 200, body: Array("reply to \(request.path)".utf8))
        }
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)
        let paths = (0..<5).map { "/pipelined/\($0)" }

        try connection.send(paths.map { "GET \($0) HTTP/1.1\r\nHost: test\r\n\r\n" }.joined())

        for path in paths {
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.body == Array("reply to \(path)".utf8))
        }
    }

    @Test(
        "A malformed request line or header gets 400 without reaching the handler; serving goes on",
        arguments: [
            "GET /\r\n\r\n",
            "GET / HTTP/1.1 extra\r\nHost: test\r\n\r\n",
            "GET / HTTP/1.1\r\nHeader line without colon\r\n\r\n",
        ]
    )
    func malformedRequestGets400(request: String) async throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)

        try connection.send(request)
        let response = try connection.readResponse()

        #expect(response.status == 400)
        #expect(recorder.count == 0)
        #expect(try await fetch(server, "/after").status == 200)
        #expect(recorder.count == 1)
    }

    @Test("A request line that is not HTTP at all closes the connection without reaching the handler")
    func garbageClosesConnection() async throws {
        let recorder = Recorder()
        let server = try startServer(recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port)

        try connection.send("NOT-HTTP\r\n\r\n")

        #expect(connection.waitForClose())
        #expect(recorder.count == 0)
        #expect(try await fetch(server, "/after").status == 200)
    }

    @Test("An idle connection is closed once the connection timeout passes")
    func idleConnectionTimesOut() throws {
        let server = try startServer(HTTPServerConfiguration(threads: 2, connectionTimeoutSeconds: 1))
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 15)

        #expect(connection.waitForClose())
    }

    @Test("A handler response with an impossible status or header becomes a 500 JSON error")
    func invalidHandlerResponseBecomes500() throws {
        let server = try startServer { request in
            request.path == "/status"
                ? HTTPResponse(status: 42)
                : HTTPResponse(status: 200, headers: [(name: "X-Bad", value: "line\r\nbreak")])
        }
        defer { server.stop() }

        for path in ["/status", "/header"] {
            let connection = try RawHTTPConnection(port: server.port)
            try connection.send("GET \(path) HTTP/1.1\r\nHost: test\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 500)
            #expect(String(decoding: response.body, as: UTF8.self).contains(#""code":"internal_error""#))
        }
    }

    @Test(
        "A configuration field out of range fails with invalidConfiguration naming the field",
        arguments: [
            (HTTPServerConfiguration(threads: 0), "threads"),
            (HTTPServerConfiguration(threads: -2), "threads"),
            (HTTPServerConfiguration(maximumConnections: 0), "maximumConnections"),
            (HTTPServerConfiguration(threads: 8, maximumConnections: 4), "maximumConnections"),
            (HTTPServerConfiguration(connectionTimeoutSeconds: -1), "connectionTimeoutSeconds"),
            (HTTPServerConfiguration(maximumConnectionsPerClient: 0), "maximumConnectionsPerClient"),
            (HTTPServerConfiguration(requestHeaderTimeoutSeconds: 0), "requestHeaderTimeoutSeconds"),
            (HTTPServerConfiguration(requestBodyTimeoutSeconds: 0), "requestBodyTimeoutSeconds"),
            (HTTPServerConfiguration(maximumBodyBytes: -1), "maximumBodyBytes"),
            (HTTPServerConfiguration(shutdownGracePeriodSeconds: -1), "shutdownGracePeriodSeconds"),
        ]
    )
    func invalidConfigurationIsRejected(configuration: HTTPServerConfiguration, field: String) throws {
        let server = HTTPServer(configuration: configuration) { _ in HTTPResponse(status: 200) }

        let error = try #require(throws: HTTPServerError.self) { try server.start() }

        #expect(error.code == .invalidConfiguration)
        #expect(error.message.hasPrefix(field))
        #expect(server.port == 0)
    }

    @Test("A host that does not resolve fails with bindFailed, naming the host and the resolver's reason")
    func unresolvableHost() throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.256")) { _ in
            HTTPResponse(status: 200)
        }
        let error = try #require(throws: HTTPServerError.self) { try server.start() }
        #expect(error.code == .bindFailed)
        #expect(error.description.hasPrefix("cannot resolve the host \"127.0.0.256\": "))
    }

    @Test("Listening on a host name serves clients on the address it resolves to")
    func hostNameServes() async throws {
        let server = try startServer(HTTPServerConfiguration(host: "localhost", threads: 1))
        defer { server.stop() }

        #expect(try await fetch(server, "/any").status == 200)
    }

    @Test("Listening on 0.0.0.0 serves clients on the loopback address")
    func wildcardHostServesLoopback() async throws {
        let server = try startServer(HTTPServerConfiguration(host: "0.0.0.0", threads: 1))
        defer { server.stop() }

        #expect(try await fetch(server, "/any").status == 200)
    }
}
