import Foundation
import ReceiptModel
import Synchronization
import Testing

@testable import ReceiptLedger

/// The outbox of outgoing notifications: queued with the change they announce, claimed for delivery under a lease,
/// their attempts recorded, listed as Apple's notification history lists them.
@Suite("Outbox")
struct OutboxTests {
    static let url = "http://localhost:8080/apple"

    static func outgoing(
        _ uuid: String, url: String = OutboxTests.url, type: String = "ONE_TIME_CHARGE", subtype: String? = nil,
        originalTransactionID: String? = "2000000000000001", testToken: String? = nil,
        signedAt milliseconds: Int64 = 10,
        bundleID: String = Sample.bundleID
    ) -> LedgerOutgoingNotification {
        LedgerOutgoingNotification(
            notificationUUID: uuid, url: url, bundleID: bundleID, notificationType: type, subtype: subtype,
            transactionID: originalTransactionID, originalTransactionID: originalTransactionID, testToken: testToken,
            signedDate: ReceiptDate(millisecondsSince1970: milliseconds), signedPayload: "eyJ.outgoing-\(uuid).sig")
    }

    static func date(_ milliseconds: Int64) -> ReceiptDate {
        ReceiptDate(millisecondsSince1970: milliseconds)
    }

    /// The history of the sample app from the epoch to far ahead, with no other filter.
    static let everything = LedgerOutgoingFilter(bundleID: Sample.bundleID, start: date(0), end: date(1 << 50))

    /// The UUIDs of the whole history `filter` selects (read in pages of 100), oldest signed first.
    static func history(
        _ ledger: any TransactionLedger, _ filter: LedgerOutgoingFilter = everything
    ) throws -> [String] {
        try ledger.outgoingNotifications(filter, after: nil, limit: 100).notifications.map(\.notificationUUID)
    }

