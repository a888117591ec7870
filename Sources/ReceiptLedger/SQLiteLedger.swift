public import ReceiptModel
internal import StrictJSON
internal import Synchronization

/// A ``TransactionLedger`` kept in one SQLite file.
///
/// The file is in WAL mode with `synchronous=FULL`, so every write is on disk before the call returns. Calls from
/// any number of threads share one connection. Writes are committed in groups (see ``GroupCommitQueue``): the
/// writes that arrive while a commit is in progress wait for it, then are committed together in one
/// `BEGIN IMMEDIATE … COMMIT`, each in a savepoint of its own, so one sync of the file makes a whole group durable
/// and each write still has its own outcome. Reads take the connection between groups, so they see only what was
/// committed. `BEGIN IMMEDIATE` takes the file's write lock before a group reads anything, so several ledgers (or
/// processes) on the same file never interleave a check with another's write. The schema is versioned with
/// `PRAGMA user_version`; see ``schemaVersion``.
public final class SQLiteLedger: LedgerStore {
    /// The schema version this code creates and reads. Opening a file with a newer version fails.
    public static let schemaVersion = migrations.count

    /// The most writes committed in one group: enough for every thread of a busy server to wait for the same
    /// commit, few enough that a group's transaction stays short.
    static let defaultMaximumGroupSize = 256

    /// The open connection and how its last write went.
    private struct Connection {
        let database: SQLiteDatabase
        /// The storage failure of the last write, when it failed; nil once a write succeeds.
        var lastWriteFailure: LedgerError?
    }

    /// The connection; nil once ``close()`` has run.
    private let state: Mutex<Connection?>

    /// Connections that only read, each used by one caller at a time: in WAL mode they read the last committed
    /// state without waiting for the writing connection, which a group commit holds from `BEGIN` to `COMMIT`.
    /// Opened when needed, kept for the next reader; nil once ``close()`` has run.
    private let readers = Mutex<[IdleReader]?>([])
    private let path: String

    /// A reading connection in the pool. `@unchecked Sendable`: the pool hands each to one caller at a time, who
    /// gives it back when done, so no two threads ever use one at once.
    private struct IdleReader: @unchecked Sendable {
        let database: SQLiteDatabase
    }

    /// The writes waiting to be committed.
    private let writes: GroupCommitQueue<GroupedWrite<LedgerRecordOutcome>, LedgerRecordOutcome>

    /// How many group transactions committed at least one write.
    private let commits = Atomic<Int>(0)

    /// Opens the ledger in the SQLite file at `path`, creating the file and its schema when there is none and
    /// migrating an older schema to ``schemaVersion``.
    ///
    /// Throws ``LedgerError/Code/storage`` when the file cannot be opened or created, is not a SQLite database,
    /// cannot be put in WAL mode, has a schema version newer than ``schemaVersion`` (the message names both), or
    /// can only be opened read-only (the file is not writable by this process): a ledger that cannot take writes
    /// is refused at once rather than failing every write later.
    public convenience init(path: String) throws(LedgerError) {
        try self.init(path: path, maximumGroupSize: Self.defaultMaximumGroupSize)
    }

    /// ``init(path:)`` with groups of at most `maximumGroupSize` writes (at least 1).
    init(path: String, maximumGroupSize: Int) throws(LedgerError) {
        let database = try SQLiteDatabase(path: path)
        if database.isReadOnly { throw Self.readOnlyError(path: path) }
        try Self.configure(database)
        try Self.migrate(database)
        state = Mutex(Connection(database: database))
        writes = GroupCommitQueue(maximumGroupSize: maximumGroupSize)
        self.path = path
    }

    private static func readOnlyError(path: String?) -> LedgerError {
        LedgerError(
            .storage,
            "the ledger \(path ?? "file") is read-only for this process (check the owner and mode of the file and "
                + "of its directory)",
            publicDetail: "the ledger file is read-only")
    }

