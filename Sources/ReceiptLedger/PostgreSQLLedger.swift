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
    /// `cancellationDate` and no `unknownAttributes`; strings are compared byte for byte.
    public func record(_ transaction: LedgerTransaction) throws(LedgerError) -> LedgerRecordOutcome {
        let candidate = Column.storable(transaction)
        let id = candidate.purchase.transactionID
        let purpose = "recording transaction \(id)"
        return try pool.withConnection { (connection) throws(LedgerError) in
            try Self.inTransaction(connection, purpose) { () throws(LedgerError) in
                let inserted = try connection.execute(
                    Self.insertSQL, Column.allCases.map { Self.parameter($0.value(in: candidate)) }, purpose: purpose)
                if inserted.affectedRows == 1 { return .created(candidate) }
                guard let stored = try Self.fetchOne(connection, id: id) else {
                    throw LedgerError(.storage, "\(purpose): the stored transaction it conflicted with is gone")
                }
                return try Column.replaying(candidate, over: stored)
            }
        }
    }

    /// Records a refund as described by ``TransactionLedger/recordCancellation(transactionID:at:)``.
    public func recordCancellation(
        transactionID: String, at date: ReceiptDate
    ) throws(LedgerError) -> LedgerRecordOutcome {
        let purpose = "recording the cancellation of transaction \(transactionID)"
        return try pool.withConnection { (connection) throws(LedgerError) in
            try Self.inTransaction(connection, purpose) { () throws(LedgerError) in
                let (cancelled, isNew) = try Column.cancelling(
                    Self.fetchOne(connection, id: transactionID, forUpdate: true), transactionID: transactionID,
                    at: date)
                guard isNew else { return .alreadyRecorded(cancelled) }
                try connection.execute(
                    "UPDATE transactions SET cancellation_date_ms = $1 WHERE transaction_id = $2",
                    ["\(date.millisecondsSince1970)", transactionID],
                    purpose: "storing the cancellation date of transaction \(transactionID)")
                return .created(cancelled)
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
                WHERE conrelid IN ('transactions'::regclass, 'ledger_counts'::regclass, 'ledger_migrations'::regclass)
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
            ])
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
    private static func parameter(_ value: LedgerValue) -> String? {
        switch value {
        case .integer(let integer): "\(integer)"
        case .text(let text): text
        case .null: nil
        }
    }

    /// Inserts every column of a transaction (parameters in column order) unless its id is stored; the time it is
    /// recorded is the server's.
    private static let insertSQL =
        "INSERT INTO transactions (\(Column.list)) VALUES ("
        + Column.allCases.map { "$\($0.rawValue + 1)" }.joined(separator: ", ")
        + ") ON CONFLICT (transaction_id) DO NOTHING"

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

    private static func fetchOne(
        _ connection: PostgreSQLConnection, id: String, forUpdate: Bool = false
    ) throws(LedgerError) -> LedgerTransaction? {
        try fetch(
            connection, select(where: "transaction_id = $1" + (forUpdate ? " FOR UPDATE" : "")), [id],
            purpose: "reading transaction \(id)"
        ).first
    }

    /// The rows `select` (one of the selects above) returns with `parameters` bound.
    private static func fetch(
        _ connection: PostgreSQLConnection, _ select: String, _ parameters: [String?], purpose: String
    ) throws(LedgerError) -> [LedgerTransaction] {
        let result = try connection.execute(select, parameters, purpose: purpose)
        var transactions: [LedgerTransaction] = []
        for row in result.rows {
            var malformed: LedgerColumn?
            func integer(_ column: LedgerColumn) -> Int64? {
                guard let text = row[Int(column.rawValue)] else { return nil }
                let value: Int64? = column.isFlag ? ["f": 0, "t": 1][text] : Int64(text)
                if value == nil { malformed = column }
                return value
            }
            let transaction = try Column.decode(
                purpose: purpose, text: { row[Int($0.rawValue)] }, integer: integer)
            if let malformed {
                throw LedgerError(.storage, "\(purpose): column \(malformed.name) holds something else than a number")
            }
            transactions.append(transaction)
        }
        return transactions
    }
}
