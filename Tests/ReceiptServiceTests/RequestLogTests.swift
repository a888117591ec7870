import Dispatch
import Foundation
import ReceiptService
import StrictJSON
import Synchronization
import Testing

/// A writer that blocks on its first line until released, recording what it wrote.
final class StalledWriter: Sendable {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    private let written = Mutex<[String]>([])

    func write(_ line: String) {
        let first = written.withLock { lines -> Bool in
            lines.append(line)
            return lines.count == 1
        }
        if first {
            entered.signal()
            release.wait()
        }
    }

    var lines: [String] { written.withLock { $0 } }
}

@Suite("The request log never holds up serving")
struct RequestLogTests {
    @Test("lines wait for a stalled writer up to the queue's capacity; later ones are dropped and counted, at once")
    func queueDropsWhenFull() throws {
        let writer = StalledWriter()
        let queue = try LogLineQueue(capacity: 4) { $0.forEach(writer.write) }
        queue.append("first")
        #expect(writer.entered.wait(timeout: .now() + 10) == .success)

        for index in 0..<6 {
            queue.append("line \(index)")
        }

        #expect(queue.droppedLines == 2)
        writer.release.signal()
        #expect(queue.close(waitingAtMost: 10))
        #expect(writer.lines == ["first", "line 0", "line 1", "line 2", "line 3"])
        queue.append("after close")
        #expect(queue.droppedLines == 3)
    }

    @Test("receipt serve with its standard output a pipe nobody reads keeps answering, and counts what it dropped")
    func stalledStandardOutput() throws {
        let files = try ConfigurationTests.Files()
        let path = try ServeProcessTests().configFile(files)
        let server = try UnreadServeProcess(config: path)
        defer { server.stop() }
        let client = try SocketClient(port: server.port)

        // The pipe holds about 360 request lines and the queue 4096 more; send until the server reports drops,
        // at most 20 000 requests.
        var dropped = 0
        var answered = 0
        for round in 1...20 {
            for _ in 0..<1000 {
                try client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
                if try client.response().status == 200 { answered += 1 }
            }
            dropped = try server.droppedLogLines()
            if dropped > 0 || round == 20 { break }
        }

        #expect(answered >= 4000)
        #expect(dropped > 0)
        let fresh = try SocketClient(port: server.port)
        try fresh.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(try fresh.response().status == 200)
    }
}

/// `receipt serve` with its standard output a pipe this process holds open and never reads.
final class UnreadServeProcess {
    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    let port: UInt16

    init(config path: String) throws {
        process.executableURL = ServeProcess.executable
        process.arguments = ["serve", "--config", path]
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var line: [UInt8] = []
        while let byte = errors.fileHandleForReading.readData(ofLength: 1).first, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        guard case .string(let url)? = try? JSONValue(parsing: line)["url"],
            let port = url.split(separator: ":").last.flatMap({ UInt16($0) })
        else {
            process.terminate()
            throw FixtureError("receipt serve did not start: \(String(decoding: line, as: UTF8.self))")
        }
        self.port = port
    }

    /// `receipt_log_lines_dropped_total` from `/metrics`, on a connection of its own.
    func droppedLogLines() throws -> Int {
        let client = try SocketClient(port: port)
        try client.send("GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        let metrics = try client.response().body
        guard
            let line = metrics.split(separator: "\n").first(where: { $0.hasPrefix("receipt_log_lines_dropped_total ") }
            ),
            let count = Int(line.split(separator: " ")[1])
        else {
            throw FixtureError("no receipt_log_lines_dropped_total in /metrics")
        }
        return count
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