    @Test("notifications queued after a new transaction are stored in the same commit", arguments: StoreKind.allCases)
    func queuedAfterNewRecord(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.full()
        let queued = [Self.outgoing("n1"), Self.outgoing("n1", url: "http://localhost:9090/other")]
        #expect(
            try ledger.apply([.record(transaction), .queue(queued)]) == [
                .recorded(.created(transaction)), .queued(queued),
            ])
        #expect(try ledger.outgoingNotifications(Self.everything, after: nil, limit: 10).notifications == queued)
    }

    /// A change that stores nothing new over what ``prepare(_:)`` stored, and whose name says which.
    struct Unchanging: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let change: LedgerChange

        static let all = [
            Unchanging(testDescription: "a transaction already recorded", change: .record(Sample.full())),
            Unchanging(
                testDescription: "a refund already recorded",
                change: .cancel(transactionID: Sample.full().purchase.transactionID, at: CustomerStateTests.refund)),
            Unchanging(
                testDescription: "a withdrawal with no refund",
                change: .withdrawCancellation(transactionID: Sample.minimal().purchase.transactionID)),
            Unchanging(
                testDescription: "renewal info signed earlier",
                change: .renewal(CustomerStateTests.renewal(signedAt: 5))),
            Unchanging(testDescription: "an empty queue", change: .queue([])),
            Unchanging(
                testDescription: "a refused change",
                change: .cancel(transactionID: "unknown", at: CustomerStateTests.refund)),
        ]

        /// Stores what makes every change of ``all`` store nothing new.
        static func prepare(_ ledger: any TransactionLedger) throws {
            _ = try ledger.record(Sample.full())
            _ = try ledger.record(Sample.minimal())
            _ = try ledger.recordCancellation(
                transactionID: Sample.full().purchase.transactionID, at: CustomerStateTests.refund)
            _ = try ledger.recordRenewalInfo(CustomerStateTests.renewal(signedAt: 10))
        }
    }

    @Test(
        "nothing is queued after a change that stored nothing new, so a purchase posted twice is announced once",
        arguments: StoreKind.allCases, Unchanging.all)
    func nothingQueuedAfterUnchanging(_ kind: StoreKind, _ unchanging: Unchanging) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        try Unchanging.prepare(ledger)
        let application = try ledger.apply(
            [unchanging.change, .queue([Self.outgoing("n1")])], notification: CustomerStateTests.notification("in"))
        guard case .applied(let outcomes) = application else {
            Issue.record("not applied: \(application)")
            return
        }
        #expect(outcomes.last == .queued([]))
        #expect(try Self.history(ledger).isEmpty)
    }

    @Test("a queue first in the list is always stored: a TEST notification", arguments: StoreKind.allCases)
    func firstInListAlwaysQueued(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let test = Self.outgoing("t1", type: "TEST", originalTransactionID: nil, testToken: "token-1")
        #expect(try ledger.apply([.queue([test])]) == [.queued([test])])
        #expect(try Self.history(ledger) == ["t1"])
    }

    @Test(
        "a UUID already queued for the URL is refused as a conflict, and nothing of the changes is stored",
        arguments: StoreKind.allCases)
    func duplicateRefused(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.apply([.queue([Self.outgoing("n1")])])
        let error = #expect(throws: LedgerError.self) {
            try ledger.apply([
                .record(Sample.minimal()),
                .queue([Self.outgoing("n2"), Self.outgoing("n1", signedAt: 99)]),
            ])
        }
        #expect(error?.code == .conflict)
        #expect(try ledger.transaction(id: Sample.minimal().purchase.transactionID) == nil)
        #expect(try Self.history(ledger) == ["n1"])
        #expect(
            try ledger.outgoingNotifications(Self.everything, after: nil, limit: 10).notifications == [
                Self.outgoing("n1")
            ])
    }

    @Test(
        "with a notification, a refused queue stores none of its notifications and the other changes are applied",
        arguments: StoreKind.allCases)
    func duplicateRefusedInNotification(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.apply([.queue([Self.outgoing("n1")])])
        let application = try ledger.apply(
            [.record(Sample.minimal()), .queue([Self.outgoing("n2"), Self.outgoing("n1")])],
            notification: CustomerStateTests.notification("in"))
        guard case .applied(let outcomes) = application else {
            Issue.record("not applied: \(application)")
            return
        }
        guard case .refused(let error) = outcomes.last else {
            Issue.record("not refused: \(outcomes)")
            return
        }
        #expect(error.code == .conflict)
        #expect(try ledger.transaction(id: Sample.minimal().purchase.transactionID) == Sample.minimal())
        #expect(try Self.history(ledger) == ["n1"])
    }

    /// A ledger holding `a`, `b` and `c` due at 10, 20 and 30, and `later` due at 1000.
    static func dueLedger(_ store: TestStore) throws -> any TransactionLedger {
        let ledger = store.ledger
        _ = try ledger.apply([
            .queue([
                outgoing("c", signedAt: 30), outgoing("later", signedAt: 1_000), outgoing("a", signedAt: 10),
                outgoing("b", signedAt: 20),
            ])
        ])
        return ledger
    }

    @Test(
        "a claim takes only the notifications due, earliest due first, at most the limit, leased until the date given",
        arguments: StoreKind.allCases)
    func claimTakesDue(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = try Self.dueLedger(store)
        let claimed = try ledger.claimDueNotifications(at: Self.date(25), leaseUntil: Self.date(500), limit: 10)
        #expect(claimed.map(\.notificationUUID) == ["a", "b"])
        #expect(claimed.map(\.nextAttemptDate) == [Self.date(500), Self.date(500)])
        let limited = try ledger.claimDueNotifications(at: Self.date(40), leaseUntil: Self.date(500), limit: 1)
        #expect(limited.map(\.notificationUUID) == ["c"])
        let stored = try ledger.outgoingNotifications(Self.everything, after: nil, limit: 10).notifications
        #expect(stored.map(\.nextAttemptDate) == [Self.date(500), Self.date(500), Self.date(500), Self.date(1_000)])
    }

    @Test(
        "a second claim before the lease ends gets nothing; once it ended, the notification is due again",
        arguments: StoreKind.allCases)
    func claimLease(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = try Self.dueLedger(store)
        _ = try ledger.claimDueNotifications(at: Self.date(10), leaseUntil: Self.date(100), limit: 10)
        #expect(try ledger.claimDueNotifications(at: Self.date(15), leaseUntil: Self.date(200), limit: 10).isEmpty)
        let again = try ledger.claimDueNotifications(at: Self.date(100), leaseUntil: Self.date(200), limit: 10)
        #expect(again.map(\.notificationUUID) == ["b", "c", "a"])
    }

    @Test(
        "two ledgers on the same storage claiming at once never take the same notification",
        arguments: StoreKind.allCases)
    func concurrentClaims(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let queued = (0..<40).map { Self.outgoing("n\($0)", signedAt: Int64($0)) }
        _ = try store.ledger.apply([.queue(queued)])
        let ledgers = [store.ledger, try store.open()]
        let claimed = Mutex<[String]>([])
        let failures = Mutex<[LedgerError]>([])
        let group = DispatchGroup()
        for ledger in ledgers {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for _ in 0..<10 {
                    do throws(LedgerError) {
                        let taken = try ledger.claimDueNotifications(
                            at: Self.date(1_000), leaseUntil: Self.date(1 << 40), limit: 3)
                        claimed.withLock { $0 += taken.map(\.notificationUUID) }
                    } catch {
                        failures.withLock { $0.append(error) }
                    }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(failures.withLock { $0 }.isEmpty)
        let all = claimed.withLock { $0 }
        #expect(all.count == Set(all).count)
        #expect(Set(all) == Set(queued.map(\.notificationUUID)))
    }

    @Test(
        "a successful attempt is kept and leaves the notification delivered and due no more",
        arguments: StoreKind.allCases)
    func successfulAttempt(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = try Self.dueLedger(store)
        let attempt = LedgerDeliveryAttempt(date: Self.date(11), result: .success, httpStatus: 200)
        let stored = try ledger.recordDeliveryAttempt(
            notificationUUID: "a", url: Self.url, attempt: attempt, nextAttemptDate: nil)
        #expect(stored.attempts == [attempt])
        #expect(stored.nextAttemptDate == nil)
        #expect(stored.isDelivered)
        let claimed = try ledger.claimDueNotifications(at: Self.date(20), leaseUntil: Self.date(90), limit: 10)
        #expect(claimed.map(\.notificationUUID) == ["b"])
    }

    @Test(
        "failed attempts are kept oldest first and the notification is due again at the next attempt given",
        arguments: StoreKind.allCases)
    func failedAttempts(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = try Self.dueLedger(store)
        let first = LedgerDeliveryAttempt(date: Self.date(11), result: .unsuccessfulHTTPResponseCode, httpStatus: 503)
        let second = LedgerDeliveryAttempt(date: Self.date(70), result: .timedOut)
        _ = try ledger.recordDeliveryAttempt(
            notificationUUID: "a", url: Self.url, attempt: first, nextAttemptDate: Self.date(60))
        let stored = try ledger.recordDeliveryAttempt(
            notificationUUID: "a", url: Self.url, attempt: second, nextAttemptDate: Self.date(600))
        #expect(stored.attempts == [first, second])
        #expect(!stored.isDelivered)
        let claimed = try ledger.claimDueNotifications(at: Self.date(600), leaseUntil: Self.date(900), limit: 10)
        #expect(claimed.map(\.notificationUUID) == ["b", "c", "a"])
        #expect(claimed.last?.attempts == [first, second])
    }

    @Test(
        "recording an attempt for a notification not queued for that URL throws notFound", arguments: StoreKind.allCases
    )
    func attemptNotFound(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = try Self.dueLedger(store)
        let error = #expect(throws: LedgerError.self) {
            try ledger.recordDeliveryAttempt(
                notificationUUID: "a", url: "http://localhost:1/elsewhere",
                attempt: LedgerDeliveryAttempt(date: Self.date(11), result: .success), nextAttemptDate: nil)
        }
        #expect(error?.code == .notFound)
    }

    @Test(
        "the TEST notifications of a token are found by it, one per URL in URL order; another token finds none",
        arguments: StoreKind.allCases)
    func testTokenLookup(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let test = { (uuid: String, url: String, token: String) in
            Self.outgoing(uuid, url: url, type: "TEST", originalTransactionID: nil, testToken: token)
        }
        let queued = [test("t1", "http://z.example/apple", "token-1"), test("t1", "http://a.example/apple", "token-1")]
        _ = try ledger.apply([.queue(queued)])
        _ = try ledger.apply([.queue([test("t2", "http://a.example/apple", "token-2"), Self.outgoing("n1")])])
        #expect(try ledger.outgoingNotifications(testToken: "token-1") == queued.reversed())
        #expect(try ledger.outgoingNotifications(testToken: "token-3").isEmpty)
    }

    /// One filter of the history, and the notifications of ``historyLedger(_:)`` it selects.
    struct HistoryFilter: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let expected: [String]
        let change: @Sendable (inout LedgerOutgoingFilter) -> Void

        static let all = [
            HistoryFilter(testDescription: "the app", expected: ["buy", "renew", "refund"]) { _ in },
            HistoryFilter(testDescription: "signed at or after the start", expected: ["renew", "refund"]) {
                $0.start = OutboxTests.date(20)
            },
            HistoryFilter(testDescription: "signed before the end", expected: ["buy", "renew"]) {
                $0.end = OutboxTests.date(30)
            },
            HistoryFilter(testDescription: "the type", expected: ["renew"]) { $0.notificationType = "DID_RENEW" },
            HistoryFilter(testDescription: "the subtype", expected: ["buy"]) { $0.subtype = "INITIAL_BUY" },
            HistoryFilter(testDescription: "the original transaction", expected: ["renew"]) {
                $0.originalTransactionID = "2000000000000002"
            },
        ]
    }

    /// A ledger holding a purchase, a renewal and a refund of the sample app signed at 10, 20 and 30, and a
    /// purchase of another app signed at 15.
    static func historyLedger(_ store: TestStore) throws -> any TransactionLedger {
        let ledger = store.ledger
        _ = try ledger.apply([
            .queue([
                outgoing("buy", type: "SUBSCRIBED", subtype: "INITIAL_BUY", signedAt: 10),
                outgoing("other", bundleID: "com.example.other"),
                outgoing("renew", type: "DID_RENEW", originalTransactionID: "2000000000000002", signedAt: 20),
                outgoing("refund", type: "REFUND", signedAt: 30),
            ])
        ])
        return ledger
    }

    @Test("the history selects by each of its filters", arguments: StoreKind.allCases, HistoryFilter.all)
    func historyFilter(_ kind: StoreKind, _ filter: HistoryFilter) throws {
        let store = try TestStore(kind)
        let ledger = try Self.historyLedger(store)
        var selected = Self.everything
        filter.change(&selected)
        #expect(try Self.history(ledger, selected) == filter.expected)
    }

    @Test(
        "only failures lists those never attempted and those whose last attempt failed", arguments: StoreKind.allCases)
    func historyOnlyFailures(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = try Self.historyLedger(store)
        let failure = LedgerDeliveryAttempt(date: Self.date(40), result: .noResponse)
        let success = LedgerDeliveryAttempt(date: Self.date(50), result: .success, httpStatus: 200)
        _ = try ledger.recordDeliveryAttempt(
            notificationUUID: "buy", url: Self.url, attempt: failure, nextAttemptDate: Self.date(50))
        _ = try ledger.recordDeliveryAttempt(
            notificationUUID: "buy", url: Self.url, attempt: success, nextAttemptDate: nil)
        _ = try ledger.recordDeliveryAttempt(
            notificationUUID: "renew", url: Self.url, attempt: failure, nextAttemptDate: Self.date(50))
        var failures = Self.everything
        failures.onlyFailures = true
        #expect(try Self.history(ledger, failures) == ["renew", "refund"])
    }

    @Test(
        "the history pages oldest signed first, then in the order queued, through the cursor to a last page",
        arguments: StoreKind.allCases)
    func historyPaging(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        for (uuid, signed) in [("q1", 30), ("q2", 10), ("q3", 20), ("q4", 10), ("q5", 40)] {
            _ = try ledger.apply([.queue([Self.outgoing(uuid, signedAt: Int64(signed))])])
        }
        var pages: [[String]] = []
        var after: Int64?
        repeat {
            let page = try ledger.outgoingNotifications(Self.everything, after: after, limit: 2)
            pages.append(page.notifications.map(\.notificationUUID))
            after = page.next
        } while after != nil && pages.count < 5
        #expect(pages == [["q2", "q4"], ["q3", "q1"], ["q5"]])
    }

    @Test(
        "copying an outgoing notification stores it exactly as given, attempts included, once",
        arguments: StoreKind.allCases)
    func copyOutgoing(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = try #require(store.ledger as? any LedgerStore)
        var copied = Self.outgoing("n1")
        copied.attempts = [LedgerDeliveryAttempt(date: Self.date(11), result: .success, httpStatus: 204)]
        copied.nextAttemptDate = nil
        #expect(try ledger.copyOutgoingNotification(copied))
        #expect(try !ledger.copyOutgoingNotification(Self.outgoing("n1")))
        #expect(try ledger.outgoingNotifications(afterSequence: nil, limit: 10).map(\.notification) == [copied])
    }

    @Test(
        "a ledger of the previous schema migrates, keeps its rows and gets an outbox", arguments: StoreKind.allCases)
    func migration(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        _ = try store.ledger.record(Sample.fullWithoutToken)
        _ = try store.ledger.apply([.renewal(CustomerStateTests.renewal(signedAt: 1))], notification: nil)
        try store.rewindToPreviousSchema()
        let migrated = try store.open()
        #expect(try migrated.transaction(id: Sample.full().purchase.transactionID) == Sample.fullWithoutToken)
        #expect(try migrated.renewalInfo(originalTransactionIDs: ["2000000000000001"]).count == 1)
        #expect(try migrated.apply([.queue([Self.outgoing("n1")])]) == [.queued([Self.outgoing("n1")])])
        #expect(try store.integrityCheck(migrated) == ["ok"])
    }
}
