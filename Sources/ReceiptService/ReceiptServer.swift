import HTTPServer
import ReceiptLedger

/// Why the server could not start.
public struct ReceiptServerError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        /// The configuration is invalid.
        case configuration
        /// The ledger could not be opened.
        case ledger
        /// The server could not start: the address could not be listened on, or the system made no threads for it.
        case listen
    }

    public let code: Code
    public let message: String

    public var description: String { message }
}

/// `receipt serve` as a library: the service over a SQLite or PostgreSQL ledger behind libmicrohttpd, started and stopped in
/// process (tests run it on an ephemeral port).
public final class ReceiptServer: Sendable {
    public let service: ReceiptService
    private let ledger: any TransactionLedger
    private let http: HTTPServer

    /// Opens the ledger and prepares the server; nothing listens until ``start()``. `log` gets one line per request
    /// on the thread serving it and must not block; `droppedLogLines` tells how many it dropped (see
    /// ``LogLineQueue``).
    public init(
        configuration: ServiceConfiguration, log: @escaping @Sendable (String) -> Void = { _ in },
        droppedLogLines: @escaping @Sendable () -> Int = { 0 }
    ) throws(ReceiptServerError) {
        do {
            ledger = try LedgerLocation(configuration.ledgerPath).open(
                connections: configuration.effectiveLedgerConnections)
        } catch {
            // The location without a password a URI may hold.
            let location = LedgerLocation(configuration.ledgerPath)
            throw ReceiptServerError(code: .ledger, message: "ledger \(location): \(error)")
        }
        do {
            service = try ReceiptService(
                configuration: configuration, ledger: ledger, log: log, droppedLogLines: droppedLogLines)
        } catch {
            ledger.close()
            throw ReceiptServerError(code: .configuration, message: "\(error)")
        }
        let service = service
        var listening = HTTPServerConfiguration(
            host: configuration.host, port: configuration.port,
            maximumConnections: configuration.maximumConnections,
            maximumConnectionsPerClient: configuration.maximumConnectionsPerClient,
            connectionTimeoutSeconds: configuration.connectionTimeoutSeconds,
            requestHeaderTimeoutSeconds: configuration.headerTimeoutSeconds,
            requestBodyTimeoutSeconds: configuration.bodyTimeoutSeconds,
            maximumBodyBytes: configuration.maximumBodyBytes)
        if configuration.threads > 0 { listening.threads = configuration.threads }
        http = HTTPServer(configuration: listening, answering: { request in service.answer(request) })
    }

    /// Starts listening, and sending the outbox's notifications when the configuration has receivers.
    public func start() throws(ReceiptServerError) {
        do {
            try http.start()
        } catch {
            throw ReceiptServerError(code: .listen, message: "\(error)")
        }
        do {
            try service.notificationSender?.start()
        } catch {
            http.stop()
            throw ReceiptServerError(code: .listen, message: "the notification sender could not start: \(error)")
        }
    }

    /// The port listened on (the one chosen when the configuration asked for 0).
    public var port: UInt16 { http.port }

    /// Stops accepting connections, lets requests in flight and deliveries in progress finish, then closes the
    /// ledger. Idempotent.
    public func stop() {
        http.stop()
        service.notificationSender?.stop()
        ledger.close()
    }
}
