import Testing

@testable import HTTPClient

/// Response bytes handed out a few at a time (so every parse step meets a partial buffer), then end of stream.
final class ScriptedSource: ResponseSource {
    private var bytes: ArraySlice<UInt8>
    private let step: Int

    init(_ text: String, step: Int = 3) {
        bytes = ArraySlice(text.utf8)
        self.step = step
    }

    func receive(maximum: Int) throws(HTTPClientError) -> [UInt8] {
        let taken = bytes.prefix(min(step, maximum))
        bytes.removeFirst(taken.count)
        return Array(taken)
    }
}

/// A response the reader must refuse, and why.
struct MalformedResponse: CustomTestStringConvertible, Sendable {
    let rule: String
    let bytes: String
    var testDescription: String { rule }
}

/// The framing rules, read from scripted bytes.
struct ResponseReaderTests {
    private func read(_ text: String, maximumBodyBytes: Int = 65536) throws(HTTPClientError) -> HTTPClientResponse {
        var reader = ResponseReader(source: ScriptedSource(text), peer: "test", maximumBodyBytes: maximumBodyBytes)
        return try reader.read()
    }

    private func failure(_ text: String) -> HTTPClientError? {
        do {
            _ = try read(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func skipsInterimResponses() throws {
        let response = try read("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(response.status == 200)
        #expect(response.body == Array("ok".utf8))
    }

    @Test func acceptsAStatusLineWithoutReason() throws {
        #expect(try read("HTTP/1.1 202\r\nContent-Length: 0\r\n\r\n").status == 202)
    }

    @Test func keepsHeaderOrderAndTrimsValues() throws {
        let response = try read("HTTP/1.1 200 OK\r\nB: 1 \r\nA:\t2\r\nContent-Length: 0\r\n\r\n")
        #expect(response.headers.map(\.name) == ["B", "A", "Content-Length"])
        #expect(response.headers.map(\.value) == ["1", "2", "0"])
    }

    @Test func gives204NoBody() throws {
        let response = try read("HTTP/1.1 204 No Content\r\n\r\nextra")
        #expect(response.body.isEmpty)
    }

    @Test func acceptsRepeatedEqualContentLengths() throws {
        #expect(try read("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok").body.count == 2)
    }

    @Test func readsChunkTrailersWithoutKeepingThem() throws {
        let response = try read(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n")
        #expect(response.body == Array("0123456789".utf8))
        #expect(response.header("X-T") == nil)
    }

    @Test func truncatesAChunkedBodyAtTheBound() throws {
        let response = try read(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n",
            maximumBodyBytes: 6)
        #expect(response.body == Array("abcdef".utf8))
        #expect(response.isBodyTruncated)
    }

    @Test func nothingAtAllIsNoResponse() {
        #expect(failure("")?.code == .noResponse)
    }

    @Test func closeInTheHeadIsPrematureClose() {
        #expect(failure("HTTP/1.1 200 OK\r\nContent-")?.code == .prematureClose)
    }

    @Test func headBeyondTheBoundIsInvalid() {
        let error = failure("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 20000) + "\r\n\r\n")
        #expect(error?.code == .invalidResponse)
        #expect(error?.message.contains("longer than 16384 bytes") == true)
    }

    @Test(arguments: [
        MalformedResponse(rule: "not HTTP at all", bytes: "SSH-2.0-OpenSSH\r\n"),
        MalformedResponse(rule: "HTTP/2 status line", bytes: "HTTP/2 200\r\n\r\n"),
        MalformedResponse(rule: "status out of range", bytes: "HTTP/1.1 600 Odd\r\n\r\n"),
        MalformedResponse(rule: "two-digit status", bytes: "HTTP/1.1 20 OK\r\n\r\n"),
        MalformedResponse(rule: "bare LF", bytes: "HTTP/1.1 200 OK\nContent-Length: 0\n\n"),
        MalformedResponse(rule: "obsolete line folding", bytes: "HTTP/1.1 200 OK\r\nA: 1\r\n 2\r\n\r\n"),
        MalformedResponse(rule: "space before the colon", bytes: "HTTP/1.1 200 OK\r\nA : 1\r\n\r\n"),
        MalformedResponse(rule: "header without colon", bytes: "HTTP/1.1 200 OK\r\nnocolon\r\n\r\n"),
        MalformedResponse(rule: "control character in a value", bytes: "HTTP/1.1 200 OK\r\nA: \u{1}\r\n\r\n"),
        MalformedResponse(rule: "unrequested 101", bytes: "HTTP/1.1 101 Switching Protocols\r\n\r\n"),
        MalformedResponse(
            rule: "Transfer-Encoding and Content-Length",
            bytes: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"),
        MalformedResponse(
            rule: "unequal Content-Lengths",
            bytes: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"),
        MalformedResponse(rule: "signed Content-Length", bytes: "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\na"),
        MalformedResponse(
            rule: "gzip coding", bytes: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
        MalformedResponse(
            rule: "chunk size not hex", bytes: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        MalformedResponse(
            rule: "negative chunk size", bytes: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n"),
        MalformedResponse(
            rule: "chunk longer than its size",
            bytes: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n"),
    ])
    func refusesMalformedResponses(_ malformed: MalformedResponse) {
        #expect(failure(malformed.bytes)?.code == .invalidResponse)
    }
}
