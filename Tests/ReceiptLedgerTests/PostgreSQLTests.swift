import Foundation
import PostgreSQLTestSupport
import ReceiptModel
import Synchronization
import Testing

@testable import ReceiptLedger

@Suite("PostgreSQL: what only its store does")
struct PostgreSQLTests {
    @Test("six ledgers opened at once on an empty database all start, and each migration is applied once")
    func concurrentMigration() throws {
        let uri = try PostgreSQLTestServer.shared().createDatabase()
        let opened = Mutex<[Result<PostgreSQLLedger, LedgerError>]>([])
        let group = DispatchGroup()
        for _ in 0..<6 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let result = Result { () throws(LedgerError) in try PostgreSQLLedger(uri: uri, connections: 2) }
                opened.withLock { $0.append(result) }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let results = opened.withLock { $0 }
        #expect(results.count == 6)
        for result in results {
            let ledger = try result.get()
            #expect(try ledger.count() == 0)
        }
        let connection = try PostgreSQLConnection(uri: uri, connectTimeoutSeconds: 5)
        defer { connection.close() }
        let rows = try connection.execute(
            "SELECT version, count(*) FROM ledger_migrations GROUP BY version ORDER BY version", purpose: "test")
        #expect(rows.rows == (1...PostgreSQLLedger.schemaVersion).map { ["\($0)", "1"] })
        #expect(try PostgreSQLLedger.storedSchemaVersion(connection) == PostgreSQLLedger.schemaVersion)
    }

    @Test("a database with a newer schema version is refused with storage, naming both versions")
    func newerSchema() throws {
        let uri = try PostgreSQLTestServer.shared().createDatabase()
        try PostgreSQLLedger(uri: uri, connections: 1).close()
        let newer = PostgreSQLLedger.schemaVersion + 1
        let connection = try PostgreSQLConnection(uri: uri, connectTimeoutSeconds: 5)
        defer { connection.close() }
        try connection.execute(
            "INSERT INTO ledger_migrations (version, summary) VALUES ($1, 'from the future')", ["\(newer)"],
            purpose: "test")
        let error = #expect(throws: LedgerError.self) { try PostgreSQLLedger(uri: uri, connections: 1) }
        #expect(error?.code == .storage)
        #expect(error?.message.contains("schema version \(newer)") == true)
        #expect(error?.message.contains("up to \(PostgreSQLLedger.schemaVersion)") == true)
    }

    @Test("a server that cannot be reached is a storage error whose public detail names nothing")
    func unreachable() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("no-server-\(UUID().uuidString)")
        let error = #expect(throws: LedgerError.self) {
            try PostgreSQLLedger(uri: "postgresql:///ledger?host=\(socket.path)&user=nobody", connections: 1)
        }
        #expect(error?.code == .storage)
        #expect(error?.publicDetail == "the ledger's database cannot be reached")
        #expect(error?.message.contains(socket.path) == true, "the message says where it tried")
    }

    @Test("both URI schemes and a host given as a query parameter open the same database")
    func uriForms() throws {
        let uri = try PostgreSQLTestServer.shared().createDatabase()
        let ledger = try PostgreSQLLedger(uri: uri, connections: 1)
        _ = try ledger.record(Sample.full())
        let short = "postgres://" + uri.dropFirst("postgresql://".count)
        #expect(try LedgerLocation(short).open(connections: 1).count() == 1)
        #expect(LedgerLocation(short) == .postgreSQL(uri: short))
        #expect(LedgerLocation("postgresql.sqlite") == .sqlite(path: "postgresql.sqlite"))
        #expect(
            LedgerLocation("postgresql://app:secret@db.example:5432/ledger?sslmode=require").description
                == "postgresql://app@db.example:5432/ledger?sslmode=require")
    }

    @Test("every session commits synchronously in read committed, whatever the database's defaults say")
    func sessionSettings() throws {
        let server = try PostgreSQLTestServer.shared()
        let uri = try server.createDatabase()
        let name = String(try #require(URLComponents(string: uri)?.path.dropFirst()))
        try server.execute(
            "ALTER DATABASE \(name) SET synchronous_commit = off; "
                + "ALTER DATABASE \(name) SET default_transaction_isolation = 'serializable'")
        let ledger = try PostgreSQLLedger(uri: uri, connections: 1)
        let settings = try ledger.withConnection { (connection) throws(LedgerError) in
            try connection.execute(
                "SELECT current_setting('synchronous_commit'), current_setting('default_transaction_isolation')",
                purpose: "test")
        }
        #expect(settings.rows == [["on", "read committed"]])
    }

    @Test("text with a NUL character is refused, not cut short")
    func nulCharacter() throws {
        let ledger = try PostgreSQLLedger(uri: try PostgreSQLTestServer.shared().createDatabase(), connections: 1)
        let error = #expect(throws: LedgerError.self) { try ledger.record(Sample.full(customerID: "a\u{0}b")) }
        #expect(error?.code == .storage)
        #expect(try ledger.count() == 0)
    }

    /// A ledger on a cluster of its own, holding the transaction "before".
    private func ledgerOnPrivateCluster(connections: Int) throws -> (PostgreSQLTestServer, PostgreSQLLedger) {
        let server = try PostgreSQLTestServer.privateCluster()
        let ledger = try PostgreSQLLedger(uri: try server.createDatabase(), connections: connections)
        _ = try ledger.record(Sample.full(id: "before"))
        return (server, ledger)
    }

    @Test("the server stopped and started again: operations fail while it is down, then work without reopening")
    func serverRestart() throws {
        let (server, ledger) = try ledgerOnPrivateCluster(connections: 3)
        try ledger.checkWritable()

        try server.stop()
        let recording = #expect(throws: LedgerError.self) { try ledger.record(Sample.full(id: "during")) }
        #expect(recording?.code == .storage)
        #expect(recording?.publicDetail == "the ledger's database cannot be reached")
        let health = #expect(throws: LedgerError.self) { try ledger.checkWritable() }
        #expect(health?.code == .storage)
        #expect(health?.publicDetail.contains("before") == false)
        #expect(throws: LedgerError.self) { try ledger.count() }

        try server.start()
        try ledger.checkWritable()
        #expect(try ledger.transaction(id: "before") == Sample.full(id: "before"))
        #expect(try ledger.record(Sample.full(id: "after")) == .created(Sample.full(id: "after")))
        #expect(try ledger.transaction(id: "during") == nil)
        #expect(try ledger.count() == 2)
        #expect(try ledger.integrityCheck() == ["ok"])
    }

    @Test("idle connections kept across a restart are replaced: the first operations after it succeed")
    func keptConnectionsReplaced() throws {
        let (server, ledger) = try ledgerOnPrivateCluster(connections: 2)
        try server.stop()
        try server.start()
        // The kept connection is found lost by the operation's first command, which is then run on a new one.
        #expect(try ledger.count() == 1)
        #expect(try ledger.record(Sample.minimal(id: "after")) == .created(Sample.minimal(id: "after")))
    }
}