    /// Records `transaction` as described by ``TransactionLedger/record(_:)``. The stored transaction has no
    /// `cancellationDate` and no `unknownAttributes`; strings are compared byte for byte.
    public func record(_ transaction: LedgerTransaction) throws(LedgerError) -> LedgerRecordOutcome {
        let candidate = Column.storable(transaction)
        let id = candidate.purchase.transactionID
        return try writing("recording transaction \(id)") { (database) throws(LedgerError) in
            if let stored = try Self.fetchOne(database, id: id) {
                return try Column.replaying(candidate, over: stored)
            }
            try Self.insert(candidate, into: database)
            return .created(candidate)
        }
    }

    /// Records a refund as described by ``TransactionLedger/recordCancellation(transactionID:at:)``.
    public func recordCancellation(
        transactionID: String, at date: ReceiptDate
    ) throws(LedgerError) -> LedgerRecordOutcome {
        try writing("recording the cancellation of transaction \(transactionID)") { (database) throws(LedgerError) in
            let (cancelled, isNew) = try Column.cancelling(
                Self.fetchOne(database, id: transactionID), transactionID: transactionID, at: date)
            guard isNew else { return .alreadyRecorded(cancelled) }
            try database.withStatement(
                "UPDATE transactions SET cancellation_date_ms = ?1 WHERE transaction_id = ?2",
                purpose: "storing the cancellation date of transaction \(transactionID)"
            ) { (statement) throws(LedgerError) in
                try statement.bind([.integer(date.millisecondsSince1970), .text(transactionID)])
                _ = try statement.step()
            }
            return .created(cancelled)
        }
    }

    /// The stored transaction with this id (compared byte for byte), or nil.
    public func transaction(id: String) throws(LedgerError) -> LedgerTransaction? {
        try withOpenDatabase { (database) throws(LedgerError) in try Self.fetchOne(database, id: id) }
    }

    /// The stored transaction whose id comes first in `ids`, or nil when none is stored: one query, whatever the
    /// number of ids (they are bound as one JSON array that SQLite's `json_each` unnests).
    public func transaction(withAnyOf ids: [String]) throws(LedgerError) -> LedgerTransaction? {
        guard !ids.isEmpty else { return nil }
        let list = JSONValue.array(ids.map(JSONValue.string)).serialized()
        return try withOpenDatabase { (database) throws(LedgerError) in
            try database.withStatement(
                Self.selectFirstOfIDs, purpose: "tracing \(ids.count) transaction ids"
            ) { (statement) throws(LedgerError) in
                try statement.bind([.text(list)])
                return try statement.step() ? try Self.decode(statement, purpose: "tracing transaction ids") : nil
            }
        }
    }

    /// The customer's transactions for one app, ordered by purchase date, then by transaction id (compared as
    /// UTF-8 bytes).
    public func transactions(customerID: String, bundleID: String) throws(LedgerError) -> [LedgerTransaction] {
        try withOpenDatabase { (database) throws(LedgerError) in
            try Self.fetch(
                database, Self.selectByCustomer, [.text(customerID), .text(bundleID)],
                purpose: "reading the transactions of customer \(customerID)")
        }
    }

    /// How many transactions are stored: one row that a trigger keeps up to date in the same transaction as each
    /// insert, so reading it costs the same however large the ledger is.
    public func count() throws(LedgerError) -> Int {
        try withOpenDatabase { (database) throws(LedgerError) in
            let count = try database.withStatement(
                "SELECT value FROM ledger_counts WHERE name = 'transactions'", purpose: "reading the transaction count"
            ) { (statement) throws(LedgerError) in try statement.step() ? statement.int64(at: 0) : nil }
            guard let count, let result = Int(exactly: count) else {
                throw LedgerError(.storage, "reading the transaction count: SQLite returned no count")
            }
            return result
        }
    }

    /// Throws when the ledger cannot take writes: closed, opened read-only, or its last write failed for a storage
    /// reason (see ``TransactionLedger/checkWritable()``).
    public func checkWritable() throws(LedgerError) {
        try state.withLock { (connection) throws(LedgerError) in
            guard let open = connection else {
                throw LedgerError(.storage, "ledger is closed", publicDetail: "the ledger is closed")
            }
            if open.database.isReadOnly { throw Self.readOnlyError(path: nil) }
            if let failure = open.lastWriteFailure { throw failure }
        }
    }

