import Dispatch
import Foundation
import Glibc
import HTTPServer
import Synchronization
import Testing

/// Connections an attacker holds open; every loop that feeds them is bounded in count and time and ends on its
/// own, and the server listens on loopback only.
final class Attackers: @unchecked Sendable {
    private let lock = Mutex(())
    private var connections: [RawHTTPConnection] = []
    private let stopped = Atomic(false)
    private let finished = DispatchGroup()

    /// Opens `count` connections from `source`, sending nothing.
    init(port: UInt16, count: Int, source: String = "127.0.0.1") {
        for _ in 0..<count {
            if let connection = try? RawHTTPConnection(port: port, timeoutSeconds: 2, source: source) {
                connections.append(connection)
            }
        }
    }

    var count: Int { lock.withLock { _ in connections.count } }

    /// Sends a never-ending head one byte per connection every `interval` seconds, for at most `limit` seconds.
    func slowloris(every interval: Double, forAtMost limit: Double) {
        let head =
            Array("GET / HTTP/1.1\r\nHost: t\r\nX-Padding: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 512)
        finished.enter()
        Thread { [self] in
            defer { finished.leave() }
            let connections = lock.withLock { _ in self.connections }
            let rounds = min(head.count, Int(limit / interval))
            for index in 0..<rounds where !stopped.load(ordering: .relaxed) {
                for connection in connections {
                    try? connection.send([head[index]])
                }
                usleep(useconds_t(interval * 1_000_000))
            }
        }.start()
    }

    /// Stops the feeding loop and closes every connection.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
        lock.withLock { _ in connections = [] }
    }
}

/// Sends `GET /fresh` from `source` on a new connection; the status, or nil when no answer came within `seconds`.
func freshRequest(port: UInt16, source: String, seconds: Int = 2) -> Int? {
    guard let connection = try? RawHTTPConnection(port: port, timeoutSeconds: seconds, source: source) else {
        return nil
    }
    let started = monotonicSeconds()
    guard (try? connection.send("GET /fresh HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")) != nil,
        let response = try? connection.readResponse(), monotonicSeconds() - started <= Double(seconds)
    else {
        return nil
    }
    return response.status
}

/// Whether `condition` holds within `attempts` tries a tenth of a second apart.
func within(attempts: Int = 50, _ condition: () -> Bool) -> Bool {
    for _ in 0..<attempts {
        if condition() {
            return true
        }
        usleep(100_000)
    }
    return false
}

func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

