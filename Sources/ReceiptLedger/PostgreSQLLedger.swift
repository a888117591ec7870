public import ReceiptModel
internal import StrictJSON

/// A ``TransactionLedger`` kept in a PostgreSQL database, shared by any number of processes.
///
/// Calls borrow a connection from a pool of a size the caller chooses (see ``PostgreSQLPool``) for one operation
/// each. Every write is one transaction, acknowledged only once PostgreSQL answered its `COMMIT` with `COMMIT`, with
/// `synchronous_commit` on in every session, so an acknowledged write is on the server's disk. Concurrent writers,
/// in this process or any other, are ordered by the database, never by a check in this process: a transaction is
/// inserted with `INSERT … ON CONFLICT DO NOTHING` on its primary key, which waits for a concurrent insert of the same
/// id to commit, and is compared with the stored one only when it was not new; a refund locks its row (`SELECT … FOR
/// UPDATE`) before reading it. A connection that is lost fails the operation that used it with
/// ``LedgerError/Code/storage`` (when it is lost during `COMMIT`, whether the write was committed is unknown: it is
/// an error, and the caller's retry is idempotent); later operations open new connections, so the ledger works again
/// as soon as the server is back.
///
/// The schema is versioned by the rows of `ledger_migrations`; see ``schemaVersion``. Ledgers opening at once on an
/// empty database take turns under a PostgreSQL advisory lock, so each migration is applied once.
public final class PostgreSQLLedger: LedgerStore {
    /// The schema version this code creates and reads. Opening a database with a newer version fails.
    public static let schemaVersion = migrations.count

    private let pool: PostgreSQLPool

    /// Opens the ledger in the PostgreSQL database `uri` names (`postgresql://` or `postgres://`, with everything
    /// libpq allows in it: `host=/socket/dir`, `port`, `user`, `dbname`, `sslmode`…; passwords may come from
    /// `PGPASSWORD` or `~/.pgpass`), with at most `connections` (at least 1) connections open at once. Creates the
    /// schema when the database has none and migrates an older one to ``schemaVersion``.
    ///
    /// Throws ``LedgerError/Code/storage`` when the server cannot be reached, refuses the connection, or the
    /// database has a schema version newer than ``schemaVersion`` (the message names both).
    public init(uri: String, connections: Int) throws(LedgerError) {
        pool = PostgreSQLPool(uri: uri, size: connections, prepare: Self.prepare)
        let connection = try pool.openConnection()
        defer { connection.close() }
        try Self.migrate(connection)
    }

    /// The most connections the ledger opens at once.
    public var connections: Int { pool.size }

    /// Runs `body` on one of the pool's connections (for tests that look at a session's settings).
    func withConnection<Result>(
        _ body: (PostgreSQLConnection) throws(LedgerError) -> Result
    ) throws(LedgerError) -> Result {
        try pool.withConnection(body)
    }

    /// Records `transaction` as described by ``TransactionLedger/record(_:)``. The stored transaction has no
    /// `cancellationDate` and no `unknownAttributes`; strings are compared byte for byte. A transaction that was
    /// not new is locked (`SELECT … FOR UPDATE`) before it is compared, so two adoptions of one placeholder are
    /// ordered.
    public func record(_ transaction: LedgerTransaction) throws(LedgerError) -> LedgerRecordOutcome {
        try writing("recording transaction \(transaction.purchase.transactionID)") { (writer) throws(LedgerError) in
            try writer.record(transaction)
        }
    }

    /// Records a refund as described by ``TransactionLedger/recordCancellation(transactionID:at:)``.
    public func recordCancellation(
        transactionID: String, at date: ReceiptDate
    ) throws(LedgerError) -> LedgerRecordOutcome {
        try writing("recording the cancellation of transaction \(transactionID)") { (writer) throws(LedgerError) in
            try writer.recordCancellation(transactionID: transactionID, at: date)
        }
    }

    /// Withdraws a refund as described by ``TransactionLedger/withdrawCancellation(transactionID:)``.
    public func withdrawCancellation(transactionID: String) throws(LedgerError) -> LedgerRecordOutcome {
        try writing("withdrawing the cancellation of transaction \(transactionID)") { (writer) throws(LedgerError) in
            try writer.withdrawCancellation(transactionID: transactionID)
        }
    }

    /// Keeps renewal info as described by ``TransactionLedger/recordRenewalInfo(_:)``: one upsert, which waits for
    /// a concurrent one of the same subscription.
    public func recordRenewalInfo(_ info: LedgerRenewalInfo) throws(LedgerError) -> LedgerChangeOutcome {
        try writing("keeping the renewal info of \(info.originalTransactionID)") { (writer) throws(LedgerError) in
            try writer.recordRenewalInfo(info)
        }
    }