    /// At most `limit` transactions after `transactionID`, in id order (SQLite compares TEXT byte for byte).
    public func transactions(after transactionID: String?, limit: Int) throws(LedgerError) -> [LedgerTransaction] {
        try withOpenDatabase { (database) throws(LedgerError) in
            try Self.fetch(
                database, Self.select(where: "transaction_id > ?1 ORDER BY transaction_id LIMIT ?2"),
                [.text(transactionID ?? ""), .integer(Int64(max(limit, 0)))], purpose: "listing transactions")
        }
    }

    /// The file's `user_version`.
    public func storedSchemaVersion() throws(LedgerError) -> Int {
        try withOpenDatabase { (database) throws(LedgerError) in try Self.userVersion(database) }
    }

    /// The lines `PRAGMA integrity_check` reports: exactly `["ok"]` when SQLite finds the file sound.
    public func integrityCheck() throws(LedgerError) -> [String] {
        try withOpenDatabase { (database) throws(LedgerError) in
            try database.withStatement(
                "PRAGMA integrity_check", purpose: "checking the integrity of the database"
            ) { (statement) throws(LedgerError) in
                var lines: [String] = []
                while try statement.step() {
                    lines.append(statement.text(at: 0) ?? "")
                }
                return lines
            }
        }
    }

    /// Closes the database file. Closing again does nothing; any other call afterwards throws
    /// ``LedgerError/Code/storage`` ("ledger is closed").
    public func close() {
        state.withLock { connection in
            connection?.database.close()
            connection = nil
        }
        let idle = readers.withLock { pool in
            defer { pool = nil }
            return pool ?? []
        }
        idle.forEach { $0.database.close() }
    }

    /// Runs `body` with a reading connection of its own (see `readers`), returned to the pool afterwards.
    private func withOpenDatabase<Result: Sendable>(
        _ body: (SQLiteDatabase) throws(LedgerError) -> Result
    ) throws(LedgerError) -> Result {
        let taken = try readers.withLock { (pool) throws(LedgerError) -> SQLiteDatabase? in
            guard pool != nil else { throw LedgerError(.storage, "ledger is closed") }
            return pool?.popLast()?.database
        }
        let reader: SQLiteDatabase
        if let taken {
            reader = taken
        } else {
            reader = try SQLiteDatabase(path: path)
            do throws(LedgerError) {
                try reader.execute(
                    "PRAGMA busy_timeout = \(Self.busyTimeoutMilliseconds)", purpose: "setting the busy timeout")
                try reader.execute("PRAGMA query_only = ON", purpose: "making a reading connection read only")
            } catch {
                reader.close()
                throw error
            }
        }
        defer {
            let kept = readers.withLock { (pool) -> Bool in
                guard pool != nil else { return false }
                pool?.append(IdleReader(database: reader))
                return true
            }
            if !kept { reader.close() }
        }
        return try body(reader)
    }

    /// Runs the write `body` (`purpose` says what it does, for its errors) in the next group commit and returns
    /// its result once that group is committed: a success only when it is durable.
    private func writing(
        _ purpose: String, _ body: @escaping @Sendable (SQLiteDatabase) throws(LedgerError) -> LedgerRecordOutcome
    ) throws(LedgerError) -> LedgerRecordOutcome {
        try writes.submit(GroupedWrite(purpose: purpose, body: body), committingWith: commit).get()
    }

    /// Commits `group` in one transaction, holding the connection's lock from `BEGIN` to `COMMIT` so that no read
    /// sees a write before it is committed. As for a single write, a storage failure is remembered for
    /// ``checkWritable()`` until a write succeeds, taking the writes in the group's order.
    private func commit(
        _ group: [GroupedWrite<LedgerRecordOutcome>]
    ) -> [Result<LedgerRecordOutcome, LedgerError>] {
        state.withLock { connection in
            guard let database = connection?.database else {
                return group.map { _ in .failure(LedgerError(.storage, "ledger is closed")) }
            }
            let results = database.inGroupTransaction(group)
            for result in results {
                switch result {
                case .success: connection?.lastWriteFailure = nil
                case .failure(let error) where error.code == .storage: connection?.lastWriteFailure = error
                case .failure: break
                }
            }
            if results.contains(where: { if case .success = $0 { true } else { false } }) {
                commits.add(1, ordering: .relaxed)
            }
            return results
        }
    }

