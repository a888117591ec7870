internal import Dispatch
internal import Synchronization

/// At most ``size`` connections to one PostgreSQL database, lent to one caller at a time.
///
/// A caller borrows a connection for one operation and gives it back when done; it never keeps one across
/// operations. Connections are opened when needed and kept while idle. A connection that was lost (the server
/// restarted or went away) is closed instead of kept, and so are all the idle ones, which were very likely lost with
/// it: the next operation opens a new one, so the ledger recovers by itself once the server is back. An operation
/// whose first command failed on a kept connection that turned out lost is run once more on a new connection, since
/// nothing it asked for was done; any other failure is the operation's.
final class PostgreSQLPool: Sendable {
    /// An idle connection. `@unchecked Sendable`: the pool hands each to one caller at a time, who gives it back
    /// when done, so no two threads ever use one at once.
    private struct Idle: @unchecked Sendable {
        let connection: PostgreSQLConnection
    }

    /// The idle connections; nil once ``close()`` has run.
    private let idle = Mutex<[Idle]?>([])
    /// One permit per connection that may be open: a caller takes one before borrowing, gives it back after.
    private let permits: DispatchSemaphore
    private let uri: String
    /// Run on every new connection before its first use (session settings).
    private let prepare: @Sendable (PostgreSQLConnection) throws(LedgerError) -> Void

    /// The most connections open at once.
    let size: Int

    /// How long a caller waits for a connection when all ``size`` are lent, before failing.
    static let waitSeconds = 30
    /// How long opening a connection waits for the server, unless the URI says otherwise.
    static let connectTimeoutSeconds = 5

    /// A pool of at most `size` (at least 1) connections made with `uri`, each prepared by `prepare` when opened.
    init(
        uri: String, size: Int, prepare: @escaping @Sendable (PostgreSQLConnection) throws(LedgerError) -> Void
    ) {
        self.uri = uri
        self.size = max(size, 1)
        self.prepare = prepare
        permits = DispatchSemaphore(value: self.size)
    }

    /// Opens a new connection with the pool's URI and prepares it, outside the pool (for work such as migrating
    /// that holds a connection in a state no one else must see).
    func openConnection() throws(LedgerError) -> PostgreSQLConnection {
        let connection = try PostgreSQLConnection(uri: uri, connectTimeoutSeconds: Self.connectTimeoutSeconds)
        do {
            try prepare(connection)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Runs `body` with a connection of its own, given back afterwards (or closed, when it is lost or left inside a
    /// transaction).
    func withConnection<Result>(
        _ body: (PostgreSQLConnection) throws(LedgerError) -> Result
    ) throws(LedgerError) -> Result {
        guard permits.wait(timeout: .now() + .seconds(Self.waitSeconds)) == .success else {
            throw LedgerError(
                .storage, "all \(size) connections to the ledger's database stayed busy for \(Self.waitSeconds) s",
                publicDetail: "the ledger's database connections are all busy")
        }
        defer { permits.signal() }
        for retryable in [true, false] {
            if case .done(let result) = try attempt(body, retryable: retryable) { return result }
            // Nothing was done on a kept connection lost before its first command: one more try, on a new one.
        }
        throw LedgerError(
            .storage, "the ledger's database connection was lost twice", publicDetail: PostgreSQLConnection.unreachable)
    }

    /// What one attempt came to: the body's result, or a kept connection found lost before anything was done.
    private enum Attempt<Result> {
        case done(Result)
        case retry
    }

    /// Runs `body` on a kept connection, or a new one when none is kept. ``Attempt/retry`` when `retryable` and the kept
    /// connection was found lost by the first command `body` ran, so that nothing `body` asked for was done.
    private func attempt<Result>(
        _ body: (PostgreSQLConnection) throws(LedgerError) -> Result, retryable: Bool
    ) throws(LedgerError) -> Attempt<Result> {
        let kept = try idle.withLock { (pool) throws(LedgerError) -> PostgreSQLConnection? in
            guard pool != nil else {
                throw LedgerError(.storage, "ledger is closed", publicDetail: "the ledger is closed")
            }
            return pool?.popLast()?.connection
        }
        let connection: PostgreSQLConnection
        if let kept { connection = kept } else { connection = try openConnection() }
        connection.commandsSucceeded = 0
        do throws(LedgerError) {
            let result = try body(connection)
            giveBack(connection)
            return .done(result)
        } catch {
            let lost = connection.isLost
            giveBack(connection)
            if lost { closeIdle() }
            if retryable, lost, kept != nil, connection.commandsSucceeded == 0 { return .retry }
            throw error
        }
    }

    /// Keeps `connection` for the next caller when it is fit for it; closes it otherwise.
    private func giveBack(_ connection: PostgreSQLConnection) {
        let kept =
            connection.isIdle
            && idle.withLock { (pool) -> Bool in
                guard pool != nil else { return false }
                pool?.append(Idle(connection: connection))
                return true
            }
        if !kept { connection.close() }
    }

    /// Closes the idle connections (the pool stays open).
    private func closeIdle() {
        let closing = idle.withLock { (pool) -> [Idle] in
            defer { if pool != nil { pool = [] } }
            return pool ?? []
        }
        closing.forEach { $0.connection.close() }
    }

    /// Closes the idle connections and makes every later borrowing fail ("ledger is closed"); connections lent now
    /// are closed when given back. Closing again does nothing.
    func close() {
        let closing = idle.withLock { (pool) -> [Idle] in
            defer { pool = nil }
            return pool ?? []
        }
        closing.forEach { $0.connection.close() }
    }

    /// Whether ``close()`` has run.
    var isClosed: Bool {
        idle.withLock { $0 == nil }
    }
}
