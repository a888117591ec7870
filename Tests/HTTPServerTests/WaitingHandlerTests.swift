import Dispatch
import Foundation
import HTTPServer
import Synchronization
import Testing

/// Lets `parties` callers through once all of them have arrived, or each after `seconds` at most; says whether
/// they all arrived.
final class Rendezvous: Sendable {
    private let parties: Int
    private let arrived = Mutex(0)
    private let allThere = DispatchSemaphore(value: 0)

    init(parties: Int) {
        self.parties = parties
    }

    /// How many callers have arrived so far.
    var arrivals: Int { arrived.withLock { $0 } }

    func arrive(waitingAtMost seconds: Int) -> Bool {
        let count = arrived.withLock {
            $0 += 1
            return $0
        }
        if count == parties {
            for _ in 0..<parties { allThere.signal() }
        }
        return allThere.wait(timeout: .now() + .seconds(seconds)) == .success
    }
}

@Suite("Handlers that wait run on threads of their own", .serialized)
struct WaitingHandlerTests {
    /// A server with one daemon thread whose `/wait` requests are answered by waiting (for the others, at the
    /// rendezvous).
    private func startServer(waiters: Int, rendezvous: Rendezvous) throws -> HTTPServer {
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1, waitingThreads: waiters)) {
            request in
            guard request.path == "/wait" else {
                return .response(HTTPResponse(status: 200, body: Array("other".utf8)))
            }
            return .waiting {
                let together = rendezvous.arrive(waitingAtMost: 10)
                return .response(HTTPResponse(status: together ? 200 : 504, body: Array(request.body)))
            }
        }
        try server.start()
        return server
    }

    @Test("with one daemon thread, 8 requests whose handlers wait for each other are all waiting at once")
    func waitingHandlersWaitTogether() async throws {
        let rendezvous = Rendezvous(parties: 8)
        let server = try startServer(waiters: 8, rendezvous: rendezvous)
        defer { server.stop() }
        let statuses = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for index in 0..<8 {
                group.addTask {
                    let result = try await fetch(server, "/wait", method: "POST", body: Array("\(index)".utf8))
                    return (result.status, result.body)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.map(\.0) == Array(repeating: 200, count: 8))
        #expect(Set(statuses.map { String(decoding: $0.1, as: UTF8.self) }) == Set((0..<8).map(String.init)))
    }

    @Test("while handlers wait, the daemon's one thread answers other requests on other connections")
    func othersServedWhileWaiting() async throws {
        let rendezvous = Rendezvous(parties: 3)
        let server = try startServer(waiters: 4, rendezvous: rendezvous)
        defer { server.stop() }
        let waiting = Task { try await fetch(server, "/wait", method: "POST", body: Array("w".utf8)).status }
        let waitingToo = Task { try await fetch(server, "/wait", method: "POST", body: Array("v".utf8)).status }
        for _ in 0..<5 {
            let other = try await fetch(server, "/other")
            #expect(other.status == 200)
            #expect(other.body == Array("other".utf8))
        }
        // The third party lets the two waiting handlers go.
        let last = try await fetch(server, "/wait", method: "POST", body: Array("u".utf8))
        #expect(last.status == 200)
        #expect(try await waiting.value == 200)
        #expect(try await waitingToo.value == 200)
    }

    @Test("stopping while a handler waits, past the grace period, returns only once that handler has returned")
    func stopWaitsForWaitingHandler() async throws {
        let rendezvous = Rendezvous(parties: 2)
        let returned = Mutex(false)
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(threads: 1, shutdownGracePeriodSeconds: 0, waitingThreads: 1)
        ) { _ in
            .waiting {
                _ = rendezvous.arrive(waitingAtMost: 10)
                returned.withLock { $0 = true }
                return .response(HTTPResponse(status: 200))
            }
        }
        try server.start()
        let waiting = Task { try? await fetch(server, "/wait", method: "POST", body: Array("w".utf8)) }
        #expect(try await eventually { rendezvous.arrivals == 1 })
        let stopping = Stopping(server)
        try await Task.sleep(for: .milliseconds(300))
        #expect(!stopping.returned)
        _ = rendezvous.arrive(waitingAtMost: 10)
        #expect(try await eventually { stopping.returned })
        #expect(returned.withLock { $0 })
        _ = await waiting.value
    }

    @Test("a waiting answer's work may itself answer later, from another thread")
    func waitingWorkAnswersLater() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1, waitingThreads: 1)) { request in
            .waiting {
                .later { responder in
                    Thread { responder.respond(HTTPResponse(status: 202, body: Array(request.body))) }.start()
                }
            }
        }
        try server.start()
        defer { server.stop() }
        let result = try await fetch(server, "/wait", method: "POST", body: Array("w".utf8))
        #expect(result.status == 202)
        #expect(result.body == Array("w".utf8))
    }

    @Test("a waiting thread count out of range is refused by its name")
    func waitingThreadsValidated() {
        let server = HTTPServer(configuration: HTTPServerConfiguration(waitingThreads: 0)) { _ in
            HTTPResponse(status: 200)
        }
        #expect(throws: HTTPServerError.self) { try server.start() }
        do {
            try server.start()
        } catch {
            #expect(error.message.contains("waitingThreads"))
        }
    }
}
