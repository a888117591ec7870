private import CReceiptPostgreSQL
private import Glibc

/// The one owner of a libpq `PGconn*`, and the only place in this module that touches libpq's C API or an unsafe
/// pointer: every `PGresult` is copied into Swift values and cleared before a call returns, on every path, and the
/// connection is finished in ``close()`` (or `deinit`).
///
/// Not `Sendable`, like ``SQLiteDatabase``: libpq allows one thread at a time on a connection, and
/// ``PostgreSQLPool`` lends each connection to one caller at a time.
///
/// Every failure is a ``LedgerError`` with code ``LedgerError/Code/storage`` whose message names what was being
/// done, PostgreSQL's (or libpq's) message and the SQLSTATE; its public detail is a fixed phrase for the SQLSTATE's
/// class, since PostgreSQL's messages can quote stored values ("Key (transaction_id)=(…) already exists").
final class PostgreSQLConnection {
    /// Nil once ``close()`` has run.
    private var connection: OpaquePointer?

    /// How many commands succeeded since ``commandsSucceeded`` was last set to 0: a caller whose first command
    /// failed on a lost connection knows that nothing it asked for was done.
    var commandsSucceeded = 0

    /// Connects with `uri` (a `postgresql://` or `postgres://` URI, or anything else libpq accepts as a connection
    /// string, environment variables and `~/.pgpass` included). Connecting waits at most `connectTimeoutSeconds`
    /// unless the URI says otherwise (`connect_timeout`).
    init(uri: String, connectTimeoutSeconds: Int) throws(LedgerError) {
        guard !uri.utf8.contains(0) else {
            throw LedgerError(.storage, "connecting to PostgreSQL: the URI contains a NUL byte")
        }
        if let failure = CReceiptPQ_open() {
            throw LedgerError(
                .storage,
                "connecting to PostgreSQL: libpq could not be opened (install libpq5): \(String(cString: failure))",
                publicDetail: Self.unreachable)
        }
        // Later entries override earlier ones and the expanded URI takes the place of `dbname`, so what the URI
        // sets wins over the fallbacks before it. Over TCP, keepalives and a send timeout make a server that
        // vanished without closing the connection (a cut network) an error within about half a minute rather
        // than a request that hangs.
        let parameters = [
            ("connect_timeout", "\(connectTimeoutSeconds)"), ("fallback_application_name", "receipt"),
            ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
            ("tcp_user_timeout", "30000"), ("dbname", uri),
        ]
        let opened = withCStrings(parameters.map(\.0)) { keywords in
            withCStrings(parameters.map(\.1)) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let opened else {
            throw LedgerError(
                .storage, "connecting to PostgreSQL: libpq could not allocate a connection",
                publicDetail: Self.unreachable)
        }
        guard PQstatus(opened) == CONNECTION_OK else {
            let message = errorMessage(PQerrorMessage(opened))
            PQfinish(opened)
            throw LedgerError(.storage, "connecting to PostgreSQL: \(message)", publicDetail: Self.unreachable)
        }
        connection = opened
    }

    deinit {
        close()
    }

    /// The public detail of a connection that could not be made or was lost.
    static let unreachable = "the ledger's database cannot be reached"

    /// Closes the connection; later commands fail. Closing again does nothing.
    func close() {
        PQfinish(connection)
        connection = nil
    }

    /// Whether the connection is open, working and not inside a transaction: fit to be lent again.
    var isIdle: Bool {
        guard let connection else { return false }
        return PQstatus(connection) == CONNECTION_OK && PQtransactionStatus(connection) == PQTRANS_IDLE
    }

    /// Whether the connection is closed or lost (libpq saw the server go away).
    var isLost: Bool {
        guard let connection else { return true }
        return PQstatus(connection) != CONNECTION_OK
    }

    /// Runs the one statement `sql` with `parameters` bound to `$1`, `$2`, … as text (nil is NULL) and returns its
    /// rows as text. `purpose` begins every error's message. Text holding a NUL character is refused, since
    /// PostgreSQL's text cannot hold one and libpq would cut it short.
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = [], purpose: String) throws(LedgerError) -> PostgreSQLResult {
        guard let connection else {
            throw LedgerError(.storage, "\(purpose): the connection is closed", publicDetail: Self.unreachable)
        }
        if let index = parameters.firstIndex(where: { $0?.utf8.contains(0) == true }) {
            throw LedgerError(
                .storage, "\(purpose): parameter \(index + 1) contains a NUL character, which PostgreSQL cannot store",
                publicDetail: "a value contains a NUL character, which the ledger's database cannot store")
        }
        let result = withOptionalCStrings(parameters) { values in
            PQexecParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        defer { PQclear(result) }
        guard let result else {
            throw LedgerError(
                .storage, "\(purpose): \(errorMessage(PQerrorMessage(connection)))", publicDetail: Self.unreachable)
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw failure(purpose, result, connection)
        }
        commandsSucceeded += 1
        return PostgreSQLResult(copying: result)
    }
}

/// A statement's outcome copied out of its `PGresult`: the rows as text (nil for NULL), the command tag
/// (`INSERT 0 1`, `COMMIT`, `ROLLBACK`) and the number of rows the command affected.
struct PostgreSQLResult {
    let rows: [[String?]]
    let commandTag: String
    let affectedRows: Int

