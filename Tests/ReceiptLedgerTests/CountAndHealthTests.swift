import Foundation
import ReceiptModel
import Testing

@testable import ReceiptLedger

@Suite("The ledger's count and health")
struct CountAndHealthTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test("the count follows every insert and ignores refunds and replays", arguments: StoreKind.allCases)
    func countFollowsWrites(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        #expect(try ledger.count() == 0)
        for index in 0..<25 { _ = try ledger.record(Sample.minimal(id: "\(index)")) }
        _ = try ledger.record(Sample.minimal(id: "3"))
        _ = try ledger.recordCancellation(transactionID: "4", at: ReceiptDate(millisecondsSince1970: 1))
        #expect(try ledger.count() == 25)
        #expect(try store.open().count() == 25, "another ledger reads the same count")
    }

    @Test(
        "the count is read from the rows kept as transactions are written, not by counting them",
        arguments: StoreKind.allCases)
    func countIsKept(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.record(Sample.minimal())
        switch kind {
        case .sqlite: try store.execute("UPDATE ledger_counts SET value = 999")
        case .postgreSQL: try store.execute("UPDATE ledger_counts SET value = CASE shard WHEN 3 THEN 999 ELSE 0 END")
        }
        #expect(try ledger.count() == 999)
    }

    @Test("a ledger of the first schema version gets its count when migrated")
    func migratedCount() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        for index in 0..<7 { _ = try ledger.record(Sample.minimal(id: "\(index)")) }
        ledger.close()
        let database = try SQLiteDatabase(path: directory.path())
        for statement in SchemaRewind.statements(.sqlite, to: 1) {
            try database.execute(statement, purpose: "test")
        }
        database.close()
        let migrated = try SQLiteLedger(path: directory.path())
        #expect(try migrated.count() == 7)
        _ = try migrated.record(Sample.minimal(id: "8"))
        #expect(try migrated.count() == 8)
    }

    @Test(
        "tracing finds the first stored id in the order given, among ten thousand, in one query",
        arguments: StoreKind.allCases)
    func tracing(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.record(Sample.minimal(id: "b", customerID: "second"))
        _ = try ledger.record(Sample.minimal(id: "a", customerID: "first"))
        var ids = (0..<10_000).map { "missing-\($0)" }
        #expect(try ledger.transaction(withAnyOf: ids) == nil)
        ids.insert("a", at: 9_000)
        ids.insert("b", at: 9_500)
        #expect(try ledger.transaction(withAnyOf: ids)?.customerID == "first")
        #expect(try ledger.transaction(withAnyOf: ["b", "a"])?.customerID == "second")
        #expect(try ledger.transaction(withAnyOf: []) == nil)
        #expect(try ledger.transaction(withAnyOf: [#"quote " and \ backslash"#, "a"])?.customerID == "first")
    }

    @Test(
        "a writable ledger passes the writability check; a closed one fails it, saying so without details",
        arguments: StoreKind.allCases)
    func writability(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        try ledger.checkWritable()
        ledger.close()
        let error = #expect(throws: LedgerError.self) { try ledger.checkWritable() }
        #expect(error?.publicDetail == "the ledger is closed")
        ledger.close()
        #expect(throws: LedgerError.self) { try ledger.count() }
    }

    @Test("a storage error's public detail is SQLite's fixed text for its code, naming nothing stored")
    func publicDetail() throws {
        let content = Data(String(repeating: "this is not a database\n", count: 400).utf8)
        try content.write(to: URL(fileURLWithPath: directory.path()))
        let error = #expect(throws: LedgerError.self) { try SQLiteLedger(path: directory.path()) }
        #expect(error?.publicDetail == "file is not a database")
        #expect(error?.message.contains("(SQLite result code 26)") == true)
    }
}
