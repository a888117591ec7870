private import CReceiptSQLite

/// The one owner of a `sqlite3*` connection, and the only place in this module that touches SQLite's C API or an
/// unsafe pointer.
///
/// The connection is opened with `SQLITE_OPEN_NOMUTEX`: SQLite does no locking of its own, so the caller must
/// serialise every use. The type is deliberately not `Sendable`, which makes the compiler hold callers to that;
/// ``SQLiteLedger`` keeps its connection inside a `Mutex`. One lock held for a whole `BEGIN … COMMIT` (and for
/// reading `sqlite3_errmsg` right after the call that failed) is needed anyway, so SQLite's `FULLMUTEX` lock
/// would only be a second, redundant one taken on every call.
///
/// Every failure is a ``LedgerError`` with code ``LedgerError/Code/storage`` whose message names what was being
/// done, SQLite's own message and its result code.
final class SQLiteDatabase {
    /// Nil once ``close()`` has run.
    private var connection: OpaquePointer?

    /// Statements prepared by ``withStatement(_:purpose:_:)``, reset and kept for the next call with the same SQL:
    /// compiling a statement (an insert with its trigger, a select of every column) costs far more than running
    /// it. A statement in use stays in the cache marked as such (one lookup of its SQL per call), so a nested call
    /// with the same SQL prepares one of its own.
    private var preparedStatements: [StatementKey: KeptStatement] = [:]

    /// The most statements kept. The SQL of this module is a fixed set of texts with values bound as parameters,
    /// far fewer than this; past it, statements are finalized after use as if there were no cache.
    private static let maximumPreparedStatements = 32

