import Foundation
import HTTPServer
import Synchronization
import Testing

@Suite("Handlers that answer later", .serialized)
struct LaterAnswerTests {
    /// Responders handed out by the handler, in the order their requests came, for the test to answer.
    private final class Responders: Sendable {
        private let held = Mutex<[HTTPResponder]>([])

        func keep(_ responder: HTTPResponder) {
            held.withLock { $0.append(responder) }
        }

        var count: Int { held.withLock { $0.count } }

        /// Gives the first responder kept `response` (from the calling thread) and lets go of it.
        func answerFirst(_ response: HTTPResponse) {
            let first = held.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            first?.respond(response)
        }

        /// Lets go of every responder kept, without a response.
        func dropAll() {
            held.withLock { $0.removeAll() }
        }
    }

    /// A server with one daemon thread and no waiting pool use: `/later` is answered later, by the test, through the
    /// responders kept; any other path at once.
    private func startServer(_ responders: Responders, gracePeriod: Int = 10) throws -> HTTPServer {
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(threads: 1, shutdownGracePeriodSeconds: gracePeriod)
        ) { request in
            guard request.path == "/later" else { return .response(HTTPResponse(status: 200, body: Array("now".utf8))) }
            return .later { responder in responders.keep(responder) }
        }
        try server.start()
        return server
    }

    @Test("a response given later, from another thread, is sent; meanwhile the daemon's one thread serves others")
    func answeredLater() async throws {
        let responders = Responders()
        let server = try startServer(responders)
        defer { server.stop() }
        let later = Task { try await fetch(server, "/later", method: "POST", body: Array("x".utf8)) }
        #expect(try await eventually { responders.count == 1 })
        for _ in 0..<3 {
            #expect(try await fetch(server, "/other").body == Array("now".utf8))
        }
        Thread.detachNewThread { responders.answerFirst(HTTPResponse(status: 201, body: Array("done".utf8))) }
        let answer = try await later.value
        #expect(answer.status == 201)
        #expect(answer.body == Array("done".utf8))
    }

    @Test("only the first response given to a responder is sent")
    func firstResponseCounts() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1)) { _ in
            .later { responder in
                responder.respond(HTTPResponse(status: 202, body: Array("first".utf8)))
                responder.respond(HTTPResponse(status: 500, body: Array("second".utf8)))
            }
        }
        try server.start()
        defer { server.stop() }
        let answer = try await fetch(server, "/")
        #expect(answer.status == 202)
        #expect(answer.body == Array("first".utf8))
    }

    @Test("a responder let go of without a response sends 500 internal_error")
    func droppedResponder() async throws {
        let responders = Responders()
        let server = try startServer(responders)
        defer { server.stop() }
        let later = Task { try await fetch(server, "/later", method: "POST", body: Array("x".utf8)) }
        #expect(try await eventually { responders.count == 1 })
        responders.dropAll()
        let answer = try await later.value
        #expect(answer.status == 500)
        #expect(String(decoding: answer.body, as: UTF8.self).contains("\"internal_error\""))
    }

    @Test("stopping while a response is still to come, past the grace period, returns only once it was given")
    func stopWaitsForLaterAnswer() async throws {
        let responders = Responders()
        let server = try startServer(responders, gracePeriod: 0)
        let later = Task { try? await fetch(server, "/later", method: "POST", body: Array("x".utf8)) }
        #expect(try await eventually { responders.count == 1 })
        let stopping = Stopping(server)
        try await Task.sleep(for: .milliseconds(300))
        #expect(!stopping.returned)
        responders.answerFirst(HTTPResponse(status: 200))
        #expect(try await eventually { stopping.returned })
        _ = await later.value
    }
}
