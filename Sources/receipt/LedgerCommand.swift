import ReceiptCrypto
import ReceiptDER
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

        copy records every transaction of FROM in TO, then every refund, exactly as the service would, then
        every subscription's renewal info, every notification (with what it did, oldest first) and every
        outgoing notification of the outbox (with its attempts and next attempt, oldest queued first): what TO
        already holds identically is left as it is, so running it twice changes nothing. A transaction TO holds
        with different fields stops the copy, naming its id and the fields (exit 1). It ends by comparing both
        sides: the number of transactions, renewal infos, notifications and outgoing notifications and a SHA-256
        digest of every stored field of every one of them (transactions and renewal info in id order,
        notifications and outgoing notifications oldest first); exit 0 only when both are equal.

        check prints the schema version, the kept count and the transactions counted one by one, the renewal
        infos, notifications and outgoing notifications stored, the digest copy compares, and the
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
        if mustExist, case .sqlite(let path) = location, !Files.exists(path) {
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
        let total = try ledger(source) { () throws(LedgerError) in try from.count() }
        let progress = Progress(label: "receipt ledger copy", unit: "transactions", total: total)
        defer { progress?.finish() }
        try forEachTransaction(in: from, source) { (transaction) throws(CommandFailure) in
            progress?.advance()
            let id = transaction.purchase.transactionID
            let recorded = try ledger(target) { () throws(LedgerError) in try to.record(transaction) }
            if case .created = recorded { transactions.new += 1 } else { transactions.already += 1 }
            guard let date = transaction.purchase.cancellationDate else { return }
            let refund = try ledger(target) { () throws(LedgerError) in
                try to.recordCancellation(transactionID: id, at: date)
            }
            if case .created = refund { refunds.new += 1 } else { refunds.already += 1 }
        }
        progress?.finish()
        var notifications = (new: 0, already: 0)
        var renewals = 0
        try forEachRenewalInfo(in: from, source) { (info) throws(CommandFailure) in
            _ = try ledger(target) { () throws(LedgerError) in try to.recordRenewalInfo(info) }
            renewals += 1
        }
        try forEachNotification(in: from, source) { (notification) throws(CommandFailure) in
            let stored = try ledger(target) { () throws(LedgerError) in try to.copyNotification(notification) }
            if stored { notifications.new += 1 } else { notifications.already += 1 }
        }
        var outgoing = (new: 0, already: 0)
        try forEachOutgoingNotification(in: from, source) { (notification) throws(CommandFailure) in
            let stored = try ledger(target) { () throws(LedgerError) in try to.copyOutgoingNotification(notification) }
            if stored { outgoing.new += 1 } else { outgoing.already += 1 }
        }
        Files.writeStandardOutput(
            Array(
                ("copied \(transactions.new + transactions.already) transactions (\(transactions.new) new, "
                    + "\(transactions.already) already there) and \(refunds.new + refunds.already) refunds "
                    + "(\(refunds.new) new, \(refunds.already) already there)\n"
                    + "copied \(renewals) renewal infos and \(notifications.new + notifications.already) notifications "
                    + "(\(notifications.new) new, \(notifications.already) already there)\n"
                    + "copied \(outgoing.new + outgoing.already) outgoing notifications (\(outgoing.new) new, "
                    + "\(outgoing.already) already there)\n").utf8))
        let fromSummary = try summary(from, source)
        let toSummary = try summary(to, target)
        Files.writeStandardOutput(
            Array(("FROM: \(fromSummary.description)\n" + "TO:   \(toSummary.description)\n").utf8))
        guard fromSummary.counts == toSummary.counts, constantTimeEquals(fromSummary.digest, toSummary.digest) else {
            throw .rejected(
                "the ledgers differ after the copy: TO also holds transactions, refunds, renewal info, "
                    + "notifications or outgoing notifications that FROM does not")
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

    /// Calls `body` with every renewal info of `store` (at `location`), in id order, a page at a time.
    private static func forEachRenewalInfo(
        in store: any LedgerStore, _ location: String, _ body: (LedgerRenewalInfo) throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        var after: String?
        while true {
            let page = try ledger(location) { () throws(LedgerError) in
                try store.renewalInfos(after: after, limit: pageSize)
            }
            guard let last = page.last else { return }
            for info in page { try body(info) }
            after = last.originalTransactionID
        }
    }

    /// Calls `body` with every notification of `store` (at `location`), oldest stored first, a page at a time.
    private static func forEachNotification(
        in store: any LedgerStore, _ location: String, _ body: (LedgerNotification) throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        try forEachInSequence(location, store.notifications(afterSequence:limit:), body)
    }

    /// Calls `body` with every outgoing notification of `store` (at `location`), oldest queued first, a page at a
    /// time.
    private static func forEachOutgoingNotification(
        in store: any LedgerStore, _ location: String,
        _ body: (LedgerOutgoingNotification) throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        try forEachInSequence(location, store.outgoingNotifications(afterSequence:limit:), body)
    }

    /// Calls `body` with every row that `page` (rows after a sequence number, at most a limit of them, in their
    /// order) lists at `location`, a page at a time.
    private static func forEachInSequence<Row>(
        _ location: String,
        _ page: (Int64?, Int) throws(LedgerError) -> [(sequence: Int64, notification: Row)],
        _ body: (Row) throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        var after: Int64?
        while true {
            let rows = try ledger(location) { () throws(LedgerError) in try page(after, pageSize) }
            guard let last = rows.last else { return }
            for (_, row) in rows { try body(row) }
            after = last.sequence
        }
    }

    /// What a whole store holds, counted one by one, and the SHA-256 chain over the canonical bytes of its
    /// transactions in id order, then its renewal infos in id order, then its notifications oldest first, then its
    /// outgoing notifications oldest queued first (each step hashes the previous digest, a byte saying which of the
    /// four follows, and its bytes).
    private struct Summary: CustomStringConvertible {
        var counts = (transactions: 0, renewalInfos: 0, notifications: 0, outgoingNotifications: 0)
        var digest = DigestAlgorithm.sha256.hash([])

        mutating func add(_ kind: UInt8, _ bytes: [UInt8]) {
            digest = DigestAlgorithm.sha256.hash(digest + [kind] + bytes)
        }

        var description: String {
            "\(counts.transactions) transactions, \(counts.renewalInfos) renewal infos, "
                + "\(counts.notifications) notifications, \(counts.outgoingNotifications) outgoing notifications, "
                + "SHA-256 \(Hex.encode(digest))"
        }
    }

    private static func summary(_ store: any LedgerStore, _ location: String) throws(CommandFailure) -> Summary {
        var summary = Summary()
        try forEachTransaction(in: store, location) { (transaction) throws(CommandFailure) in
            summary.add(1, transaction.canonicalBytes)
            summary.counts.transactions += 1
        }
        try forEachRenewalInfo(in: store, location) { (info) throws(CommandFailure) in
            summary.add(2, info.canonicalBytes)
            summary.counts.renewalInfos += 1
        }
        try forEachNotification(in: store, location) { (notification) throws(CommandFailure) in
            summary.add(3, notification.canonicalBytes)
            summary.counts.notifications += 1
        }
        try forEachOutgoingNotification(in: store, location) { (notification) throws(CommandFailure) in
            summary.add(4, notification.canonicalBytes)
            summary.counts.outgoingNotifications += 1
        }
        return summary
    }

    private static func check(_ location: String, connections: Int) throws(CommandFailure) {
        let store = try open(location, connections: connections, mustExist: true)
        defer { store.close() }
        let version = try ledger(location) { () throws(LedgerError) in try store.storedSchemaVersion() }
        let kept = try ledger(location) { () throws(LedgerError) in try store.count() }
        let summary = try summary(store, location)
        let counted = summary.counts.transactions
        let integrity = try ledger(location) { () throws(LedgerError) in try store.integrityCheck() }
        Files.writeStandardOutput(
            Array(
                ("schema version: \(version)\n" + "transactions: \(kept) kept, \(counted) counted\n"
                    + "renewal infos: \(summary.counts.renewalInfos)\n"
                    + "notifications: \(summary.counts.notifications)\n"
                    + "outgoing notifications: \(summary.counts.outgoingNotifications)\n"
                    + "digest: SHA-256 \(Hex.encode(summary.digest))\n"
                    + "integrity: \(integrity.joined(separator: "; "))\n")
                    .utf8))
        var problems: [String] = []
        if kept != counted { problems.append("the kept count \(kept) is not the \(counted) transactions stored") }
        if integrity != ["ok"] { problems.append("integrity: " + integrity.joined(separator: "; ")) }
        guard problems.isEmpty else { throw .rejected(problems.joined(separator: "; ")) }
    }
}