    /// Opens the database file at `path`, creating an empty one when there is none. SQLite reads nothing until the
    /// first statement, so a file that is not a database is only refused by the first statement run on it.
    init(path: String) throws(LedgerError) {
        let purpose = "opening the database \(path)"
        guard !path.utf8.contains(0) else {
            throw LedgerError(.storage, "\(purpose): the path contains a NUL byte")
        }
        if let failure = CReceiptSQLite_open() {
            throw LedgerError(
                .storage,
                "\(purpose): SQLite could not be opened (install libsqlite3-0): \(String(cString: failure))",
                publicDetail: "SQLite could not be opened")
        }
        _ = Self.memoryStatisticsOff
        var opened: OpaquePointer?
        let status = sqlite3_open_v2(
            path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let opened else {
            // A connection is usually allocated even when opening fails; it carries the message and must be closed.
            let error = failure(purpose, status, opened)
            sqlite3_close_v2(opened)
            throw error
        }
        connection = opened
    }

    deinit {
        close()
    }

    /// SQLite's memory statistics switched off once, before the first connection of the process: they would take
    /// a process-wide mutex around every allocation, for which threads reading on their own connections contend.
    /// Too late (SQLite already initialized by other code) changes nothing but that.
    private static let memoryStatisticsOff: Void = {
        _ = CReceiptSQLite_disableMemoryStatistics()
    }()

    /// Whether SQLite opened the file read-only (it does so silently when the file is not writable by this
    /// process, even when asked for read-write); false once closed.
    var isReadOnly: Bool {
        guard let connection else { return false }
        return sqlite3_db_readonly(connection, "main") == 1
    }

    /// Closes the connection; later calls fail with ``LedgerError/Code/storage``. Closing again does nothing.
    /// The kept statements are finalized first, so nothing is left open that would keep the file busy.
    func close() {
        for kept in preparedStatements.values {
            sqlite3_finalize(kept.handle)
        }
        preparedStatements = [:]
        sqlite3_close_v2(connection)
        connection = nil
    }

    /// Runs `sql` (one or more statements that return no rows: DDL, PRAGMAs that set something, `BEGIN`, `COMMIT`).
    func execute(_ sql: String, purpose: String) throws(LedgerError) {
        let connection = try openConnection(purpose)
        let status = sqlite3_exec(connection, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw failure(purpose, status, connection) }
    }

    /// Runs `sql`, a single statement that returns no rows (`BEGIN IMMEDIATE`, `SAVEPOINT`, `COMMIT`), as a kept
    /// prepared statement (see ``withStatement(_:purpose:_:)``).
    func run(_ sql: String, purpose: @autoclosure () -> String) throws(LedgerError) {
        try withStatement(sql, purpose: purpose()) { (statement) throws(LedgerError) in _ = try statement.step() }
    }

    /// Hands the statement `sql` (a single statement, values bound as parameters rather than spliced into the
    /// text) to `body` to bind, step and read. The statement is prepared on first use and kept: on every path,
    /// thrown errors included, it is reset and its bindings cleared before this returns, so it holds no lock and
    /// no value between calls. `body` must not keep the statement. `purpose`, which begins the message of any
    /// error, is only worked out when there is one.
    func withStatement<Result>(
        _ sql: String, purpose: @autoclosure () -> String, _ body: (SQLiteStatement) throws(LedgerError) -> Result
    ) throws(LedgerError) -> Result {
        let connection = try openConnection(purpose())
        let key = StatementKey(sql: sql)
        let kept = preparedStatements[key]
        let statement: OpaquePointer
        if let kept, !kept.inUse {
            statement = kept.handle
        } else {
            var prepared: OpaquePointer?
            let status = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
            guard status == SQLITE_OK else {
                sqlite3_finalize(prepared)
                throw failure(purpose(), status, connection)
            }
            guard let prepared else { throw LedgerError(.storage, "\(purpose()): the SQL holds no statement") }
            statement = prepared
        }
        // The statement this call keeps using afterwards, if any: the cached one, or a new one cached now.
        var keeping: KeptStatement?
        if let kept, kept.handle == statement {
            keeping = kept
        } else if kept == nil, preparedStatements.count < Self.maximumPreparedStatements {
            keeping = KeptStatement(statement)
            preparedStatements[key] = keeping
        }
        keeping?.inUse = true
        defer {
            // The result of reset repeats the last step's error, already thrown by the step itself.
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            if let keeping {
                keeping.inUse = false
            } else {
                sqlite3_finalize(statement)
            }
        }
        return try withoutActuallyEscaping(purpose) { (purpose) throws(LedgerError) in
            try body(SQLiteStatement(handle: statement, connection: connection, purpose: purpose))
        }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`: the write lock is taken before `body` reads anything, so a
    /// check followed by a write is atomic against every other connection. When `body` or `COMMIT` fails the
    /// transaction is rolled back and the error rethrown.
    func inImmediateTransaction<Result>(
        purpose: String, _ body: () throws(LedgerError) -> Result
    ) throws(LedgerError) -> Result {
        try inTransaction(beginningWith: "BEGIN IMMEDIATE", purpose: purpose, body)
    }

    /// Begins a deferred transaction for reading (`BEGIN`): it takes no lock until the first read, and from that
    /// read on every read sees the database as it was then, until ``endReading()``.
    func beginReading() throws(LedgerError) {
        try run("BEGIN", purpose: "beginning to read")
    }

    /// Ends the transaction ``beginReading()`` began, letting go of the state it read; nothing when none is open.
    /// A transaction that only read has nothing to keep, so it is rolled back (by a kept statement, and should that
    /// fail, as ``rollBackOpenTransaction()`` does).
    func endReading() {
        guard let connection, sqlite3_get_autocommit(connection) == 0 else { return }
        do {
            try run("ROLLBACK", purpose: "ending a read")
        } catch {
            rollBackOpenTransaction()
        }
    }

    private func inTransaction<Result>(
        beginningWith begin: String, purpose: String, _ body: () throws(LedgerError) -> Result
    ) throws(LedgerError) -> Result {
        try run(begin, purpose: "\(purpose) (\(begin))")
        do throws(LedgerError) {
            let result = try body()
            try run("COMMIT", purpose: "\(purpose) (COMMIT)")
            return result
        } catch {
            rollBackOpenTransaction()
            throw error
        }
    }

    /// Runs `writes` together in one `BEGIN IMMEDIATE … COMMIT` (one commit, one sync of the file), each in a
    /// savepoint of its own, and returns each write's result, in order.
    ///
    /// - A write that throws has only its own changes undone (`ROLLBACK TO` its savepoint) and its error as its
    ///   result; the writes before and after it are committed.
    /// - When a write's failure ends the whole transaction (SQLite may roll it back itself after an I/O error or
    ///   when the disk is full), that write keeps its error and every other write is run again, from the start,
    ///   in a new transaction: none of them is answered from a transaction that was lost.
    /// - When `BEGIN IMMEDIATE` or `COMMIT` fails, nothing is committed and every write still in the transaction
    ///   gets that error (prefixed with its own purpose), whatever it had returned or thrown inside it.
    ///
    /// So a success is only ever returned for a write that was committed.
    func inGroupTransaction<Value>(_ writes: [GroupedWrite<Value>]) -> [Result<Value, LedgerError>] {
        guard !writes.isEmpty else { return [] }
        let purpose = writes.count == 1 ? "committing it" : "committing it with \(writes.count - 1) other writes"
        do throws(LedgerError) {
            try run("BEGIN IMMEDIATE", purpose: "\(purpose) (BEGIN IMMEDIATE)")
        } catch {
            return writes.map { .failure(error.prefixed(with: $0.purpose)) }
        }
        var results: [Result<Value, LedgerError>] = []
        for (position, write) in writes.enumerated() {
            let (result, transactionKept) = inSavepoint(write)
            guard transactionKept else {
                rollBackOpenTransaction()
                var others = writes
                others.remove(at: position)
                var rerun = inGroupTransaction(others)
                rerun.insert(result, at: position)
                return rerun
            }
            results.append(result)
        }
        do throws(LedgerError) {
            try run("COMMIT", purpose: "\(purpose) (COMMIT)")
        } catch {
            rollBackOpenTransaction()
            return writes.map { .failure(error.prefixed(with: $0.purpose)) }
        }
        return results
    }

    /// Runs `write` inside `SAVEPOINT … RELEASE`, undoing its changes when it throws. Also says whether the
    /// enclosing transaction is still open with the changes of earlier writes: false when the savepoint could
    /// not be set or undone, as when SQLite rolled back the whole transaction.
    private func inSavepoint<Value>(
        _ write: GroupedWrite<Value>
    ) -> (result: Result<Value, LedgerError>, transactionKept: Bool) {
        do throws(LedgerError) {
            try run("SAVEPOINT grouped_write", purpose: "\(write.purpose) (SAVEPOINT)")
        } catch {
            return (.failure(error), false)
        }
        do throws(LedgerError) {
            let value = try write.body(self)
            try run("RELEASE grouped_write", purpose: "\(write.purpose) (RELEASE)")
            return (.success(value), true)
        } catch {
            let failure = error
            do throws(LedgerError) {
                try execute(
                    "ROLLBACK TO grouped_write; RELEASE grouped_write", purpose: "\(write.purpose) (ROLLBACK TO)")
                return (.failure(failure), true)
            } catch {
                // The write's own error is the one to report; the rollback's only says the transaction is gone.
                return (.failure(failure), false)
            }
        }
    }

    /// Rolls back the transaction still open, if any. SQLite may already have rolled it back itself (after some
    /// I/O or memory errors), and a failing rollback leaves nothing better to do than report the first error.
    private func rollBackOpenTransaction() {
        guard let connection, sqlite3_get_autocommit(connection) == 0 else { return }
        sqlite3_exec(connection, "ROLLBACK", nil, nil, nil)
    }

    /// The open connection; `purpose` is only worked out when it is closed.
    private func openConnection(_ purpose: @autoclosure () -> String) throws(LedgerError) -> OpaquePointer {
        guard let connection else { throw LedgerError(.storage, "\(purpose()): the database connection is closed") }
        return connection
    }
}

/// One write of ``SQLiteDatabase/inGroupTransaction(_:)``: what it does, in words its errors begin with, and the
/// work, which runs inside the group's transaction and must not begin or end a transaction itself.
struct GroupedWrite<Value>: Sendable {
    let purpose: String
    let body: @Sendable (SQLiteDatabase) throws(LedgerError) -> Value
}

extension LedgerError {
    /// This error as the failure of the operation `purpose` (`"recording transaction 7: committing it …"`).
    fileprivate func prefixed(with purpose: String) -> LedgerError {
        LedgerError(
            code, "\(purpose): \(message)", conflictingFields: conflictingFields, publicDetail: publicDetail)
    }
}

/// A value bound to a statement parameter.
typealias SQLiteValue = LedgerValue

/// A prepared statement, lent to the body of ``SQLiteDatabase/withStatement(_:purpose:_:)`` and finalized when it
/// returns: never keep it. (It is not `~Copyable`: Swift 6.3's optimizer crashes specialising generic closures
/// that borrow a noncopyable value, so `swift build -c release` would fail.) Parameters and columns are numbered as SQLite numbers them: parameters from 1, columns from 0.
struct SQLiteStatement {
    fileprivate let handle: OpaquePointer
    fileprivate let connection: OpaquePointer
    /// What the statement is run for, which begins the message of its errors; not kept past
    /// ``SQLiteDatabase/withStatement(_:purpose:_:)``, like the statement.
    fileprivate let purpose: () -> String

    /// Binds `values` to parameters 1, 2, … in order.
    func bind(_ values: [SQLiteValue]) throws(LedgerError) {
        for (index, value) in zip(Int32(1)..., values) {
            try bind(value, at: index)
        }
    }

    /// Binds `value` to parameter `index` (from 1). SQLite copies text before this returns.
    func bind(_ value: SQLiteValue, at index: Int32) throws(LedgerError) {
        let status: Int32
        switch value {
        case .integer(let integer):
            status = sqlite3_bind_int64(handle, index, integer)
        case .text(var text):
            // The length is explicit, so text with an embedded NUL is kept whole. A nil pointer would bind NULL
            // instead of the empty string, so empty text is bound from a literal's (empty) C string.
            status = text.withUTF8 { buffer in
                guard let base = buffer.baseAddress, buffer.count > 0 else {
                    return sqlite3_bind_text64(handle, index, "", 0, sqliteTransient, UInt8(SQLITE_UTF8))
                }
                return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    sqlite3_bind_text64(handle, index, $0, UInt64(buffer.count), sqliteTransient, UInt8(SQLITE_UTF8))
                }
            }
        case .null:
            status = sqlite3_bind_null(handle, index)
        }
        guard status == SQLITE_OK else {
            throw failure("\(purpose()) (binding parameter \(index))", status, connection)
        }
    }

    /// Runs the statement to its next row: true when a row is ready to read, false when the statement is done.
    func step() throws(LedgerError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let status: throw failure(purpose(), status, connection)
        }
    }

    /// Column `index` (from 0) of the current row as an integer, nil when it is NULL.
    func int64(at index: Int32) -> Int64? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, index)
    }

    /// Column `index` (from 0) of the current row as text, nil when it is NULL.
    func text(at index: Int32) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL, let bytes = sqlite3_column_text(handle, index) else {
            return nil
        }
        // Asked after `sqlite3_column_text`, so it counts the UTF-8 bytes of the text just returned.
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}

/// SQLite's `SQLITE_TRANSIENT`: "copy the bytes before returning". The C header defines it as the macro
/// `((sqlite3_destructor_type)-1)`, a cast Swift cannot import, so the same all-ones bit pattern is rebuilt here.
/// Binding text is only safe with it, because the buffer handed to SQLite dies when the bind call returns.
private var sqliteTransient: sqlite3_destructor_type {
    unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// A storage error naming what was being done, SQLite's message for `connection` (or for `status` when there is
/// no connection) and the result code.
private func failure(_ purpose: String, _ status: Int32, _ connection: OpaquePointer?) -> LedgerError {
    let detail = (connection.flatMap { sqlite3_errmsg($0) } ?? sqlite3_errstr(status)).map { String(cString: $0) }
    // sqlite3_errstr is SQLite's fixed text for the code ("database or disk is full"): it names nothing stored.
    let generic = sqlite3_errstr(status).map { String(cString: $0) }
    return LedgerError(
        .storage, "\(purpose): \(detail ?? "unknown error") (SQLite result code \(status))", publicDetail: generic)
}

/// The SQL of a kept statement as a dictionary key hashed on its length and last sixteen bytes, where the texts of
/// one module's statements differ (their `WHERE` clauses), rather than on every byte as a string key is: finding
/// a statement cost more than running a lookup by primary key. The bytes, read as a span, are folded into one
/// word and hashed once: about 400 instructions a lookup, where hashing each byte read through the string's UTF-8
/// view took 1,400. Equal keys still compare the whole text.
private struct StatementKey: Hashable {
    let sql: String

    static func == (lhs: StatementKey, rhs: StatementKey) -> Bool {
        lhs.sql == rhs.sql
    }

    func hash(into hasher: inout Hasher) {
        let bytes = sql.utf8.span
        var folded = UInt64(bytes.count)
        for index in max(bytes.count - 16, 0)..<bytes.count { folded = folded &* 31 &+ UInt64(bytes[index]) }
        hasher.combine(folded)
    }
}

/// A prepared statement kept by ``SQLiteDatabase`` between calls, and whether a call is using it now.
private final class KeptStatement {
    let handle: OpaquePointer
    var inUse = false

    init(_ handle: OpaquePointer) {
        self.handle = handle
    }
}
