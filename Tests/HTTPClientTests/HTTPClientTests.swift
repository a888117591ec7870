import HTTPClient
import Testing

/// The client against real servers on loopback, one behaviour each.
struct HTTPClientTests {
    private let client = HTTPClient()
    private let notification = Array(#"{"signedPayload":"eyJ.e30.sig"}"#.utf8)

    private func post(_ server: LoopbackServer, timeout: Duration = .seconds(5)) throws(HTTPClientError)
        -> HTTPClientResponse
    {
        try client.post(
            "http://127.0.0.1:\(server.port)/notify", body: notification,
            headers: [("Content-Type", "application/json")], timeout: timeout)
    }

    /// The error `body` throws, or nil when it returns.
    private func failure(_ body: () throws(HTTPClientError) -> HTTPClientResponse) -> HTTPClientError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func returnsStatusHeadersAndBodyOfA200() throws {
        let server = try LoopbackServer(
            .respond("HTTP/1.1 200 OK\r\nContent-Length: 6\r\nContent-Type: text/plain\r\n\r\nthanks"))
        let response = try post(server)
        #expect(response.status == 200)
        #expect(response.header("content-type") == "text/plain")
        #expect(response.body == Array("thanks".utf8))
        #expect(!response.isBodyTruncated)
    }

    @Test func returnsA500AsAResponse() throws {
        let server = try LoopbackServer(.respond("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"))
        let response = try post(server)
        #expect(response.status == 500)
        #expect(response.body.isEmpty)
    }

    @Test func decodesAChunkedBody() throws {
        let server = try LoopbackServer(
            .respond("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5;x=y\r\npedia\r\n0\r\n\r\n"))
        #expect(try post(server).body == Array("Wikipedia".utf8))
    }

    @Test func readsABodyWithoutLengthUntilClose() throws {
        let server = try LoopbackServer(.respond("HTTP/1.0 200 OK\r\n\r\nuntil the end"))
        #expect(try post(server).body == Array("until the end".utf8))
    }

    @Test func truncatesABodyBeyondTheBound() throws {
        let server = try LoopbackServer(
            .respond("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "x", count: 100_000)))
        let response = try HTTPClient(maximumBodyBytes: 1000).post(
            "http://127.0.0.1:\(server.port)/", body: [], timeout: .seconds(5))
        #expect(response.body.count == 1000)
        #expect(response.isBodyTruncated)
    }

    @Test func sendsMethodTargetHostLengthHeadersAndBody() throws {
        let server = try LoopbackServer(.respond("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
        _ = try client.post(
            "http://127.0.0.1:\(server.port)/apple/notifications?v=2", body: notification,
            headers: [("Content-Type", "application/json")], timeout: .seconds(5))
        let request = try #require(server.request())
        let headEnd = try #require(request.firstRange(of: "\r\n\r\n"))
        let lines = request[..<headEnd.lowerBound].split(separator: "\r\n")
        #expect(lines.first == "POST /apple/notifications?v=2 HTTP/1.1")
        #expect(lines.contains("Host: 127.0.0.1:\(server.port)"))
        #expect(lines.contains("Content-Length: \(notification.count)"))
        #expect(lines.contains("Connection: close"))
        #expect(lines.contains("User-Agent: openreceipt"))
        #expect(lines.contains("Content-Type: application/json"))
        #expect(Array(request[headEnd.upperBound...].utf8) == notification)
    }

    @Test func closeWithoutAnswerIsNoResponse() throws {
        let server = try LoopbackServer(.closeWithoutAnswer)
        #expect(failure { () throws(HTTPClientError) in try post(server) }?.code == .noResponse)
    }

    @Test func receiverClosingWhileTheRequestIsSentIsNoResponseWithoutSIGPIPE() throws {
        let server = try LoopbackServer(.closeUnread)
        let error = failure { () throws(HTTPClientError) in
            try client.post(
                "http://127.0.0.1:\(server.port)/", body: [UInt8](repeating: 0x61, count: 16 << 20),
                timeout: .seconds(5))
        }
        #expect(error?.code == .noResponse)
        #expect(error?.message.contains("closed the connection while the request was being sent") == true)
    }

    @Test func closeInTheMiddleOfTheBodyIsPrematureClose() throws {
        let server = try LoopbackServer(.respond("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part"))
        #expect(failure { () throws(HTTPClientError) in try post(server) }?.code == .prematureClose)
    }

    @Test func closeInTheMiddleOfAChunkIsPrematureClose() throws {
        let server = try LoopbackServer(.respond("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort"))
        #expect(failure { () throws(HTTPClientError) in try post(server) }?.code == .prematureClose)
    }

    @Test func receiverThatNeverAnswersTimesOut() throws {
        let server = try LoopbackServer(.neverAnswer)
        let error = failure { () throws(HTTPClientError) in try post(server, timeout: .milliseconds(500)) }
        #expect(error?.code == .timedOut)
        #expect(error?.message == "127.0.0.1 port \(server.port) sent no complete response within 0.5 seconds")
    }

    @Test func receiverThatDripsBytesIsCutAtTheDeadline() throws {
        let server = try LoopbackServer(.drip)
        #expect(
            failure { () throws(HTTPClientError) in try post(server, timeout: .milliseconds(500)) }?.code == .timedOut)
    }

    @Test func garbageIsInvalidResponse() throws {
        let server = try LoopbackServer(.respond("<html>not http</html>\r\n\r\n"))
        #expect(failure { () throws(HTTPClientError) in try post(server) }?.code == .invalidResponse)
    }

    @Test func portWithNothingListeningIsConnectionFailed() throws {
        let unused = try UnusedPort()
        let error = failure { () throws(HTTPClientError) in
            try client.post("http://127.0.0.1:\(unused.port)/", body: [], timeout: .seconds(5))
        }
        #expect(error?.code == .connectionFailed)
        #expect(error?.message == "cannot connect to 127.0.0.1 port \(unused.port): Connection refused (errno 111)")
    }

    @Test(.enabled(if: LoopbackServer.isIPv6Available, "::1 cannot be bound here"))
    func reachesAnIPv6LoopbackLiteral() throws {
        let server = try LoopbackServer(.respond("HTTP/1.1 204 No Content\r\n\r\n"), ipv6: true)
        let response = try client.post("http://[::1]:\(server.port)/", body: [], timeout: .seconds(5))
        #expect(response.status == 204)
        #expect(server.request()?.contains("Host: [::1]:\(server.port)\r\n") == true)
    }

    @Test func resolvesAHostName() throws {
        let server = try LoopbackServer(.respond("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
        let response = try client.post("http://localhost:\(server.port)/", body: [], timeout: .seconds(5))
        #expect(response.status == 200)
    }
}
