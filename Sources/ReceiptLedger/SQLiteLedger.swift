public import ReceiptModel
internal import StrictJSON
internal import Synchronization

/// A ``TransactionLedger`` kept in one SQLite file.
///
/// The file is in WAL mode with `synchronous=FULL`, so every write is on disk before the call returns. Calls from
/// any number of threads share one connection. Writes are committed in groups (see ``GroupCommitQueue``): the
/// writes that arrive while a commit is in progress wait for it, then are committed together in one
/// `BEGIN IMMEDIATE … COMMIT`, each in a savepoint of its own, so one sync of the file makes a whole group durable
/// and each write still has its own outcome. Reads run on connections of their own (see `readers`), which see only
/// what was committed: every write this ledger acknowledged, and a write by another ledger or process on the same
/// file at most ``snapshotLifetime`` after its commit. `BEGIN IMMEDIATE` takes the file's write lock before a group
/// reads anything, so several ledgers (or processes) on the same file never interleave a check with another's
/// write. The schema is versioned with `PRAGMA user_version`; see ``schemaVersion``.
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
    ///
    /// A reading connection keeps its read transaction open from one read to the next (see `ReadSnapshot`), for
    /// a transaction's start and end are what a read costs most: SQLite takes and releases a lock on the WAL's
    /// shared memory for each, under one process-wide mutex and often with a system call, which busy readers
    /// contend for.
    private let readers = Mutex<[IdleReader]?>([])
    private let path: String

    /// A reading connection in the pool, and the read transaction it left open, if any. `@unchecked Sendable`: the
    /// pool hands each to one caller at a time, who gives it back when done, so no two threads ever use one at once.
    private struct IdleReader: @unchecked Sendable {
        let database: SQLiteDatabase
        var snapshot: ReadSnapshot?
    }

    /// A read transaction a reading connection keeps open for the reads that follow, while it still shows every
    /// write this ledger has acknowledged: until a group commits (a write is acknowledged only once its group has
    /// committed and counted in `commits`) and for at most ``snapshotLifetime``, the bound on how long a write by
    /// another process (or another ledger on the same file) takes to be seen. A reader whose snapshot is past
    /// either ends it and begins another; a group's commit ends those of the idle readers at once, so that none
    /// keeps SQLite from checkpointing the WAL past the state it reads.
    private struct ReadSnapshot {
        /// `commits` read before the transaction began: a commit counted after it may be missing from it.
        let commits: Int
        let began: ContinuousClock.Instant

        func isCurrent(commits now: Int, at time: ContinuousClock.Instant) -> Bool {
            now == commits && time - began < SQLiteLedger.snapshotLifetime
        }
    }

    /// How long a reading connection may read the state it began reading before another process's writes to the
    /// same file: they are seen at most this long after they are committed. This process's writes are seen at once.
    static let snapshotLifetime: Duration = .milliseconds(10)

    /// The writes waiting to be committed.
    /// Each write's result is the value its public function returns, typed by that function (see `writing`).
    private let writes: GroupCommitQueue<GroupedWrite<any Sendable>, any Sendable>

    /// How many group transactions committed at least one write: counted (releasing) before the writes are
    /// acknowledged, read (acquiring) before a read begins, so a read can tell whether it may miss one.
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
        try ResultHandoff.waiting { (completion) in record(transaction, completion: completion) }.get()
    }

    /// Records a refund as described by ``TransactionLedger/recordCancellation(transactionID:at:)``.
    public func recordCancellation(
        transactionID: String, at date: ReceiptDate
    ) throws(LedgerError) -> LedgerRecordOutcome {
        try ResultHandoff.waiting { (completion) in
            recordCancellation(transactionID: transactionID, at: date, completion: completion)
        }.get()
    }

    /// Withdraws a refund as described by ``TransactionLedger/withdrawCancellation(transactionID:)``.
    public func withdrawCancellation(transactionID: String) throws(LedgerError) -> LedgerRecordOutcome {
        try writing("withdrawing the cancellation of transaction \(transactionID)") { (writer) throws(LedgerError) in
            try writer.withdrawCancellation(transactionID: transactionID)
        }
    }

    /// Keeps renewal info as described by ``TransactionLedger/recordRenewalInfo(_:)``.
    public func recordRenewalInfo(_ info: LedgerRenewalInfo) throws(LedgerError) -> LedgerChangeOutcome {
        try writing("keeping the renewal info of \(info.originalTransactionID)") { (writer) throws(LedgerError) in
            try writer.recordRenewalInfo(info)
        }
    }

    /// Applies `changes` as described by ``TransactionLedger/apply(_:notification:)``: one write of a group commit,
    /// in a savepoint of its own, so a refusal thrown undoes all of its changes and none of the group's others.
    public func apply(
        _ changes: [LedgerChange], notification: LedgerNotification?
    ) throws(LedgerError) -> LedgerApplication {
        try ResultHandoff.waiting { (completion) in
            apply(changes, notification: notification, completion: completion)
        }.get()
    }

    /// Always true: the completions of ``record(_:completion:)``,
    /// ``recordCancellation(transactionID:at:completion:)`` and ``apply(_:notification:completion:)`` run on the
    /// ledger's committing thread, once the group holding the write is committed.
    public var completesWritesInBackground: Bool { true }

    /// ``record(_:)`` in the next group commit; returns at once (see ``completesWritesInBackground``).
    public func record(
        _ transaction: LedgerTransaction,
        completion: @escaping @Sendable (Result<LedgerRecordOutcome, LedgerError>) -> Void
    ) {
        writing("recording transaction \(transaction.purchase.transactionID)", completion: completion) {
            (writer) throws(LedgerError) in
            try writer.record(transaction)
        }
    }

    /// ``recordCancellation(transactionID:at:)`` in the next group commit; returns at once (see
    /// ``completesWritesInBackground``).
    public func recordCancellation(
        transactionID: String, at date: ReceiptDate,
        completion: @escaping @Sendable (Result<LedgerRecordOutcome, LedgerError>) -> Void
    ) {
        writing("recording the cancellation of transaction \(transactionID)", completion: completion) {
            (writer) throws(LedgerError) in
            try writer.recordCancellation(transactionID: transactionID, at: date)
        }
    }

    /// ``apply(_:notification:)`` in the next group commit; returns at once (see ``completesWritesInBackground``).
    public func apply(
        _ changes: [LedgerChange], notification: LedgerNotification?,
        completion: @escaping @Sendable (Result<LedgerApplication, LedgerError>) -> Void
    ) {
        let purpose =
            notification.map { "applying notification \($0.notificationUUID)" } ?? "applying \(changes.count) changes"
        writing(purpose, completion: completion) { (writer) throws(LedgerError) in
            try writer.apply(changes, notification: notification)
        }
    }

    /// Stores a copied notification as described by ``LedgerStore/copyNotification(_:)``.
    public func copyNotification(_ notification: LedgerNotification) throws(LedgerError) -> Bool {
        try writing("copying notification \(notification.notificationUUID)") { (writer) throws(LedgerError) in
            try writer.insert(notification)
        }
    }

    /// Takes due outgoing notifications as described by
    /// ``TransactionLedger/claimDueNotifications(at:leaseUntil:limit:)``: one write of a group commit, whose
    /// transaction holds the file's write lock from the first read, so no other claim, in this process or another,
    /// finds them due before the lease ends.
    public func claimDueNotifications(
        at now: ReceiptDate, leaseUntil: ReceiptDate, limit: Int
    ) throws(LedgerError) -> [LedgerOutgoingNotification] {
        try writing("claiming the outgoing notifications due at \(now.rfc3339)") { (writer) throws(LedgerError) in
            try writer.claimDueNotifications(at: now, leaseUntil: leaseUntil, limit: limit)
        }
    }

    /// Records an attempt as described by
    /// ``TransactionLedger/recordDeliveryAttempt(notificationUUID:url:attempt:nextAttemptDate:)``.
    public func recordDeliveryAttempt(
        notificationUUID: String, url: String, attempt: LedgerDeliveryAttempt, nextAttemptDate: ReceiptDate?
    ) throws(LedgerError) -> LedgerOutgoingNotification {
        try writing("recording an attempt to deliver notification \(notificationUUID) to \(url)") {
            (writer) throws(LedgerError) in
            try writer.recordDeliveryAttempt(
                notificationUUID: notificationUUID, url: url, attempt: attempt, nextAttemptDate: nextAttemptDate)
        }
    }

    /// Stores a copied outgoing notification as described by ``LedgerStore/copyOutgoingNotification(_:)``.
    public func copyOutgoingNotification(_ notification: LedgerOutgoingNotification) throws(LedgerError) -> Bool {
        try writing("copying notification \(notification.notificationUUID) for \(notification.url)") {
            (writer) throws(LedgerError) in
            try writer.insert(notification)
        }
    }

    /// The stored transaction with this id (compared byte for byte), or nil.
    public func transaction(id: String) throws(LedgerError) -> LedgerTransaction? {
        try withOpenDatabase { (database) throws(LedgerError) in try Self.fetchOne(database, id: id) }
    }

    /// The stored transaction whose id comes first in `ids`, or nil when none is stored: one lookup of the primary
    /// key per id, in order, all in one read transaction (cheaper than joining the ids as a table).
    public func transaction(withAnyOf ids: [String]) throws(LedgerError) -> LedgerTransaction? {
        guard !ids.isEmpty else { return nil }
        return try withOpenDatabase { (database) throws(LedgerError) in
            for id in ids {
                if let found = try Self.fetchOne(database, id: id) { return found }
            }
            return nil
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

    /// The customer of the first recorded transaction (by the order rows were inserted) of the subscription
    /// `originalTransactionID`, or nil.
    public func customerID(originalTransactionID: String) throws(LedgerError) -> String? {
        try withOpenDatabase { (database) throws(LedgerError) in
            try Self.fetch(
                database,
                "SELECT customer_id FROM transactions WHERE original_transaction_id = ?1 ORDER BY rowid LIMIT 1",
                [.text(originalTransactionID)], purpose: "reading the customer of \(originalTransactionID)"
            ) { (row) throws(LedgerError) in row.text(at: 0) }.first ?? nil
        }
    }

    /// The stored renewal info of each subscription of `originalTransactionIDs`, in their order: one query (the ids
    /// are bound as one JSON array that SQLite's `json_each` unnests).
    public func renewalInfo(originalTransactionIDs: [String]) throws(LedgerError) -> [LedgerRenewalInfo] {
        guard !originalTransactionIDs.isEmpty else { return [] }
        let list = JSONValue.array(originalTransactionIDs.map(JSONValue.string)).serialized()
        return try withOpenDatabase { (database) throws(LedgerError) in
            try Self.fetchRenewalInfo(
                database,
                "SELECT \(RenewalColumn.allCases.map { "r." + $0.name }.joined(separator: ", ")) FROM json_each(?1) "
                    + "AS ids JOIN renewal_info AS r ON r.original_transaction_id = ids.value ORDER BY ids.key",
                [.text(list)], purpose: "reading the renewal info of \(originalTransactionIDs.count) subscriptions")
        }
    }

    /// The stored notification with this UUID (compared byte for byte), or nil.
    public func notification(uuid: String) throws(LedgerError) -> LedgerNotification? {
        try withOpenDatabase { (database) throws(LedgerError) in
            try SQLiteWriter(database: database).notification(uuid: uuid)
        }
    }

    /// A page of the app's notifications, newest stored first (see
    /// ``TransactionLedger/notifications(bundleID:since:before:limit:)``); the cursor is the sequence number of the
    /// page's last notification.
    public func notifications(
        bundleID: String, since: ReceiptDate?, before: Int64?, limit: Int
    ) throws(LedgerError) -> LedgerNotificationPage {
        try withOpenDatabase { (database) throws(LedgerError) in
            CustomerStateSQL.page(
                try Self.fetchNotifications(
                    database, CustomerStateSQL.notificationPage(.sqlite),
                    CustomerStateSQL.notificationPageParameters(
                        bundleID: bundleID, since: since, before: before, limit: limit),
                    purpose: "listing the notifications of \(bundleID)"), limit: limit)
        }
    }

    /// The outgoing `TEST` notifications queued under `testToken`, by URL (compared byte for byte).
    public func outgoingNotifications(testToken: String) throws(LedgerError) -> [LedgerOutgoingNotification] {
        try withOpenDatabase { (database) throws(LedgerError) in
            try Self.fetchOutgoingNotifications(
                database, OutboxSQL.withTestToken(.sqlite), [.text(testToken)],
                purpose: "reading the test notifications of token \(testToken)"
            ).map(\.notification)
        }
    }

    /// A page of the outgoing notifications `filter` selects, oldest signed first, then in the order queued (see
    /// ``TransactionLedger/outgoingNotifications(_:after:limit:)``); the cursor is the sequence number of the page's
    /// last notification.
    public func outgoingNotifications(
        _ filter: LedgerOutgoingFilter, after: Int64?, limit: Int
    ) throws(LedgerError) -> LedgerOutgoingPage {
        try withOpenDatabase { (database) throws(LedgerError) in
            OutboxSQL.page(
                try Self.fetchOutgoingNotifications(
                    database, OutboxSQL.history(.sqlite),
                    OutboxSQL.historyParameters(filter, after: after, limit: limit),
                    purpose: "listing the outgoing notifications of \(filter.bundleID)"), limit: limit)
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

    /// At most `limit` renewal infos after `originalTransactionID`, in id order (SQLite compares TEXT byte for byte).
    public func renewalInfos(after originalTransactionID: String?, limit: Int) throws(LedgerError)
        -> [LedgerRenewalInfo]
    {
        try withOpenDatabase { (database) throws(LedgerError) in
            try Self.fetchRenewalInfo(
                database,
                CustomerStateSQL.selectRenewalInfo(
                    where: "original_transaction_id > ?1 ORDER BY original_transaction_id LIMIT ?2"),
                [.text(originalTransactionID ?? ""), .integer(Int64(max(limit, 0)))], purpose: "listing renewal info")
        }
    }

    /// At most `limit` notifications after the sequence number `sequence`, oldest stored first.
    public func notifications(
        afterSequence sequence: Int64?, limit: Int
    ) throws(LedgerError) -> [(sequence: Int64, notification: LedgerNotification)] {
        try withOpenDatabase { (database) throws(LedgerError) in
            try Self.fetchNotifications(
                database, CustomerStateSQL.selectNotifications(where: "sequence > ?1 ORDER BY sequence LIMIT ?2"),
                [.integer(sequence ?? Int64.min), .integer(Int64(max(limit, 0)))], purpose: "listing notifications")
        }
    }

    /// At most `limit` outgoing notifications after the sequence number `sequence`, oldest queued first.
    public func outgoingNotifications(
        afterSequence sequence: Int64?, limit: Int
    ) throws(LedgerError) -> [(sequence: Int64, notification: LedgerOutgoingNotification)] {
        try withOpenDatabase { (database) throws(LedgerError) in
            try Self.fetchOutgoingNotifications(
                database, OutboxSQL.afterSequence(.sqlite),
                [.integer(sequence ?? Int64.min), .integer(Int64(max(limit, 0)))],
                purpose: "listing outgoing notifications")
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
        for reader in idle {
            reader.database.endReading()
            reader.database.close()
        }
    }

    /// Runs `body` with a reading connection of its own (see `readers`), returned to the pool afterwards, inside
    /// a read transaction: the one the connection kept open when it still shows every acknowledged write (see
    /// `ReadSnapshot`), else a new one.
    private func withOpenDatabase<Result: Sendable>(
        _ body: (SQLiteDatabase) throws(LedgerError) -> Result
    ) throws(LedgerError) -> Result {
        var reader = try takeReader()
        let now = ContinuousClock.now
        let committed = commits.load(ordering: .acquiring)
        if let snapshot = reader.snapshot, !snapshot.isCurrent(commits: committed, at: now) {
            reader.database.endReading()
            reader.snapshot = nil
        }
        do throws(LedgerError) {
            if reader.snapshot == nil {
                try reader.database.beginReading()
                reader.snapshot = ReadSnapshot(commits: committed, began: now)
            }
            let result = try body(reader.database)
            giveBack(reader)
            return result
        } catch {
            reader.database.endReading()
            reader.snapshot = nil
            giveBack(reader)
            throw error
        }
    }

    /// A reading connection from the pool, or a new one when the pool is empty.
    private func takeReader() throws(LedgerError) -> IdleReader {
        let taken = try readers.withLock { (pool) throws(LedgerError) -> IdleReader? in
            guard pool != nil else { throw LedgerError(.storage, "ledger is closed") }
            return pool?.popLast()
        }
        if let taken { return taken }
        let database = try SQLiteDatabase(path: path)
        do throws(LedgerError) {
            try database.execute(
                "PRAGMA busy_timeout = \(Self.busyTimeoutMilliseconds)", purpose: "setting the busy timeout")
            try database.execute("PRAGMA query_only = ON", purpose: "making a reading connection read only")
        } catch {
            database.close()
            throw error
        }
        return IdleReader(database: database)
    }

    /// Puts `reader` back in the pool, its snapshot ended when a group committed or its lifetime ran out while it
    /// read; closes it when the ledger has been closed.
    private func giveBack(_ reader: IdleReader) {
        var reader = reader
        if let snapshot = reader.snapshot,
            !snapshot.isCurrent(commits: commits.load(ordering: .acquiring), at: ContinuousClock.now)
        {
            reader.database.endReading()
            reader.snapshot = nil
        }
        let kept = readers.withLock { (pool) -> Bool in
            guard pool != nil else { return false }
            pool?.append(reader)
            return true
        }
        if !kept {
            reader.database.endReading()
            reader.database.close()
        }
    }

    /// Ends the read transactions the idle reading connections keep, which a commit has just made stale, so that
    /// none of them keeps the WAL from being checkpointed and reused (see `ReadSnapshot`).
    private func endIdleSnapshots() {
        readers.withLock { pool in
            guard let idle = pool else { return }
            for index in idle.indices where idle[index].snapshot != nil {
                idle[index].database.endReading()
                pool?[index].snapshot = nil
            }
        }
    }

    /// Runs the write `body` (`purpose` says what it does, for its errors) in the next group commit and returns
    /// its result once that group is committed: a success only when it is durable.
    private func writing<Value: Sendable>(
        _ purpose: String, _ body: @escaping @Sendable (SQLiteWriter) throws(LedgerError) -> Value
    ) throws(LedgerError) -> Value {
        try ResultHandoff.waiting { (completion) in writing(purpose, completion: completion, body) }.get()
    }

    /// As `writing`, but returns at once: `completion` gets the result on the committing thread once the group is
    /// committed.
    private func writing<Value: Sendable>(
        _ purpose: String, completion: @escaping @Sendable (Result<Value, LedgerError>) -> Void,
        _ body: @escaping @Sendable (SQLiteWriter) throws(LedgerError) -> Value
    ) {
        let write = GroupedWrite<any Sendable>(purpose: purpose) { (database) throws(LedgerError) in
            try body(SQLiteWriter(database: database))
        }
        writes.submit(write, committingWith: commit) { result in
            completion(
                result.flatMap { value in
                    guard let typed = value as? Value else {
                        return .failure(
                            LedgerError(
                                .storage, "\(purpose): the write returned \(type(of: value)), not \(Value.self)"))
                    }
                    return .success(typed)
                })
        }
    }

    /// Commits `group` in one transaction, holding the connection's lock from `BEGIN` to `COMMIT` so that no read
    /// sees a write before it is committed. As for a single write, a storage failure is remembered for
    /// ``checkWritable()`` until a write succeeds, taking the writes in the group's order.
    private func commit(_ group: [GroupedWrite<any Sendable>]) -> [Result<any Sendable, LedgerError>] {
        let (results, committed) = state.withLock {
            connection -> (results: [Result<any Sendable, LedgerError>], committed: Bool) in
            guard let database = connection?.database else {
                return (group.map { _ in .failure(LedgerError(.storage, "ledger is closed")) }, committed: false)
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
                commits.add(1, ordering: .releasing)
                return (results, committed: true)
            }
            return (results, committed: false)
        }
        if committed { endIdleSnapshots() }
        return results
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

    /// How many writes the group being committed holds; 0 between groups.
    var writesBeingCommitted: Int {
        writes.writesBeingCommitted
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
        Migration(
            summary: "keep renewal info and notifications, and find transactions by original transaction",
            statements: [
                """
                CREATE TABLE renewal_info (
                    original_transaction_id TEXT PRIMARY KEY NOT NULL,
                    bundle_id TEXT NOT NULL,
                    product_id TEXT NOT NULL,
                    auto_renew_product_id TEXT,
                    auto_renews INTEGER CHECK (auto_renews IN (0, 1)),
                    expiration_intent INTEGER,
                    is_in_billing_retry_period INTEGER CHECK (is_in_billing_retry_period IN (0, 1)),
                    grace_period_expires_date_ms INTEGER,
                    price_increase_status INTEGER,
                    signed_date_ms INTEGER NOT NULL
                ) STRICT
                """,
                """
                CREATE TABLE notifications (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    notification_uuid TEXT NOT NULL UNIQUE,
                    notification_type TEXT NOT NULL,
                    subtype TEXT,
                    bundle_id TEXT NOT NULL,
                    signed_date_ms INTEGER NOT NULL,
                    received_ms INTEGER NOT NULL,
                    customer_id TEXT,
                    transaction_id TEXT,
                    original_transaction_id TEXT,
                    effects TEXT NOT NULL,
                    signed_payload TEXT NOT NULL
                ) STRICT
                """,
                "CREATE INDEX notifications_by_app ON notifications (bundle_id, sequence)",
                "CREATE INDEX transactions_by_original ON transactions (original_transaction_id)",
            ]),
        Migration(
            summary: "keep each transaction's appAccountToken, and an outbox of outgoing notifications",
            statements: [
                "ALTER TABLE transactions ADD COLUMN app_account_token TEXT",
                """
                CREATE TABLE outgoing_notifications (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    notification_uuid TEXT NOT NULL,
                    url TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    notification_type TEXT NOT NULL,
                    subtype TEXT,
                    transaction_id TEXT,
                    original_transaction_id TEXT,
                    test_token TEXT,
                    signed_date_ms INTEGER NOT NULL,
                    signed_payload TEXT NOT NULL,
                    next_attempt_ms INTEGER,
                    attempts TEXT NOT NULL,
                    delivered INTEGER NOT NULL CHECK (delivered IN (0, 1)),
                    UNIQUE (notification_uuid, url)
                ) STRICT
                """,
                """
                CREATE INDEX outgoing_notifications_due ON outgoing_notifications (next_attempt_ms, sequence)
                    WHERE next_attempt_ms IS NOT NULL
                """,
                """
                CREATE INDEX outgoing_notifications_by_test_token ON outgoing_notifications (test_token, url)
                    WHERE test_token IS NOT NULL
                """,
                """
                CREATE INDEX outgoing_notifications_by_app
                    ON outgoing_notifications (bundle_id, signed_date_ms, sequence)
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
    /// milliseconds since 1970 from SQLite's clock (the Unix epoch is Julian day 2440587.5), unless its id is
    /// stored; returns a row when it was inserted.
    fileprivate static let insertSQL =
        "INSERT INTO transactions (\(Column.list), recorded_at_ms) VALUES (\(Column.parameters(.sqlite)), "
        + "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)) "
        + "ON CONFLICT (transaction_id) DO NOTHING RETURNING transaction_id"

    /// Selects every column of the rows matching `clause`: a `WHERE` condition, possibly followed by `ORDER BY`.
    private static func select(where clause: String) -> String {
        "SELECT \(Column.list) FROM transactions WHERE \(clause)"
    }

    fileprivate static let selectByID = select(where: "transaction_id = ?1")

    private static let selectByCustomer = select(
        where: "customer_id = ?1 AND bundle_id = ?2 ORDER BY purchase_date_ms, transaction_id")

    fileprivate static func fetchOne(
        _ database: SQLiteDatabase, id: String
    ) throws(LedgerError) -> LedgerTransaction? {
        try fetch(database, selectByID, [.text(id)], purpose: "reading transaction \(id)").first
    }

    /// The transactions `select` (one of the selects above) returns with `parameters` bound; `purpose` is only
    /// worked out for an error or a row.
    private static func fetch(
        _ database: SQLiteDatabase, _ select: String, _ parameters: [SQLiteValue], purpose: @autoclosure () -> String
    ) throws(LedgerError) -> [LedgerTransaction] {
        try fetch(database, select, parameters, purpose: purpose()) { (row) throws(LedgerError) in
            try Column.decode(
                purpose: purpose(), text: { row.text(at: $0.rawValue) }, integer: { row.int64(at: $0.rawValue) })
        }
    }

    /// The renewal infos `select` (selecting ``RenewalColumn``s in order) returns with `parameters` bound.
    fileprivate static func fetchRenewalInfo(
        _ database: SQLiteDatabase, _ select: String, _ parameters: [SQLiteValue], purpose: String
    ) throws(LedgerError) -> [LedgerRenewalInfo] {
        try fetch(database, select, parameters, purpose: purpose) { (row) throws(LedgerError) in
            try RenewalColumn.decode(
                purpose: purpose, text: { row.text(at: $0.rawValue) }, integer: { row.int64(at: $0.rawValue) })
        }
    }

    /// The notifications and their sequence numbers `select` (one of ``CustomerStateSQL``'s notification selects)
    /// returns with `parameters` bound.
    fileprivate static func fetchNotifications(
        _ database: SQLiteDatabase, _ select: String, _ parameters: [SQLiteValue], purpose: String
    ) throws(LedgerError) -> [(sequence: Int64, notification: LedgerNotification)] {
        try fetchSequenced(NotificationColumn.self, database, select, parameters, purpose: purpose)
    }

    /// The outgoing notifications and their sequence numbers `select` (one of ``OutboxSQL``'s selects) returns
    /// with `parameters` bound.
    fileprivate static func fetchOutgoingNotifications(
        _ database: SQLiteDatabase, _ select: String, _ parameters: [SQLiteValue], purpose: String
    ) throws(LedgerError) -> [(sequence: Int64, notification: LedgerOutgoingNotification)] {
        try fetchSequenced(OutboxColumn.self, database, select, parameters, purpose: purpose)
    }

    /// The rows `select` (every column of `columns` in order, then a sequence) returns with `parameters` bound, each
    /// with its sequence number.
    private static func fetchSequenced<Columns: StoredColumn>(
        _ columns: Columns.Type, _ database: SQLiteDatabase, _ select: String, _ parameters: [SQLiteValue],
        purpose: String
    ) throws(LedgerError) -> [(sequence: Int64, notification: Columns.Row)] {
        let sequenceColumn = Int32(Columns.allCases.count)
        return try fetch(database, select, parameters, purpose: purpose) { (row) throws(LedgerError) in
            let decoded = try Columns.decode(
                purpose: purpose, text: { row.text(at: $0.rawValue) }, integer: { row.int64(at: $0.rawValue) })
            return (try requiredColumn(row.int64(at: sequenceColumn), "sequence", purpose: purpose), decoded)
        }
    }

    /// What `decode` makes of each row `sql` returns with `parameters` bound.
    fileprivate static func fetch<Row>(
        _ database: SQLiteDatabase, _ sql: String, _ parameters: [SQLiteValue], purpose: @autoclosure () -> String,
        _ decode: (SQLiteStatement) throws(LedgerError) -> Row
    ) throws(LedgerError) -> [Row] {
        try database.withStatement(sql, purpose: purpose()) { (statement) throws(LedgerError) in
            try statement.bind(parameters)
            var rows: [Row] = []
            while try statement.step() {
                rows.append(try decode(statement))
            }
            return rows
        }
    }
}

/// The rows of the ledger's writes, on the writing connection inside its group's transaction (which holds the
/// file's write lock, so rows need no lock of their own).
private struct SQLiteWriter: LedgerWriter {
    let database: SQLiteDatabase

    /// Whether `sql` with `parameters` bound returns a row (a `RETURNING` clause: whether it wrote one).
    private func returnsRow(_ sql: String, _ parameters: [SQLiteValue], purpose: String) throws(LedgerError) -> Bool {
        try database.withStatement(sql, purpose: purpose) { (statement) throws(LedgerError) in
            try statement.bind(parameters)
            return try statement.step()
        }
    }

    func insert(_ transaction: LedgerTransaction) throws(LedgerError) -> Bool {
        try returnsRow(
            SQLiteLedger.insertSQL, LedgerColumn.allCases.map { $0.value(in: transaction) },
            purpose: "storing transaction \(transaction.purchase.transactionID)")
    }

    func lockedTransaction(id: String) throws(LedgerError) -> LedgerTransaction? {
        try SQLiteLedger.fetchOne(database, id: id)
    }

    func setDate(_ date: ReceiptDate?, of column: LedgerColumn, transactionID: String) throws(LedgerError) {
        _ = try returnsRow(
            CustomerStateSQL.setDate(column, .sqlite),
            [LedgerValue(date?.millisecondsSince1970), .text(transactionID)],
            purpose: "storing the \(column.jsonName) of transaction \(transactionID)")
    }

    func knownCustomer(originalTransactionID: String, placeholder: String) throws(LedgerError) -> String? {
        try SQLiteLedger.fetch(
            database, CustomerStateSQL.knownCustomer(.sqlite), [.text(originalTransactionID), .text(placeholder)],
            purpose: "reading the customer of \(originalTransactionID)"
        ) { (row) throws(LedgerError) in row.text(at: 0) }.first ?? nil
    }

    func reassignCustomer(from placeholder: String, to customerID: String) throws(LedgerError) {
        _ = try returnsRow(
            CustomerStateSQL.reassignCustomer(.sqlite), [.text(placeholder), .text(customerID)],
            purpose: "giving the transactions of \(placeholder) to \(customerID)")
    }

    func upsert(_ info: LedgerRenewalInfo) throws(LedgerError) -> LedgerRenewalInfo? {
        try SQLiteLedger.fetchRenewalInfo(
            database, CustomerStateSQL.upsertRenewalInfo(.sqlite), RenewalColumn.allCases.map { $0.value(in: info) },
            purpose: "storing the renewal info of \(info.originalTransactionID)"
        ).first
    }

    func renewalInfo(originalTransactionID: String) throws(LedgerError) -> LedgerRenewalInfo? {
        try SQLiteLedger.fetchRenewalInfo(
            database, CustomerStateSQL.selectRenewalInfo(where: "original_transaction_id = ?1"),
            [.text(originalTransactionID)], purpose: "reading the renewal info of \(originalTransactionID)"
        ).first
    }

    func insert(_ notification: LedgerNotification) throws(LedgerError) -> Bool {
        try returnsRow(
            CustomerStateSQL.insertNotification(.sqlite),
            NotificationColumn.allCases.map { $0.value(in: notification) },
            purpose: "storing notification \(notification.notificationUUID)")
    }

    func notification(uuid: String) throws(LedgerError) -> LedgerNotification? {
        try SQLiteLedger.fetchNotifications(
            database, CustomerStateSQL.selectNotifications(where: "notification_uuid = ?1"), [.text(uuid)],
            purpose: "reading notification \(uuid)"
        ).first?.notification
    }

    func setEffects(_ effects: [String], notificationUUID: String) throws(LedgerError) {
        _ = try returnsRow(
            CustomerStateSQL.setEffects(.sqlite),
            [.text(NotificationColumn.encode(effects: effects)), .text(notificationUUID)],
            purpose: "storing the effects of notification \(notificationUUID)")
    }

    func insert(_ outgoing: LedgerOutgoingNotification) throws(LedgerError) -> Bool {
        try returnsRow(
            OutboxSQL.insert(.sqlite), OutboxColumn.allCases.map { $0.value(in: outgoing) },
            purpose: "queueing notification \(outgoing.notificationUUID) for \(outgoing.url)")
    }

    func deleteOutgoingNotification(notificationUUID: String, url: String) throws(LedgerError) {
        _ = try returnsRow(
            OutboxSQL.delete(.sqlite), [.text(notificationUUID), .text(url)],
            purpose: "removing notification \(notificationUUID) for \(url) from the outbox")
    }

    func lockedOutgoingNotification(
        notificationUUID: String, url: String
    ) throws(LedgerError) -> LedgerOutgoingNotification? {
        try SQLiteLedger.fetchOutgoingNotifications(
            database, OutboxSQL.selectOne(.sqlite), [.text(notificationUUID), .text(url)],
            purpose: "reading notification \(notificationUUID) for \(url)"
        ).first?.notification
    }

    func lockedDueNotifications(
        at now: ReceiptDate, limit: Int
    ) throws(LedgerError) -> [LedgerOutgoingNotification] {
        try SQLiteLedger.fetchOutgoingNotifications(
            database, OutboxSQL.due(.sqlite), [.integer(now.millisecondsSince1970), .integer(Int64(max(limit, 0)))],
            purpose: "reading the outgoing notifications due at \(now.rfc3339)"
        ).map(\.notification)
    }

    func updateDelivery(of outgoing: LedgerOutgoingNotification) throws(LedgerError) {
        _ = try returnsRow(
            OutboxSQL.updateDelivery(.sqlite), OutboxSQL.updateDeliveryParameters(outgoing),
            purpose: "storing the attempts of notification \(outgoing.notificationUUID) for \(outgoing.url)")
    }
}
