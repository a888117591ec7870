import Foundation
import ReceiptModel
import Testing

@testable import ReceiptLedger

@Suite("The database file")
struct StorageTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// The first column of the first row `sql` returns, read over a connection of its own.
    private func rawQuery(_ sql: String) throws -> String? {
        let database = try SQLiteDatabase(path: directory.path())
        defer { database.close() }
        return try database.withStatement(sql, purpose: "test query") { (statement) throws(LedgerError) in
            try statement.step() ? statement.text(at: 0) : nil
        }
    }

    @Test("transactions survive closing the ledger and opening the file again")
    func reopening() throws {
        let transaction = Sample.full()
        let first = try SQLiteLedger(path: directory.path())
        _ = try first.record(transaction)
        _ = try first.recordCancellation(
            transactionID: transaction.purchase.transactionID, at: ReceiptDate(millisecondsSince1970: 5))
        first.close()
        let second = try SQLiteLedger(path: directory.path())
        #expect(try second.count() == 1)
        #expect(
            try second.transaction(id: transaction.purchase.transactionID)?.purchase.cancellationDate?
                .millisecondsSince1970 == 5)
    }

    @Test("a second ledger on the same file sees the first one's writes")
    func twoConnections() throws {
        let first = try SQLiteLedger(path: directory.path())
        let second = try SQLiteLedger(path: directory.path())
        let transaction = Sample.full()
        _ = try first.record(transaction)
        #expect(try second.record(transaction) == .alreadyRecorded(transaction))
    }

    @Test("the file is in WAL journal mode, as another connection sees it")
    func walMode() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        #expect(try rawQuery("PRAGMA journal_mode") == "wal")
        ledger.close()
    }

    @Test("a new file gets the current schema version")
    func newFileVersion() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        ledger.close()
        #expect(try rawQuery("PRAGMA user_version") == String(SQLiteLedger.schemaVersion))
    }

    @Test("a file with a newer schema version is refused with storage, naming both versions")
    func newerSchema() throws {
        try SQLiteLedger(path: directory.path()).close()
        let database = try SQLiteDatabase(path: directory.path())
        try database.execute("PRAGMA user_version = 7", purpose: "test")
        database.close()
        let error = #expect(throws: LedgerError.self) { try SQLiteLedger(path: directory.path()) }
        #expect(error?.code == .storage)
        #expect(error?.message.contains("schema version 7") == true)
        #expect(error?.message.contains("up to \(SQLiteLedger.schemaVersion)") == true)
    }

    @Test("a file that is not a SQLite database is refused with storage and left as it was")
    func notADatabase() throws {
        let content = Data(String(repeating: "this is not a database\n", count: 400).utf8)
        try content.write(to: URL(fileURLWithPath: directory.path()))
        let error = #expect(throws: LedgerError.self) { try SQLiteLedger(path: directory.path()) }
        #expect(error?.code == .storage)
        #expect(error?.message.contains("not a database") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path())) == content)
    }

    @Test("a path in a directory that does not exist is refused with storage")
    func missingDirectory() throws {
        let error = #expect(throws: LedgerError.self) {
            try SQLiteLedger(path: directory.path("missing/ledger.sqlite"))
        }
        #expect(error?.code == .storage)
    }

    @Test("the integrity check of a ledger in use reports ok")
    func integrity() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        for index in 0..<50 {
            _ = try ledger.record(Sample.full(id: "\(index)"))
        }
        #expect(try ledger.integrityCheck() == ["ok"])
    }

    @Test("every call after close throws storage: ledger is closed")
    func afterClose() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        _ = try ledger.record(Sample.full())
        ledger.close()
        let date = ReceiptDate(millisecondsSince1970: 0)
        let calls: [(String, () throws -> Void)] = [
            ("record", { _ = try ledger.record(Sample.minimal()) }),
            ("recordCancellation", { _ = try ledger.recordCancellation(transactionID: "1", at: date) }),
            ("transaction", { _ = try ledger.transaction(id: "1") }),
            ("transaction(withAnyOf:)", { _ = try ledger.transaction(withAnyOf: ["1"]) }),
            ("transactions", { _ = try ledger.transactions(customerID: "c", bundleID: "b") }),
            ("count", { _ = try ledger.count() }),
            ("integrityCheck", { _ = try ledger.integrityCheck() }),
        ]
        for (name, call) in calls {
            let error = #expect(throws: LedgerError.self, "\(name)") { try call() }
            #expect(error == LedgerError(.storage, "ledger is closed"), "\(name)")
        }
    }

    @Test("closing a ledger that has read and written closes the file: SQLite checkpoints it and removes the WAL")
    func closeReleasesFile() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        _ = try ledger.record(Sample.full())
        _ = try ledger.transaction(id: Sample.full().purchase.transactionID)
        _ = try ledger.count()
        #expect(FileManager.default.fileExists(atPath: directory.path("ledger.sqlite-wal")))
        ledger.close()
        #expect(!FileManager.default.fileExists(atPath: directory.path("ledger.sqlite-wal")))
    }

    @Test("a statement's purpose is worked out only for an error's message: never when the statement succeeds")
    func purposeOnlyForErrors() throws {
        let database = try SQLiteDatabase(path: directory.path())
        let purposes = PurposeCounter()
        let one = try database.withStatement("SELECT 1", purpose: purposes.next("selecting one")) {
            (statement) throws(LedgerError) in try statement.step() ? statement.int64(at: 0) : nil
        }
        #expect(one == 1)
        #expect(purposes.count == 0)
        let failed = #expect(throws: LedgerError.self) {
            try database.withStatement("SELECT FROM nowhere", purpose: purposes.next("selecting from nowhere")) {
                (statement) throws(LedgerError) in try statement.step()
            }
        }
        #expect(failed?.message.hasPrefix("selecting from nowhere: ") == true)
        database.close()
        let closed = #expect(throws: LedgerError.self) {
            try database.withStatement("SELECT 1", purpose: purposes.next("selecting after close")) {
                (statement) throws(LedgerError) in try statement.step()
            }
        }
        #expect(closed?.message == "selecting after close: the database connection is closed")
    }

    @Test("closing twice is harmless")
    func closeTwice() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        ledger.close()
        ledger.close()
        #expect(throws: LedgerError(.storage, "ledger is closed")) { try ledger.count() }
    }
}

/// Hands out purposes and counts how many were asked for.
private final class PurposeCounter {
    private(set) var count = 0

    func next(_ purpose: String) -> String {
        count += 1
        return purpose
    }
}
