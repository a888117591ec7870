import Glibc
import HTTPServer
import ReceiptService
import StrictJSON
import Synchronization

/// `receipt serve`: the receipt service over HTTP until SIGINT or SIGTERM.
enum ServeCommand {
    static let help = """
        Usage: receipt serve --config FILE [--listen HOST:PORT]

        Runs the receipt service: verifyReceipt-compatible verification, a durable ledger of transactions,
        freshly signed receipts per customer, entitlements, /healthz and /metrics (see the README for the
        configuration file and the endpoints). The configuration is validated before anything listens; a bad
        one is refused with the key and the rule it breaks.

        Standard error gets one JSON line when listening ({"event":"listening","url":…}) and one when stopped;
        standard output gets one JSON line per request (never receipt contents or secrets), through a queue of
        4096 lines: when its reader falls behind, lines are dropped (counted in /metrics as
        receipt_log_lines_dropped_total) rather than holding up requests. SIGINT or SIGTERM stops accepting
        connections, finishes requests in flight, closes the ledger and exits 0.

        Options:
          --config FILE       The configuration file (JSON).
          --listen HOST:PORT  Override the configuration's listen address: 127.0.0.1:8080, localhost:8080,
                              [::1]:8080 (port 0: any free port).
        """

    /// The options the command accepts.
    static let options = OptionSpec(valued: ["--config", "--listen"])

    static func run(_ arguments: [String]) throws(CommandFailure) {
        let parsed = try Arguments(arguments, spec: options)
        guard let path = try parsed.single("--config") else { throw .usage("--config FILE is required") }
        let listen: ListenAddress?
        do {
            listen = try parsed.single("--listen").map(ListenAddress.init(parsing:))
        } catch {
            throw .usage("--listen: \(error)")
        }
        let text = try Files.read(path)
        var configuration: ServiceConfiguration
        do {
            configuration = try ServiceConfiguration(
                json: text, baseDirectory: ServiceConfiguration.directory(of: path))
        } catch {
            throw .rejected("\(path): \(error)")
        }
        if let listen {
            configuration.host = listen.host
            configuration.port = listen.port
        }
        // A log reader that goes away must not kill the server: writing to its pipe fails with EPIPE instead.
        signal(SIGPIPE, SIG_IGN)
        // Block the stop signals before any thread starts, so every server thread inherits the mask and only
        // sigwait below receives them.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        // A file-size limit (RLIMIT_FSIZE) reached by the ledger must fail that write, not kill the server.
        signal(SIGXFSZ, SIG_IGN)

        let output = LineWriter(descriptor: STDOUT_FILENO)
        let requestLog: LogLineQueue
        do {
            requestLog = try LogLineQueue(capacity: 4096) { output.write(lines: $0) }
        } catch {
            throw .rejected("the request log's writer could not start: \(error)")
        }
        let server: ReceiptServer
        do {
            server = try ReceiptServer(
                configuration: configuration, log: { requestLog.append($0) },
                droppedLogLines: { requestLog.droppedLines })
            try server.start()
        } catch {
            requestLog.close(waitingAtMost: 1)
            // A ledger that cannot be opened for writing is a file that cannot be written: exit status 3.
            throw error.code == .ledger ? .io("\(error)") : .rejected("\(error)")
        }
        let errors = LineWriter(descriptor: STDERR_FILENO)
        errors.write(
            event("listening", ["url": .string("http://\(ListenAddress(host: configuration.host, port: server.port))")])
        )
        var received: Int32 = 0
        while sigwait(&stopSignals, &received) != 0 {}
        server.stop()
        // The lines still queued get a moment to be written; a reader that stopped reading does not hold the exit.
        requestLog.close(waitingAtMost: 2)
        errors.write(event("stopped", ["signal": .integer(received)]))
    }

    private static func event(_ name: String, _ fields: KeyValuePairs<String, JSONValue>) -> String {
        var object = JSONObject(["event": .string(name)])
        for (key, value) in fields { object[key] = value }
        return JSONValue.object(object).serialized()
    }
}

/// Writes whole lines to a file descriptor from any thread, each call's lines with one `write` so lines never
/// interleave. It blocks while the descriptor's reader does not read: the request log calls it only from its
/// ``LogLineQueue``'s writer thread.
private final class LineWriter: Sendable {
    private let descriptor: Int32
    private let lock = Mutex(())

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    func write(_ line: String) {
        write(lines: [line])
    }

    func write(lines: [String]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.utf8.count + 1 })
        for line in lines {
            bytes.append(contentsOf: line.utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        lock.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