    /// Applies `changes` as described by ``TransactionLedger/apply(_:notification:)``, in one transaction. The
    /// notification row is inserted first, so a concurrent delivery of the same one waits for this commit and
    /// then finds it stored.
    public func apply(
        _ changes: [LedgerChange], notification: LedgerNotification?
    ) throws(LedgerError) -> LedgerApplication {
        let purpose =
            notification.map { "applying notification \($0.notificationUUID)" } ?? "applying \(changes.count) changes"
        return try writing(purpose) { (writer) throws(LedgerError) in
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
    /// ``TransactionLedger/claimDueNotifications(at:leaseUntil:limit:)``, in one transaction: the due rows are
    /// locked with `FOR UPDATE SKIP LOCKED`, so a concurrent claim, in this process or another, passes over the rows
    /// this one is taking instead of waiting for them, and finds them no longer due once it commits.
    public func claimDueNotifications(
        at now: ReceiptDate, leaseUntil: ReceiptDate, limit: Int
    ) throws(LedgerError) -> [LedgerOutgoingNotification] {
        try writing("claiming the outgoing notifications due at \(now.rfc3339)") { (writer) throws(LedgerError) in
            try writer.claimDueNotifications(at: now, leaseUntil: leaseUntil, limit: limit)
        }
    }

    /// Records an attempt as described by
    /// ``TransactionLedger/recordDeliveryAttempt(notificationUUID:url:attempt:nextAttemptDate:)``, its row locked
    /// (`SELECT … FOR UPDATE`) before it is read, so two attempts recorded at once both stay.
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

    /// Runs `body` in one transaction on a connection of the pool; `purpose` begins its errors.
    private func writing<Result>(
        _ purpose: String, _ body: (PostgreSQLWriter) throws(LedgerError) -> Result
    ) throws(LedgerError) -> Result {
        try pool.withConnection { (connection) throws(LedgerError) in
            try Self.inTransaction(connection, purpose) { () throws(LedgerError) in
                try body(PostgreSQLWriter(connection: connection))
            }
        }
    }

    /// The stored transaction with this id (compared byte for byte), or nil.
    public func transaction(id: String) throws(LedgerError) -> LedgerTransaction? {
        try pool.withConnection { (connection) throws(LedgerError) in try Self.fetchOne(connection, id: id) }
    }

    /// The stored transaction whose id comes first in `ids`, or nil when none is stored: one query, whatever the
    /// number of ids (they are bound as one JSON array that `json_array_elements_text` unnests).
    public func transaction(withAnyOf ids: [String]) throws(LedgerError) -> LedgerTransaction? {
        guard !ids.isEmpty else { return nil }
        let list = JSONValue.array(ids.map(JSONValue.string)).serialized()
        return try pool.withConnection { (connection) throws(LedgerError) in
            try Self.fetch(connection, Self.selectFirstOfIDs, [list], purpose: "tracing \(ids.count) transaction ids")
                .first
        }
    }

    /// The customer's transactions for one app, ordered by purchase date, then by transaction id (compared as
    /// UTF-8 bytes: the text columns have the "C" collation).
    public func transactions(customerID: String, bundleID: String) throws(LedgerError) -> [LedgerTransaction] {
        try pool.withConnection { (connection) throws(LedgerError) in
            try Self.fetch(
                connection, Self.selectByCustomer, [customerID, bundleID],
                purpose: "reading the transactions of customer \(customerID)")
        }
    }

    /// The customer of the first recorded transaction (by the time it was recorded, then its id) of the
    /// subscription `originalTransactionID`, or nil.
    public func customerID(originalTransactionID: String) throws(LedgerError) -> String? {
        try pool.withConnection { (connection) throws(LedgerError) in
            try connection.execute(
                "SELECT customer_id FROM transactions WHERE original_transaction_id = $1 "
                    + "ORDER BY recorded_at, transaction_id LIMIT 1", [originalTransactionID],
                purpose: "reading the customer of \(originalTransactionID)"
            ).rows.first?.first ?? nil
        }
    }

    /// The stored renewal info of each subscription of `originalTransactionIDs`, in their order: one query (the ids
    /// are bound as one JSON array that `json_array_elements_text` unnests).
    public func renewalInfo(originalTransactionIDs: [String]) throws(LedgerError) -> [LedgerRenewalInfo] {
        guard !originalTransactionIDs.isEmpty else { return [] }
        let list = JSONValue.array(originalTransactionIDs.map(JSONValue.string)).serialized()
        return try pool.withConnection { (connection) throws(LedgerError) in
            try Self.fetchRenewalInfo(
                connection,
                "SELECT \(RenewalColumn.allCases.map { "r." + $0.name }.joined(separator: ", ")) "
                    + "FROM json_array_elements_text($1::json) WITH ORDINALITY AS ids (id, position) "
                    + "JOIN renewal_info AS r ON r.original_transaction_id = ids.id ORDER BY ids.position",
                [list], purpose: "reading the renewal info of \(originalTransactionIDs.count) subscriptions")
        }
    }

    /// The stored notification with this UUID (compared byte for byte), or nil.
    public func notification(uuid: String) throws(LedgerError) -> LedgerNotification? {
        try pool.withConnection { (connection) throws(LedgerError) in
            try PostgreSQLWriter(connection: connection).notification(uuid: uuid)
        }
    }

    /// A page of the app's notifications, newest stored first (see
    /// ``TransactionLedger/notifications(bundleID:since:before:limit:)``); the cursor is the sequence number of the
    /// page's last notification.
    public func notifications(
        bundleID: String, since: ReceiptDate?, before: Int64?, limit: Int
    ) throws(LedgerError) -> LedgerNotificationPage {
        try pool.withConnection { (connection) throws(LedgerError) in
            CustomerStateSQL.page(
                try Self.fetchNotifications(
                    connection, CustomerStateSQL.notificationPage(.postgreSQL),
                    CustomerStateSQL.notificationPageParameters(
                        bundleID: bundleID, since: since, before: before, limit: limit
                    ).map(Self.parameter), purpose: "listing the notifications of \(bundleID)"), limit: limit)
        }
    }

    /// The outgoing `TEST` notifications queued under `testToken`, by URL (the "C" collation: UTF-8 bytes).
    public func outgoingNotifications(testToken: String) throws(LedgerError) -> [LedgerOutgoingNotification] {
        try pool.withConnection { (connection) throws(LedgerError) in
            try Self.fetchOutgoingNotifications(
                connection, OutboxSQL.withTestToken(.postgreSQL), [testToken],
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
        try pool.withConnection { (connection) throws(LedgerError) in
            OutboxSQL.page(
                try Self.fetchOutgoingNotifications(
                    connection, OutboxSQL.history(.postgreSQL),
                    OutboxSQL.historyParameters(filter, after: after, limit: limit).map(Self.parameter),
                    purpose: "listing the outgoing notifications of \(filter.bundleID)"), limit: limit)
        }
    }

    /// How many transactions are stored: the sum of the 16 rows a trigger updates in the same transaction as each
    /// insert (one row per backend process modulo 16, so concurrent inserts seldom wait for each other's row), so
    /// reading it costs the same however large the ledger is.
    public func count() throws(LedgerError) -> Int {
        try pool.withConnection { (connection) throws(LedgerError) in
            let purpose = "reading the transaction count"
            let result = try connection.execute(
                "SELECT sum(value) FROM ledger_counts WHERE name = 'transactions'", purpose: purpose)
            guard let text = result.rows.first?.first ?? nil, let count = Int(text) else {
                throw LedgerError(.storage, "\(purpose): PostgreSQL returned no count")
            }
            return count
        }
    }

    /// Throws when the ledger cannot take writes (see ``TransactionLedger/checkWritable()``): closed, the server
    /// cannot be reached, or it takes no writes (a standby in recovery, or sessions read-only by default). Asks the
    /// server each time, writing nothing.
    public func checkWritable() throws(LedgerError) {
        try pool.withConnection { (connection) throws(LedgerError) in
            let result = try connection.execute(
                "SELECT pg_is_in_recovery(), current_setting('transaction_read_only')",
                purpose: "checking that the ledger's database takes writes")
            let row = result.rows.first
            if row?[0] == "t" || row?[1] == "on" {
                throw LedgerError(
                    .storage, "the ledger's database is read-only (a standby, or default_transaction_read_only)",
                    publicDetail: "the ledger's database is read-only")
            }
        }
    }

    /// At most `limit` transactions after `transactionID`, in id order (the "C" collation: UTF-8 bytes).
    public func transactions(after transactionID: String?, limit: Int) throws(LedgerError) -> [LedgerTransaction] {
        try pool.withConnection { (connection) throws(LedgerError) in
            try Self.fetch(
                connection, Self.select(where: "transaction_id > $1 ORDER BY transaction_id LIMIT $2"),
                [transactionID ?? "", "\(max(limit, 0))"], purpose: "listing transactions")
        }
    }

    /// At most `limit` renewal infos after `originalTransactionID`, in id order (the "C" collation: UTF-8 bytes).
    public func renewalInfos(after originalTransactionID: String?, limit: Int) throws(LedgerError)
        -> [LedgerRenewalInfo]
    {
        try pool.withConnection { (connection) throws(LedgerError) in
            try Self.fetchRenewalInfo(
                connection,
                CustomerStateSQL.selectRenewalInfo(
                    where: "original_transaction_id > $1 ORDER BY original_transaction_id LIMIT $2"),
                [originalTransactionID ?? "", "\(max(limit, 0))"], purpose: "listing renewal info")
        }
    }

    /// At most `limit` notifications after the sequence number `sequence`, oldest stored first.
    public func notifications(
        afterSequence sequence: Int64?, limit: Int
    ) throws(LedgerError) -> [(sequence: Int64, notification: LedgerNotification)] {
        try pool.withConnection { (connection) throws(LedgerError) in
            try Self.fetchNotifications(
                connection, CustomerStateSQL.selectNotifications(where: "sequence > $1 ORDER BY sequence LIMIT $2"),
                ["\(sequence ?? Int64.min)", "\(max(limit, 0))"], purpose: "listing notifications")
        }
    }

    /// At most `limit` outgoing notifications after the sequence number `sequence`, oldest queued first.
    public func outgoingNotifications(
        afterSequence sequence: Int64?, limit: Int
    ) throws(LedgerError) -> [(sequence: Int64, notification: LedgerOutgoingNotification)] {
        try pool.withConnection { (connection) throws(LedgerError) in
            try Self.fetchOutgoingNotifications(
                connection, OutboxSQL.afterSequence(.postgreSQL), ["\(sequence ?? Int64.min)", "\(max(limit, 0))"],
                purpose: "listing outgoing notifications")
        }
    }

    /// The highest migration recorded in `ledger_migrations`.
    public func storedSchemaVersion() throws(LedgerError) -> Int {
        try pool.withConnection { (connection) throws(LedgerError) in try Self.storedSchemaVersion(connection) }
    }

    /// What is wrong with the database, as lines: exactly `["ok"]` when the schema is this code's, every constraint
    /// of the ledger's tables is validated, the counting trigger is enabled and the kept count equals the rows
    /// (this counts them all: it is for `receipt ledger check`, not for a request).
    public func integrityCheck() throws(LedgerError) -> [String] {
        try pool.withConnection { (connection) throws(LedgerError) in
            let purpose = "checking the integrity of the database"
            var problems: [String] = []
            let version = try Self.storedSchemaVersion(connection)
            if version != Self.schemaVersion {
                problems.append("schema version \(version), expected \(Self.schemaVersion)")
            }
            let invalid = try connection.execute(
                """
                SELECT conrelid::regclass::text || '.' || conname FROM pg_constraint
                WHERE conrelid IN ('transactions'::regclass, 'ledger_counts'::regclass, 'ledger_migrations'::regclass,
                    'renewal_info'::regclass, 'notifications'::regclass, 'outgoing_notifications'::regclass)
                    AND NOT convalidated ORDER BY 1
                """, purpose: purpose)
            problems += invalid.rows.map { "constraint \($0.first.flatMap { $0 } ?? "?") is not validated" }
            let trigger = try connection.execute(
                """
                SELECT count(*) FROM pg_trigger WHERE tgrelid = 'transactions'::regclass
                    AND tgname = 'transactions_counted' AND tgenabled <> 'D'
                """, purpose: purpose)
            if trigger.rows.first?.first != "1" { problems.append("the counting trigger is missing or disabled") }
            let counts = try connection.execute(
                """
                SELECT (SELECT count(*) FROM transactions),
                    (SELECT sum(value) FROM ledger_counts WHERE name = 'transactions')
                """, purpose: purpose)
            if let row = counts.rows.first, row[0] != row[1] {
                problems.append("the kept count is \(row[1] ?? "NULL") but \(row[0] ?? "?") transactions are stored")
            }
            return problems.isEmpty ? ["ok"] : problems
        }
    }

    /// Closes every connection. Closing again does nothing; any other call afterwards throws
    /// ``LedgerError/Code/storage`` ("ledger is closed").
    public func close() {
        pool.close()
    }

    /// The settings every session of the ledger runs with, whatever the server's or the role's defaults.
    @Sendable
    private static func prepare(_ connection: PostgreSQLConnection) throws(LedgerError) {
        try connection.execute(
            """
            SELECT set_config('synchronous_commit', 'on', false), set_config('client_encoding', 'UTF8', false),
                set_config('default_transaction_isolation', 'read committed', false)
            """, purpose: "configuring the session (synchronous_commit, client_encoding, isolation)")
    }

    /// Runs `body` inside `BEGIN … COMMIT` on `connection`, rolling back when it throws. Returns only once the
    /// server confirmed the commit: a `COMMIT` that PostgreSQL answered with `ROLLBACK` (the transaction had failed)
    /// is an error, and so is one whose answer never came.
    static func inTransaction<Result>(
        _ connection: PostgreSQLConnection, _ purpose: String, _ body: () throws(LedgerError) -> Result
    ) throws(LedgerError) -> Result {
        try connection.execute("BEGIN", purpose: "\(purpose): beginning a transaction")
        let result: Result
        do throws(LedgerError) {
            result = try body()
        } catch {
            if !connection.isLost {
                _ = try? connection.execute("ROLLBACK", purpose: "\(purpose): rolling back")
            }
            throw error
        }
        let commit = try connection.execute(
            "COMMIT", purpose: "\(purpose): committing (when the connection was lost, whether it committed is unknown)")
        guard commit.commandTag == "COMMIT" else {
            throw LedgerError(
                .storage, "\(purpose): PostgreSQL answered \(commit.commandTag) to COMMIT: nothing was committed")
        }
        return result
    }
}

// MARK: - Opening and migrating

extension PostgreSQLLedger {
    /// A step of the schema's history (see ``LedgerMigration``); the version is the highest row of `ledger_migrations`.
    private typealias Migration = LedgerMigration

    private static let migrations: [Migration] = [
        Migration(
            summary: "create the transactions table, its count and the schema history",
            statements: [
                """
                CREATE TABLE ledger_migrations (
                    version integer PRIMARY KEY,
                    summary text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                CREATE TABLE transactions (
                    transaction_id text COLLATE "C" PRIMARY KEY,
                    customer_id text COLLATE "C" NOT NULL,
                    bundle_id text COLLATE "C" NOT NULL,
                    product_id text COLLATE "C" NOT NULL,
                    quantity bigint,
                    original_transaction_id text COLLATE "C",
                    purchase_date_ms bigint NOT NULL,
                    original_purchase_date_ms bigint,
                    product_type bigint,
                    expires_date_ms bigint,
                    web_order_line_item_id bigint,
                    cancellation_date_ms bigint,
                    is_trial_period boolean,
                    is_in_intro_offer_period boolean,
                    promotional_offer_id text COLLATE "C",
                    recorded_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                CREATE INDEX transactions_by_customer_app_date
                    ON transactions (customer_id, bundle_id, purchase_date_ms, transaction_id)
                """,
                """
                CREATE TABLE ledger_counts (
                    name text NOT NULL,
                    shard integer NOT NULL CHECK (shard >= 0 AND shard < 16),
                    value bigint NOT NULL,
                    PRIMARY KEY (name, shard)
                )
                """,
                """
                INSERT INTO ledger_counts (name, shard, value)
                    SELECT 'transactions', shard, 0 FROM generate_series(0, 15) AS shard
                """,
                """
                CREATE FUNCTION ledger_count_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    UPDATE ledger_counts SET value = value + CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END
                        WHERE name = 'transactions' AND shard = pg_backend_pid() % 16;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER transactions_counted AFTER INSERT OR DELETE ON transactions
                    FOR EACH ROW EXECUTE FUNCTION ledger_count_transactions()
                """,
            ]),
        Migration(
            summary: "keep renewal info and notifications, and find transactions by original transaction",
            statements: [
                """
                CREATE TABLE renewal_info (
                    original_transaction_id text COLLATE "C" PRIMARY KEY,
                    bundle_id text COLLATE "C" NOT NULL,
                    product_id text COLLATE "C" NOT NULL,
                    auto_renew_product_id text COLLATE "C",
                    auto_renews boolean,
                    expiration_intent bigint,
                    is_in_billing_retry_period boolean,
                    grace_period_expires_date_ms bigint,
                    price_increase_status bigint,
                    signed_date_ms bigint NOT NULL
                )
                """,
                """
                CREATE TABLE notifications (
                    sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    notification_uuid text COLLATE "C" NOT NULL UNIQUE,
                    notification_type text COLLATE "C" NOT NULL,
                    subtype text COLLATE "C",
                    bundle_id text COLLATE "C" NOT NULL,
                    signed_date_ms bigint NOT NULL,
                    received_ms bigint NOT NULL,
                    customer_id text COLLATE "C",
                    transaction_id text COLLATE "C",
                    original_transaction_id text COLLATE "C",
                    effects text NOT NULL,
                    signed_payload text NOT NULL
                )
                """,
                "CREATE INDEX notifications_by_app ON notifications (bundle_id, sequence)",
                "CREATE INDEX transactions_by_original ON transactions (original_transaction_id)",
            ]),
        Migration(
            summary: "keep each transaction's appAccountToken, and an outbox of outgoing notifications",
            statements: [
                #"ALTER TABLE transactions ADD COLUMN app_account_token text COLLATE "C""#,
                """
                CREATE TABLE outgoing_notifications (
                    sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    notification_uuid text COLLATE "C" NOT NULL,
                    url text COLLATE "C" NOT NULL,
                    bundle_id text COLLATE "C" NOT NULL,
                    notification_type text COLLATE "C" NOT NULL,
                    subtype text COLLATE "C",
                    transaction_id text COLLATE "C",
                    original_transaction_id text COLLATE "C",
                    test_token text COLLATE "C",
                    signed_date_ms bigint NOT NULL,
                    signed_payload text NOT NULL,
                    next_attempt_ms bigint,
                    attempts text NOT NULL,
                    delivered boolean NOT NULL,
                    UNIQUE (notification_uuid, url)
                )
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

    /// The key of the advisory lock migrations hold: "openrece" in ASCII.
    static let migrationLockKey: Int64 = 0x6f70_656e_7265_6365

    /// How long opening waits for another process's migration before failing.
    private static let migrationLockTimeout = "60s"

    /// Applies every migration the database has not had, under the advisory lock, each in its own transaction that
    /// also records it. The version is read once the lock is held, so ledgers opening at once on an empty database
    /// apply each migration once: the first migrates, the others wait for the lock, then find nothing to do.
    private static func migrate(_ connection: PostgreSQLConnection) throws(LedgerError) {
        let locking = "waiting for the schema migration lock (pg_advisory_lock)"
        try connection.execute(
            "SELECT set_config('lock_timeout', $1, false)", [migrationLockTimeout], purpose: locking)
        try connection.execute("SELECT pg_advisory_lock($1)", ["\(migrationLockKey)"], purpose: locking)
        defer {
            // The lock ends with the session anyway: the connection is closed right after.
            _ = try? connection.execute(
                "SELECT pg_advisory_unlock($1)", ["\(migrationLockKey)"], purpose: "releasing the migration lock")
        }
        let found = try storedSchemaVersion(connection)
        guard (0...schemaVersion).contains(found) else {
            throw LedgerError(
                .storage,
                "the database has schema version \(found), but this code knows only versions up to \(schemaVersion)",
                publicDetail: "the ledger's database has a newer schema than this version knows")
        }
        for (version, migration) in zip(1..., migrations) where version > found {
            let purpose = "migrating the schema to version \(version) (\(migration.summary))"
            try inTransaction(connection, purpose) { () throws(LedgerError) in
                for statement in migration.statements {
                    try connection.execute(statement, purpose: purpose)
                }
                try connection.execute(
                    "INSERT INTO ledger_migrations (version, summary) VALUES ($1, $2)",
                    ["\(version)", migration.summary], purpose: purpose)
            }
        }
    }

    /// The highest migration recorded, 0 for a database without the ledger's tables.
    static func storedSchemaVersion(_ connection: PostgreSQLConnection) throws(LedgerError) -> Int {
        let purpose = "reading the schema version"
        let table = try connection.execute("SELECT to_regclass('ledger_migrations') IS NOT NULL", purpose: purpose)
        guard table.rows.first?.first == "t" else { return 0 }
        let version = try connection.execute(
            "SELECT coalesce(max(version), 0) FROM ledger_migrations", purpose: purpose)
        guard let text = version.rows.first?.first ?? nil, let result = Int(text) else {
            throw LedgerError(.storage, "\(purpose): PostgreSQL returned none")
        }
        return result
    }
}

// MARK: - Rows

extension PostgreSQLLedger {
    /// The stored columns (see ``LedgerColumn``).
    private typealias Column = LedgerColumn

    /// A value as a text parameter: PostgreSQL reads `1` and `0` as booleans for the flag columns.
    fileprivate static func parameter(_ value: LedgerValue) -> String? {
        switch value {
        case .integer(let integer): "\(integer)"
        case .text(let text): text
        case .null: nil
        }
    }

    /// Inserts every column of a transaction (parameters in column order) unless its id is stored; the time it is
    /// recorded is the server's.
    fileprivate static let insertSQL =
        "INSERT INTO transactions (\(Column.list)) VALUES (\(Column.parameters(.postgreSQL))) "
        + "ON CONFLICT (transaction_id) DO NOTHING"

    /// Selects every column of the rows matching `clause`: a `WHERE` condition, possibly followed by `ORDER BY`.
    private static func select(where clause: String) -> String {
        "SELECT \(Column.list) FROM transactions WHERE \(clause)"
    }

    /// Selects every column of the first stored transaction whose id is in the JSON array bound to `$1`.
    private static let selectFirstOfIDs =
        "SELECT \(Column.allCases.map { "t." + $0.name }.joined(separator: ", ")) "
        + "FROM json_array_elements_text($1::json) WITH ORDINALITY AS ids (id, position) "
        + "JOIN transactions AS t ON t.transaction_id = ids.id ORDER BY ids.position LIMIT 1"

    private static let selectByCustomer = select(
        where: "customer_id = $1 AND bundle_id = $2 ORDER BY purchase_date_ms, transaction_id")

    fileprivate static func fetchOne(
        _ connection: PostgreSQLConnection, id: String, forUpdate: Bool = false
    ) throws(LedgerError) -> LedgerTransaction? {
        try fetch(
            connection, select(where: "transaction_id = $1" + (forUpdate ? " FOR UPDATE" : "")), [id],
            purpose: "reading transaction \(id)"
        ).first
    }

    /// The transactions `select` (one of the selects above) returns with `parameters` bound.
    private static func fetch(
        _ connection: PostgreSQLConnection, _ select: String, _ parameters: [String?], purpose: String
    ) throws(LedgerError) -> [LedgerTransaction] {
        try fetch(connection, select, parameters, purpose: purpose) { (row, text, integer) throws(LedgerError) in
            try Column.decode(purpose: purpose, text: text, integer: integer)
        }
    }

    /// The renewal infos `select` (selecting ``RenewalColumn``s in order) returns with `parameters` bound.
    fileprivate static func fetchRenewalInfo(
        _ connection: PostgreSQLConnection, _ select: String, _ parameters: [String?], purpose: String
    ) throws(LedgerError) -> [LedgerRenewalInfo] {
        try fetch(connection, select, parameters, purpose: purpose) { (row, text, integer) throws(LedgerError) in
            try RenewalColumn.decode(purpose: purpose, text: text, integer: integer)
        }
    }

    /// The notifications and their sequence numbers `select` (one of ``CustomerStateSQL``'s notification selects)
    /// returns with `parameters` bound.
    fileprivate static func fetchNotifications(
        _ connection: PostgreSQLConnection, _ select: String, _ parameters: [String?], purpose: String
    ) throws(LedgerError) -> [(sequence: Int64, notification: LedgerNotification)] {
        try fetchSequenced(NotificationColumn.self, connection, select, parameters, purpose: purpose)
    }

    /// The outgoing notifications and their sequence numbers `select` (one of ``OutboxSQL``'s selects) returns
    /// with `parameters` bound.
    fileprivate static func fetchOutgoingNotifications(
        _ connection: PostgreSQLConnection, _ select: String, _ parameters: [String?], purpose: String
    ) throws(LedgerError) -> [(sequence: Int64, notification: LedgerOutgoingNotification)] {
        try fetchSequenced(OutboxColumn.self, connection, select, parameters, purpose: purpose)
    }

    /// The rows `select` (every column of `columns` in order, then a sequence) returns with `parameters` bound, each
    /// with its sequence number.
    private static func fetchSequenced<Columns: StoredColumn>(
        _ columns: Columns.Type, _ connection: PostgreSQLConnection, _ select: String, _ parameters: [String?],
        purpose: String
    ) throws(LedgerError) -> [(sequence: Int64, notification: Columns.Row)] {
        try fetch(connection, select, parameters, purpose: purpose) {
            (row, text, integer: (Columns) -> Int64?) throws(LedgerError) in
            let decoded = try Columns.decode(purpose: purpose, text: text, integer: integer)
            let sequence = row[Columns.allCases.count].flatMap { Int64($0) }
            return (try requiredColumn(sequence, "sequence", purpose: purpose), decoded)
        }
    }

    /// What `decode` makes of each row `sql` returns with `parameters` bound, given the row and how to read its
    /// columns of `Column` as text and as integers (flags `t` and `f` as 1 and 0). A column that holds something else
    /// than a number where one is read is a storage error.
    private static func fetch<StoredColumns: StoredColumn, Row>(
        _ connection: PostgreSQLConnection, _ sql: String, _ parameters: [String?], purpose: String,
        _ decode: (
            [String?], (StoredColumns) -> String?, (StoredColumns) -> Int64?
        ) throws(LedgerError) -> Row
    ) throws(LedgerError) -> [Row] {
        let result = try connection.execute(sql, parameters, purpose: purpose)
        var rows: [Row] = []
        for row in result.rows {
            var malformed: StoredColumns?
            func integer(_ column: StoredColumns) -> Int64? {
                guard let text = row[Int(column.rawValue)] else { return nil }
                let value: Int64? = column.isFlag ? ["f": 0, "t": 1][text] : Int64(text)
                if value == nil { malformed = column }
                return value
            }
            let decoded = try decode(row, { row[Int($0.rawValue)] }, integer)
            if let malformed {
                throw LedgerError(.storage, "\(purpose): column \(malformed.name) holds something else than a number")
            }
            rows.append(decoded)
        }
        return rows
    }
}

/// The rows of the ledger's writes, on one connection inside one transaction.
private struct PostgreSQLWriter: LedgerWriter {
    let connection: PostgreSQLConnection

    private func parameters(_ values: [LedgerValue]) -> [String?] {
        values.map(PostgreSQLLedger.parameter)
    }

    func insert(_ transaction: LedgerTransaction) throws(LedgerError) -> Bool {
        try connection.execute(
            PostgreSQLLedger.insertSQL, parameters(LedgerColumn.allCases.map { $0.value(in: transaction) }),
            purpose: "storing transaction \(transaction.purchase.transactionID)"
        ).affectedRows == 1
    }

    func lockedTransaction(id: String) throws(LedgerError) -> LedgerTransaction? {
        try PostgreSQLLedger.fetchOne(connection, id: id, forUpdate: true)
    }

    func setDate(_ date: ReceiptDate?, of column: LedgerColumn, transactionID: String) throws(LedgerError) {
        try connection.execute(
            CustomerStateSQL.setDate(column, .postgreSQL),
            parameters([LedgerValue(date?.millisecondsSince1970), .text(transactionID)]),
            purpose: "storing the \(column.jsonName) of transaction \(transactionID)")
    }

    func knownCustomer(originalTransactionID: String, placeholder: String) throws(LedgerError) -> String? {
        try connection.execute(
            CustomerStateSQL.knownCustomer(.postgreSQL), [originalTransactionID, placeholder],
            purpose: "reading the customer of \(originalTransactionID)"
        ).rows.first?.first ?? nil
    }

    func reassignCustomer(from placeholder: String, to customerID: String) throws(LedgerError) {
        try connection.execute(
            CustomerStateSQL.reassignCustomer(.postgreSQL), [placeholder, customerID],
            purpose: "giving the transactions of \(placeholder) to \(customerID)")
    }

    func upsert(_ info: LedgerRenewalInfo) throws(LedgerError) -> LedgerRenewalInfo? {
        try PostgreSQLLedger.fetchRenewalInfo(
            connection, CustomerStateSQL.upsertRenewalInfo(.postgreSQL),
            parameters(RenewalColumn.allCases.map { $0.value(in: info) }),
            purpose: "storing the renewal info of \(info.originalTransactionID)"
        ).first
    }

    func renewalInfo(originalTransactionID: String) throws(LedgerError) -> LedgerRenewalInfo? {
        try PostgreSQLLedger.fetchRenewalInfo(
            connection, CustomerStateSQL.selectRenewalInfo(where: "original_transaction_id = $1"),
            [originalTransactionID], purpose: "reading the renewal info of \(originalTransactionID)"
        ).first
    }

    func insert(_ notification: LedgerNotification) throws(LedgerError) -> Bool {
        try connection.execute(
            CustomerStateSQL.insertNotification(.postgreSQL),
            parameters(NotificationColumn.allCases.map { $0.value(in: notification) }),
            purpose: "storing notification \(notification.notificationUUID)"
        ).rows.count == 1
    }

    func notification(uuid: String) throws(LedgerError) -> LedgerNotification? {
        try PostgreSQLLedger.fetchNotifications(
            connection, CustomerStateSQL.selectNotifications(where: "notification_uuid = $1"), [uuid],
            purpose: "reading notification \(uuid)"
        ).first?.notification
    }

    func setEffects(_ effects: [String], notificationUUID: String) throws(LedgerError) {
        try connection.execute(
            CustomerStateSQL.setEffects(.postgreSQL), [NotificationColumn.encode(effects: effects), notificationUUID],
            purpose: "storing the effects of notification \(notificationUUID)")
    }

    func insert(_ outgoing: LedgerOutgoingNotification) throws(LedgerError) -> Bool {
        try connection.execute(
            OutboxSQL.insert(.postgreSQL), parameters(OutboxColumn.allCases.map { $0.value(in: outgoing) }),
            purpose: "queueing notification \(outgoing.notificationUUID) for \(outgoing.url)"
        ).rows.count == 1
    }

    func deleteOutgoingNotification(notificationUUID: String, url: String) throws(LedgerError) {
        try connection.execute(
            OutboxSQL.delete(.postgreSQL), [notificationUUID, url],
            purpose: "removing notification \(notificationUUID) for \(url) from the outbox")
    }

    func lockedOutgoingNotification(
        notificationUUID: String, url: String
    ) throws(LedgerError) -> LedgerOutgoingNotification? {
        try PostgreSQLLedger.fetchOutgoingNotifications(
            connection, OutboxSQL.selectOne(.postgreSQL) + " FOR UPDATE", [notificationUUID, url],
            purpose: "reading notification \(notificationUUID) for \(url)"
        ).first?.notification
    }

    func lockedDueNotifications(
        at now: ReceiptDate, limit: Int
    ) throws(LedgerError) -> [LedgerOutgoingNotification] {
        try PostgreSQLLedger.fetchOutgoingNotifications(
            connection, OutboxSQL.due(.postgreSQL) + " FOR UPDATE SKIP LOCKED",
            ["\(now.millisecondsSince1970)", "\(max(limit, 0))"],
            purpose: "reading the outgoing notifications due at \(now.rfc3339)"
        ).map(\.notification)
    }

    func updateDelivery(of outgoing: LedgerOutgoingNotification) throws(LedgerError) {
        try connection.execute(
            OutboxSQL.updateDelivery(.postgreSQL), parameters(OutboxSQL.updateDeliveryParameters(outgoing)),
            purpose: "storing the attempts of notification \(outgoing.notificationUUID) for \(outgoing.url)")
    }
}