    /// How many group transactions have committed at least one write since the ledger was opened: fewer than the
    /// writes acknowledged whenever writers waited for the same commit.
    var groupsCommitted: Int {
        commits.load(ordering: .relaxed)
    }

    /// How many writes are waiting for their group to be committed, the group being committed included.
    var waitingWrites: Int {
        writes.waitingWrites
    }
}

// MARK: - Opening and migrating

extension SQLiteLedger {
    /// A step of the schema's history (see ``LedgerMigration``); the version is `user_version`.
    private typealias Migration = LedgerMigration

    private static let migrations: [Migration] = [
        Migration(
            summary: "create the transactions table",
            statements: [
                """
                CREATE TABLE transactions (
                    transaction_id TEXT PRIMARY KEY NOT NULL,
                    customer_id TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    product_id TEXT NOT NULL,
                    quantity INTEGER,
                    original_transaction_id TEXT,
                    purchase_date_ms INTEGER NOT NULL,
                    original_purchase_date_ms INTEGER,
                    product_type INTEGER,
                    expires_date_ms INTEGER,
                    web_order_line_item_id INTEGER,
                    cancellation_date_ms INTEGER,
                    is_trial_period INTEGER CHECK (is_trial_period IN (0, 1)),
                    is_in_intro_offer_period INTEGER CHECK (is_in_intro_offer_period IN (0, 1)),
                    promotional_offer_id TEXT,
                    recorded_at_ms INTEGER NOT NULL
                ) STRICT
                """,
                """
                CREATE INDEX transactions_by_customer_app_date
                    ON transactions (customer_id, bundle_id, purchase_date_ms)
                """,
            ]),
        Migration(
            summary: "keep the number of transactions as they are written",
            statements: [
                "CREATE TABLE ledger_counts (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) STRICT",
                "INSERT INTO ledger_counts (name, value) SELECT 'transactions', count(*) FROM transactions",
                """
                CREATE TRIGGER transactions_counted_on_insert AFTER INSERT ON transactions BEGIN
                    UPDATE ledger_counts SET value = value + 1 WHERE name = 'transactions';
                END
                """,
                """
                CREATE TRIGGER transactions_counted_on_delete AFTER DELETE ON transactions BEGIN
                    UPDATE ledger_counts SET value = value - 1 WHERE name = 'transactions';
                END
                """,
            ]),
    ]

    /// How long a statement waits for another connection's lock on the file before failing with "database is
    /// locked".
    private static let busyTimeoutMilliseconds = 5_000

    private static func configure(_ database: SQLiteDatabase) throws(LedgerError) {
        try database.execute(
            "PRAGMA busy_timeout = \(busyTimeoutMilliseconds)", purpose: "setting the busy timeout")
        let mode = try database.withStatement(
            "PRAGMA journal_mode = WAL", purpose: "switching the journal to WAL"
        ) { (statement) throws(LedgerError) in try statement.step() ? statement.text(at: 0) : nil }
        guard mode?.lowercased() == "wal" else {
            throw LedgerError(
                .storage, "switching the journal to WAL: SQLite kept journal_mode \(mode ?? "(none)") instead")
        }
        try database.execute("PRAGMA synchronous = FULL", purpose: "making every commit durable (synchronous=FULL)")
        try database.execute("PRAGMA foreign_keys = ON", purpose: "enforcing foreign keys")
    }