    fileprivate init(copying result: OpaquePointer) {
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        rows = (0..<rowCount).map { row in
            (0..<columnCount).map { column -> String? in
                guard PQgetisnull(result, row, column) == 0, let value = PQgetvalue(result, row, column) else {
                    return nil
                }
                let count = Int(PQgetlength(result, row, column))
                return value.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
                    String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
                }
            }
        }
        commandTag = PQcmdStatus(result).map { String(cString: $0) } ?? ""
        affectedRows = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
    }
}

/// The error of a failed statement: PostgreSQL's message and SQLSTATE, and for the public a fixed phrase for the
/// SQLSTATE's class.
private func failure(_ purpose: String, _ result: OpaquePointer, _ connection: OpaquePointer) -> LedgerError {
    let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
    var message = errorMessage(PQresultErrorMessage(result))
    if message.isEmpty { message = errorMessage(PQerrorMessage(connection)) }
    let lost = PQstatus(connection) != CONNECTION_OK
    let publicDetail: String
    switch sqlState.map({ String($0.prefix(2)) }) {
    case _ where lost, "08": publicDetail = PostgreSQLConnection.unreachable
    case "57": publicDetail = "the ledger's database is shutting down or was restarted"
    case "53": publicDetail = "the ledger's database is out of resources (disk, memory or connections)"
    case "25": publicDetail = "the ledger's database is read-only"
    case "40": publicDetail = "the ledger's database aborted the transaction (serialization or deadlock)"
    case let state?: publicDetail = "the ledger's database failed (SQLSTATE class \(state))"
    case nil: publicDetail = "the ledger's database failed"
    }
    return LedgerError(
        .storage, "\(purpose): \(message) (SQLSTATE \(sqlState ?? "none"))", publicDetail: publicDetail)
}

/// libpq's message without its trailing newline.
private func errorMessage(_ text: UnsafePointer<CChar>?) -> String {
    var message = text.map { String(cString: $0) } ?? ""
    while message.last?.isNewline == true { message.removeLast() }
    return message.isEmpty ? "unknown libpq error" : message
}

/// Calls `body` with a C array of the C strings of `strings`, alive for the call only.
private func withCStrings<Result>(
    _ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result
) -> Result {
    withOptionalCStrings(strings + [nil], body)
}

/// Calls `body` with a C array of the C strings of `strings` (NULL for nil), alive for the call only.
private func withOptionalCStrings<Result>(
    _ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result
) -> Result {
    let copies = strings.map { $0.map { strdup($0) } ?? nil }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { $0.map { UnsafePointer($0) } }
    return pointers.withUnsafeBufferPointer { buffer in
        // An empty array may have no storage; libpq never reads it then.
        guard let base = buffer.baseAddress else {
            var none: UnsafePointer<CChar>? = nil
            return withUnsafePointer(to: &none) { body($0) }
        }
        return body(base)
    }
}