@Suite("Availability under connection attacks: deadlines, a per-client cap and a fast 503", .serialized)
struct AvailabilityTests {
    @Test("A head sent one byte at a time is answered 408 and closed at the header deadline, though bytes keep coming")
    func headerDeadlineIgnoresActivity() throws {
        let recorder = Recorder()
        let server = try startServer(
            HTTPServerConfiguration(threads: 2, connectionTimeoutSeconds: 30, requestHeaderTimeoutSeconds: 1),
            recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 1)
        let head =
            Array("GET /slow HTTP/1.1\r\nHost: t\r\nX-Padding: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 40)

        // Twenty seconds of one byte every quarter of a second, unless the server closes first.
        var sent = 0
        for byte in head {
            guard (try? connection.send([byte])) != nil, !connection.hasData() else { break }
            sent += 1
            usleep(250_000)
        }
        let (bytes, closed) = connection.readUntilClose()

        #expect(sent < head.count)
        #expect(closed)
        #expect(statusLineCount(bytes) == 1)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 408 "))
        #expect(recorder.count == 0)
    }

    @Test("Between requests on a kept-alive connection the header deadline runs too: a trickled second head is cut off")
    func headerDeadlineOnKeptAliveConnection() throws {
        let recorder = Recorder()
        let server = try startServer(
            HTTPServerConfiguration(threads: 2, connectionTimeoutSeconds: 30, requestHeaderTimeoutSeconds: 1),
            recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 1)
        try connection.send("GET /first HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try connection.readResponse().status == 200)
        let head =
            Array("GET /second HTTP/1.1\r\nHost: t\r\nX-Padding: ".utf8)
            + Array(repeating: UInt8(ascii: "a"), count: 40)

        var sent = 0
        for byte in head {
            guard (try? connection.send([byte])) != nil else { break }
            sent += 1
            usleep(250_000)
        }

        #expect(sent < head.count)
        #expect(connection.waitForClose())
        #expect(recorder.all.map(\.path) == ["/first"])
    }

    @Test("A body sent one byte at a time is cut off at the body deadline, though bytes keep coming")
    func bodyDeadlineIgnoresActivity() throws {
        let recorder = Recorder()
        let server = try startServer(
            HTTPServerConfiguration(threads: 2, connectionTimeoutSeconds: 30, requestBodyTimeoutSeconds: 1),
            recorder: recorder)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.port, timeoutSeconds: 1)
        try connection.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 80\r\n\r\n")

        var sent = 0
        for _ in 0..<80 {
            guard (try? connection.send("x")) != nil else { break }
            sent += 1
            usleep(250_000)
        }

        #expect(sent < 80)
        #expect(connection.waitForClose())
        #expect(recorder.count == 0)
    }

    @Test("A client that leaves in the middle of its first head frees its place at once, not at the deadline")
    func abandonedHeadFreesItsPlace() throws {
        let server = try startServer(
            HTTPServerConfiguration(threads: 2, maximumConnections: 2, requestHeaderTimeoutSeconds: 60))
        defer { server.stop() }
        do {
            let leaving = try RawHTTPConnection(port: server.port)
            try leaving.send("GET /gone HTTP/1.1\r\nHost: t\r\nX-Padding: " + String(repeating: "a", count: 1000))
        }
        let staying = try RawHTTPConnection(port: server.port)
        try staying.send("GET /staying HTTP/1.1\r\nHost: t\r\nX-Padding: ")

        #expect(within { freshRequest(port: server.port, source: "127.0.0.2") == 200 })
    }

    @Test("A client at its connection cap gets a fast 503; another address is served")
    func perClientCap() throws {
        let server = try startServer(HTTPServerConfiguration(threads: 2, maximumConnectionsPerClient: 4))
        defer { server.stop() }
        let attackers = Attackers(port: server.port, count: 4)
        defer { attackers.stop() }
        #expect(attackers.count == 4)

        let refused = try RawHTTPConnection(port: server.port, timeoutSeconds: 2)
        try refused.send("GET /more HTTP/1.1\r\nHost: t\r\n\r\n")
        let answer = try refused.readResponse()

        #expect(answer.status == 503)
        #expect(String(decoding: answer.body, as: UTF8.self).contains(#""code":"too_many_connections""#))
        #expect(answer.header("Connection") == "close")
        #expect(refused.waitForClose())
        #expect(freshRequest(port: server.port, source: "127.0.0.2") == 200)
    }

    @Test("A full server answers a new connection with a fast 503 instead of leaving it in the backlog")
    func fullServerAnswers503() throws {
        let server = try startServer(HTTPServerConfiguration(threads: 2, maximumConnections: 8))
        defer { server.stop() }
        let attackers = (3..<11).map { Attackers(port: server.port, count: 1, source: "127.0.0.\($0)") }

        let refused = try RawHTTPConnection(port: server.port, timeoutSeconds: 2, source: "127.0.0.2")
        try refused.send("GET /more HTTP/1.1\r\nHost: t\r\n\r\n")
        let answer = try refused.readResponse()
        #expect(answer.status == 503)
        #expect(String(decoding: answer.body, as: UTF8.self).contains(#""code":"server_busy""#))

        for attacker in attackers { attacker.stop() }
        #expect(within { freshRequest(port: server.port, source: "127.0.0.2") == 200 })
    }

    @Test(
        "136 slowloris sockets from one address against 128 connections: 9 of 10 fresh requests answered within 2 s")
    func slowlorisDoesNotLockOthersOut() throws {
        let server = try startServer(HTTPServerConfiguration(threads: 2, maximumConnections: 128))
        defer { server.stop() }
        let attackers = Attackers(port: server.port, count: 136)
        attackers.slowloris(every: 2, forAtMost: 8)
        defer { attackers.stop() }
        usleep(500_000)

        let answered = (0..<10).filter { _ in freshRequest(port: server.port, source: "127.0.0.2") == 200 }.count

        #expect(answered >= 9)
    }

    @Test("300 idle connections from one address against 128: 9 of 10 fresh requests answered within 2 s")
    func idleConnectionsDoNotLockOthersOut() throws {
        let server = try startServer(HTTPServerConfiguration(threads: 2, maximumConnections: 128))
        defer { server.stop() }
        let attackers = Attackers(port: server.port, count: 300)
        defer { attackers.stop() }
        usleep(500_000)

        let answered = (0..<10).filter { _ in freshRequest(port: server.port, source: "127.0.0.2") == 200 }.count

        #expect(answered >= 9)
    }

    @Test("Connections held by many addresses are closed at the header deadline, and the server serves again")
    func deadlineFreesAFullServer() throws {
        let server = try startServer(
            HTTPServerConfiguration(threads: 2, maximumConnections: 16, requestHeaderTimeoutSeconds: 1))
        defer { server.stop() }
        let attackers = (3..<19).map { Attackers(port: server.port, count: 1, source: "127.0.0.\($0)") }
        defer { for attacker in attackers { attacker.stop() } }
        for attacker in attackers { attacker.slowloris(every: 0.25, forAtMost: 10) }
        #expect(freshRequest(port: server.port, source: "127.0.0.2") == 503)

        #expect(within { freshRequest(port: server.port, source: "127.0.0.2") == 200 })
    }
}