    /// Applies every migration the file has not had, each in its own transaction that also sets `user_version`.
    /// The version is read again inside each transaction, so two processes opening a new file at once apply each
    /// migration once.
    private static func migrate(_ database: SQLiteDatabase) throws(LedgerError) {
        let found = try userVersion(database)
        guard (0...schemaVersion).contains(found) else {
            throw LedgerError(
                .storage,
                "the database has schema version \(found), but this code knows only versions up to \(schemaVersion)"
            )
        }
        for (version, migration) in zip(1..., migrations) where version > found {
            let purpose = "migrating the schema to version \(version) (\(migration.summary))"
            try database.inImmediateTransaction(purpose: purpose) { () throws(LedgerError) in
                guard try userVersion(database) < version else { return }
                for statement in migration.statements {
                    try database.execute(statement, purpose: purpose)
                }
                try database.execute("PRAGMA user_version = \(version)", purpose: purpose)
            }
        }
    }

    private static func userVersion(_ database: SQLiteDatabase) throws(LedgerError) -> Int {
        let version = try database.withStatement(
            "PRAGMA user_version", purpose: "reading the schema version"
        ) { (statement) throws(LedgerError) in try statement.step() ? statement.int64(at: 0) : nil }
        guard let version, let result = Int(exactly: version) else {
            throw LedgerError(.storage, "reading the schema version: SQLite returned none")
        }
        return result
    }
}

// MARK: - Rows

extension SQLiteLedger {
    /// The stored columns (see ``LedgerColumn``).
    private typealias Column = LedgerColumn

    /// Inserts every column of a transaction (parameters in column order) and the time it is recorded, in
    /// milliseconds since 1970 from SQLite's clock (the Unix epoch is Julian day 2440587.5).
    private static let insertSQL =
        "INSERT INTO transactions (\(Column.list), recorded_at_ms) VALUES ("
        + Column.allCases.map { "?\($0.rawValue + 1)" }.joined(separator: ", ")
        + ", CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))"

    private static func insert(_ transaction: LedgerTransaction, into database: SQLiteDatabase) throws(LedgerError) {
        try database.withStatement(
            insertSQL, purpose: "storing transaction \(transaction.purchase.transactionID)"
        ) { (statement) throws(LedgerError) in
            try statement.bind(Column.allCases.map { $0.value(in: transaction) })
            _ = try statement.step()
        }
    }

    /// Selects every column of the rows matching `clause`: a `WHERE` condition, possibly followed by `ORDER BY`.
    private static func select(where clause: String) -> String {
        "SELECT \(Column.list) FROM transactions WHERE \(clause)"
    }

    private static let selectByID = select(where: "transaction_id = ?1")

    /// Selects every column of the first stored transaction whose id is in the JSON array bound to `?1`.
    private static let selectFirstOfIDs =
        "SELECT \(Column.allCases.map { "t." + $0.name }.joined(separator: ", ")) FROM json_each(?1) AS ids "
        + "JOIN transactions AS t ON t.transaction_id = ids.value ORDER BY ids.key LIMIT 1"

    private static let selectByCustomer = select(
        where: "customer_id = ?1 AND bundle_id = ?2 ORDER BY purchase_date_ms, transaction_id")

    private static func fetchOne(_ database: SQLiteDatabase, id: String) throws(LedgerError) -> LedgerTransaction? {
        try fetch(database, selectByID, [.text(id)], purpose: "reading transaction \(id)").first
    }

    /// The rows `select` (one of the selects above) returns with `parameters` bound.
    private static func fetch(
        _ database: SQLiteDatabase, _ select: String, _ parameters: [SQLiteValue], purpose: String
    ) throws(LedgerError) -> [LedgerTransaction] {
        try database.withStatement(select, purpose: purpose) { (statement) throws(LedgerError) in
            try statement.bind(parameters)
            var rows: [LedgerTransaction] = []
            while try statement.step() {
                rows.append(try decode(statement, purpose: purpose))
            }
            return rows
        }
    }

    private static func decode(
        _ row: SQLiteStatement, purpose: String
    ) throws(LedgerError) -> LedgerTransaction {
        try Column.decode(
            purpose: purpose, text: { row.text(at: $0.rawValue) }, integer: { row.int64(at: $0.rawValue) })
    }
}
