import Foundation
import ReceiptCrypto
import ReceiptLedger

/// `receipt ledger copy` and `receipt ledger check`: moving a ledger between stores, and checking one.
enum LedgerCommand {
    static let help = """
        Usage: receipt ledger copy FROM TO [--connections N]
               receipt ledger check LOCATION [--connections N]

        FROM, TO and LOCATION are ledgers as the service's configuration names them: a PostgreSQL URI
        (postgresql://… or postgres://…, with anything libpq takes in it; the password from PGPASSWORD or
        ~/.pgpass) or else the path of a SQLite file. A SQLite FROM or LOCATION must exist; TO is created (with
        the current schema) when it does not.

        copy records every transaction of FROM in TO, then every refund, exactly as the service would: what TO
        already holds identically is left as it is, so running it twice changes nothing. A transaction TO holds
        with different fields stops the copy, naming its id and the fields (exit 1). It ends by comparing both
        sides: the number of transactions and a SHA-256 digest of every stored field of every transaction, in id
        order; exit 0 only when both are equal.

        check prints the schema version, the kept count and the transactions counted one by one, and the
        store's own integrity check (SQLite's integrity_check; PostgreSQL's constraints, trigger and count);
        exit 0 when all is sound, 1 otherwise.

        Exit status: 0 done and equal (copy) or sound (check), 1 a conflict, a difference or a problem found,
        2 usage error, 3 a ledger could not be opened, read or written.

        Options:
          --connections N  The most connections opened to a PostgreSQL ledger (default 2).
        """

    /// The options the command accepts.
    static let options = OptionSpec(valued: ["--connections"], maximumPositionals: 3)

    /// How many transactions are read at a time.
    static let pageSize = 500

    static func run(_ arguments: [String]) throws(CommandFailure) {
        let parsed = try Arguments(arguments, spec: options)
        let connections = try parsed.single("--connections").map { (text) throws(CommandFailure) -> Int in
            guard let value = Int(text), (1...64).contains(value) else {
                throw .usage("--connections must be an integer from 1 to 64, not \"\(text)\"")
            }
            return value
        }
        let positionals = parsed.positionals
        switch positionals.first {
        case "copy":
            guard positionals.count == 3 else { throw .usage("expected 'ledger copy FROM TO'") }
            try copy(from: positionals[1], to: positionals[2], connections: connections ?? 2)
        case "check":
            guard positionals.count == 2 else { throw .usage("expected 'ledger check LOCATION'") }
            try check(positionals[1], connections: connections ?? 2)
        default:
            throw .usage("expected 'ledger copy FROM TO' or 'ledger check LOCATION'")
        }
    }

    /// Opens the ledger at `text`; when `mustExist`, a SQLite file that is not there is an error, not created.
    private static func open(_ text: String, connections: Int, mustExist: Bool) throws(CommandFailure)
        -> any LedgerStore
    {
        let location = LedgerLocation(text)
        if mustExist, case .sqlite(let path) = location, !FileManager.default.fileExists(atPath: path) {
            throw .io("\(path): no such ledger file")
        }
        do {
            return try location.open(connections: connections)
        } catch {
            throw .io("\(location): \(error)")
        }
    }

    /// `body`, its ledger errors as failures naming `location`: conflicts and missing transactions are
    /// rejections (1), storage failures input/output (3).
    private static func ledger<T>(
        _ location: String, _ body: () throws(LedgerError) -> T
    ) throws(CommandFailure) -> T {
        do {
            return try body()
        } catch {
            let message = "\(LedgerLocation(location)): \(error.message)"
            throw error.code == .storage ? .io(message) : .rejected(message)
        }
    }

    private static func copy(from source: String, to target: String, connections: Int) throws(CommandFailure) {
        let from = try open(source, connections: connections, mustExist: true)
        defer { from.close() }
        let to = try open(target, connections: connections, mustExist: false)
        defer { to.close() }
        var transactions = (new: 0, already: 0)
        var refunds = (new: 0, already: 0)
        try forEachTransaction(in: from, source) { (transaction) throws(CommandFailure) in
            let id = transaction.purchase.transactionID
            let recorded = try ledger(target) { () throws(LedgerError) in try to.record(transaction) }
            if case .created = recorded { transactions.new += 1 } else { transactions.already += 1 }
            guard let date = transaction.purchase.cancellationDate else { return }
            let refund = try ledger(target) { () throws(LedgerError) in
                try to.recordCancellation(transactionID: id, at: date)
            }
            if case .created = refund { refunds.new += 1 } else { refunds.already += 1 }
        }
        Files.writeStandardOutput(
            Array(
                ("copied \(transactions.new + transactions.already) transactions (\(transactions.new) new, "
                    + "\(transactions.already) already there) and \(refunds.new + refunds.already) refunds "
                    + "(\(refunds.new) new, \(refunds.already) already there)\n").utf8))
        let (fromCount, fromDigest) = try summary(from, source)
        let (toCount, toDigest) = try summary(to, target)
        Files.writeStandardOutput(
            Array(
                ("FROM: \(fromCount) transactions, SHA-256 \(hex(fromDigest))\n"
                    + "TO:   \(toCount) transactions, SHA-256 \(hex(toDigest))\n").utf8))
        guard fromCount == toCount, constantTimeEquals(fromDigest, toDigest) else {
            throw .rejected(
                "the ledgers differ after the copy: TO also holds transactions or refunds that FROM does not")
        }
    }

    /// Calls `body` with every transaction of `store` (at `location`), in id order, a page at a time.
    private static func forEachTransaction(
        in store: any LedgerStore, _ location: String, _ body: (LedgerTransaction) throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        var after: String?
        while true {
            let page = try ledger(location) { () throws(LedgerError) in
                try store.transactions(after: after, limit: pageSize)
            }
            guard let last = page.last else { return }
            for transaction in page { try body(transaction) }
            after = last.purchase.transactionID
        }
    }

    /// The number of transactions counted one by one, and the SHA-256 chain over their canonical bytes in id
    /// order (each step hashes the previous digest and the next transaction).
    private static func summary(
        _ store: any LedgerStore, _ location: String
    ) throws(CommandFailure) -> (count: Int, digest: [UInt8]) {
        var digest = DigestAlgorithm.sha256.hash([])
        var count = 0
        try forEachTransaction(in: store, location) { (transaction) throws(CommandFailure) in
            digest = DigestAlgorithm.sha256.hash(digest + transaction.canonicalBytes)
            count += 1
        }
        return (count, digest)
    }

    private static func check(_ location: String, connections: Int) throws(CommandFailure) {
        let store = try open(location, connections: connections, mustExist: true)
        defer { store.close() }
        let version = try ledger(location) { () throws(LedgerError) in try store.storedSchemaVersion() }
        let kept = try ledger(location) { () throws(LedgerError) in try store.count() }
        let (counted, digest) = try summary(store, location)
        let integrity = try ledger(location) { () throws(LedgerError) in try store.integrityCheck() }
        Files.writeStandardOutput(
            Array(
                ("schema version: \(version)\n" + "transactions: \(kept) kept, \(counted) counted\n"
                    + "digest: SHA-256 \(hex(digest))\n" + "integrity: \(integrity.joined(separator: "; "))\n").utf8))
        var problems: [String] = []
        if kept != counted { problems.append("the kept count \(kept) is not the \(counted) transactions stored") }
        if integrity != ["ok"] { problems.append("integrity: " + integrity.joined(separator: "; ")) }
        guard problems.isEmpty else { throw .rejected(problems.joined(separator: "; ")) }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
